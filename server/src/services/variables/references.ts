import type { Project, UnresolvedReferencesBody } from '@svcenv/contract';
import { closestName } from '@svcenv/contract';
import { cachedRows } from '../../db/epoch-cache.js';
import { AppError, UnresolvedReferencesError } from '../../lib/errors.js';
import {
  containsReference,
  type EnvLookup,
  type RefTarget,
  type Resolution,
  type ResolveOptions,
  resolveAll,
  type SourceEnv,
} from '../../lib/references.js';
import {
  authorizeEnv,
  authorizeProject,
  type EnvFull,
  envPermission,
  type ProjectAccess,
  requireEnv,
} from '../core/authz.js';
import type { Ctx } from '../core/context.js';
import type { Dependency } from '../core/deps.js';
import type { Permission } from '../core/principal.js';
import { openEnvValues, type PlainVar, sourceEnv, type VarType } from '../core/values.js';
import { projectIdOf } from '../projects/project-ref.js';
import { listProjects } from '../projects/projects.js';

/**
 * D49: references resolved as their reader may see them (ADR 0017). lib/references.ts resolves; this module
 * answers its lookups: `${env.KEY}` in the referring environment's project, `${slug.env.KEY}` in the caller's
 * workspace (services/projects/project-ref.ts), each environment reached through `authorizeEnv` with `read`, so the
 * token's scope, environment list and project restriction and the user's roles and overrides apply exactly as
 * they do to a direct read. A refusal (404 or 403 there) is only "cannot resolve": which of the two is never
 * said. Only environments a variable actually reaches are read and decrypted.
 */

/** What a resolution for a reader may narrow or see differently (D67). */
export interface ReaderOptions extends ResolveOptions {
  /** Environments to read as given rather than as stored (a write's result, before it is written). */
  overlays?: ReadonlyMap<string, EnvValues>;
}

export interface EnvValues {
  vars: ReadonlyMap<string, PlainVar>;
  broken?: ReadonlyMap<string, unknown> | undefined;
}

export interface ReaderResolution {
  resolved: Map<string, Resolution>;
  /** Every other environment the resolution asked for, in the order asked. */
  dependencies: Dependency[];
  /** The reader's permission on each environment read, the root included, by id (D26 on reveal). */
  permissions: Map<string, Permission>;
}

const isRefusal = (e: unknown) => e instanceof AppError && (e.code === 'NOT_FOUND' || e.code === 'FORBIDDEN');

/** The target of a reference for this reader, through the same checks as a direct read; null when refused. */
async function reach(
  ctx: Ctx,
  target: { slug: string | null; projectId: string | null; env: string },
  readOnly: boolean,
): Promise<{ access: ProjectAccess; env: EnvFull } | null> {
  try {
    // A slug is looked up in the caller's workspace only: another workspace's project is simply not found.
    const projectId = target.slug !== null ? await projectIdOf(ctx, target.slug) : target.projectId!;
    return await authorizeEnv(ctx, { projectId, env: target.env, need: 'read', readOnly });
  } catch (e) {
    if (isRefusal(e)) return null;
    throw e;
  }
}

/**
 * Resolves the variables of `root` (already authorized and decrypted by the caller) for the caller: other
 * environments are read only when reached and only if the caller may read them. `readOnly`: see
 * EnvRequest.readOnly (pull and export).
 */
export async function resolveForReader(
  ctx: Ctx,
  root: {
    access: ProjectAccess;
    env: EnvFull;
    vars: ReadonlyMap<string, PlainVar>;
    broken?: ReadonlyMap<string, unknown> | undefined;
  },
  readOnly: boolean,
  options: ReaderOptions = {},
): Promise<ReaderResolution> {
  const rootSource = sourceEnv(root.env.id, root.access.project.id, root.vars, root.broken);
  const byId = new Map<string, SourceEnv>([[root.env.id, rootSource]]);
  const permissions = new Map<string, Permission>([[root.env.id, envPermission(root.access, root.env)]]);
  const dependencies: Dependency[] = [];
  const lookup: EnvLookup = async (from, target) => {
    const dep = { slug: target.project, projectId: target.project === null ? from.project : null, env: target.env };
    const found = await reach(ctx, dep, readOnly);
    if (!found) {
      dependencies.push({ ...dep, envId: null, revision: 0 });
      return null;
    }
    const { access, env } = found;
    dependencies.push({ ...dep, envId: env.id, revision: Number(env.revision) });
    let source = byId.get(env.id);
    if (!source) {
      const { vars, broken } = options.overlays?.get(env.id) ?? (await openEnvValues(ctx.deps, access, env));
      source = sourceEnv(env.id, access.project.id, vars, broken);
      byId.set(env.id, source);
      permissions.set(env.id, envPermission(access, env));
    }
    return source;
  };
  const resolved = await resolveAll(rootSource, lookup, options);
  return { resolved, dependencies, permissions };
}

/** The environments a dependency list read, and their cache key, computed once per list (a cached pull's). */
const readIds = new WeakMap<readonly Dependency[], { list: string[]; key: string }>();

/**
 * Whether a resolution made earlier (maybe for another reader) is the one this caller would make now: every
 * environment it read still at the same revision, under the same name and project (slug), and readable by this
 * caller; every one it was refused still refused to this caller. One query for all the environments read;
 * the permission through authz.ts (`requireEnv`), per project. Answers the caller's permissions on them, or
 * null when the resolution must be made again.
 */
export async function dependenciesHold(
  ctx: Ctx,
  root: { access: ProjectAccess; env: EnvFull },
  dependencies: readonly Dependency[],
  readOnly: boolean,
): Promise<Map<string, Permission> | null> {
  const permissions = new Map<string, Permission>([[root.env.id, envPermission(root.access, root.env)]]);
  if (dependencies.length === 0) return permissions;
  const { db } = ctx.deps;
  let ids = readIds.get(dependencies);
  if (!ids) {
    const list = [...new Set(dependencies.flatMap((d) => (d.envId === null ? [] : [d.envId])))].sort();
    ids = { list, key: `reached|${list.join(',')}` };
    readIds.set(dependencies, ids);
  }
  const { list } = ids;
  const rows =
    list.length === 0
      ? []
      : await cachedRows(
          db,
          ids.key,
          () =>
            db
              .selectFrom('environments as e')
              .innerJoin('projects as p', 'p.id', 'e.project_id')
              .select(['e.id', 'e.name', 'e.protected', 'e.revision', 'e.project_id', 'p.slug', 'p.workspace_id'])
              .where('e.id', 'in', list)
              .execute(),
          readOnly ? ctx.epoch : undefined,
        );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const accesses = new Map<string, ProjectAccess | null>([[root.access.project.id, root.access]]);
  for (const d of dependencies) {
    if (d.envId === null) {
      // Refused then: still refused to this caller? (Rare: such a pull fails with REFERENCE_FORBIDDEN.)
      if ((await reach(ctx, d, readOnly)) !== null) return null;
      continue;
    }
    const row = byId.get(d.envId);
    if (!row || row.name !== d.env || Number(row.revision) !== d.revision) return null;
    if (
      d.slug !== null
        ? row.slug !== d.slug || row.workspace_id !== ctx.principal.workspaceId
        : row.project_id !== d.projectId
    ) {
      return null;
    }
    let access = accesses.get(row.project_id);
    if (access === undefined) {
      try {
        access = await authorizeProject(ctx, row.project_id, 'visible', readOnly);
      } catch (e) {
        if (!isRefusal(e)) throw e;
        access = null;
      }
      accesses.set(row.project_id, access);
    }
    if (access === null) return null;
    try {
      requireEnv(access, row, 'read');
    } catch (e) {
      if (isRefusal(e)) return null;
      throw e;
    }
    permissions.set(row.id, envPermission(access, row));
  }
  return permissions;
}

/**
 * D26 across environments: whether a resolved value is shown as `***`. Masked: when it used any secret.
 * Revealed (the caller has write on the environment listed or exported): when it used a secret of an
 * environment where the caller could not reveal it (write permission, D23) (ADR 0017).
 */
export function masksResolution(
  r: Extract<Resolution, { ok: true }>,
  reveal: boolean,
  permissions: ReadonlyMap<string, Permission>,
): boolean {
  if (!reveal) return r.secretsFrom.size > 0;
  for (const id of r.secretsFrom) if (permissions.get(id) !== 'write') return true;
  return false;
}

/** One environment's part of a write, as D67 checks it. */
export interface WriteToCheck {
  env: EnvFull;
  set: readonly { key: string; value: string; type?: VarType | undefined }[];
  delete?: readonly string[];
}

export type Unresolved = UnresolvedReferencesBody['unresolved'][number];

/**
 * D67: the written values whose references would not resolve for the writer once the write is done, in the
 * order written: what a pull would refuse (cycle, limit, an environment or project that is missing or that the
 * writer may not read, an undecryptable value), and a reference, written in the value itself without a
 * fallback, to a variable that does not exist (D25 would render it empty). Every environment of `writes` is
 * read as it would be after the write, also where another one reaches it, so one bulk write may add `A=${B}`
 * and `B=x` together. Only written values are checked: a broken value elsewhere is not this write's doing.
 * Messages suggest only environments and projects the writer can read (ADR 0018).
 */
export async function unresolvedAfterWrite(
  ctx: Ctx,
  access: ProjectAccess,
  writes: readonly WriteToCheck[],
): Promise<Unresolved[]> {
  const checked = writes.map((w) => ({
    ...w,
    keys: w.set.filter((i) => containsReference(i.value)).map((i) => i.key),
  }));
  if (checked.every((w) => w.keys.length === 0)) return [];
  const overlays = new Map<string, EnvValues>();
  for (const w of writes) {
    const { vars, broken } = await openEnvValues(ctx.deps, access, w.env);
    const next = new Map(vars);
    const nextBroken = new Map(broken);
    for (const item of w.set) {
      const type = item.type ?? (next.get(item.key) ?? nextBroken.get(item.key))?.type ?? 'secret';
      next.set(item.key, { value: item.value, type, updatedAt: '', expiresAt: null });
      nextBroken.delete(item.key);
    }
    for (const key of w.delete ?? []) {
      next.delete(key);
      nextBroken.delete(key);
    }
    overlays.set(w.env.id, { vars: next, broken: nextBroken });
  }
  const out: Unresolved[] = [];
  let visible: Promise<Project[]> | undefined;
  const projects = () => {
    visible ??= listProjects(ctx);
    return visible;
  };
  for (const w of checked) {
    if (w.keys.length === 0) continue;
    const missing = new Map<string, { target: RefTarget; found: SourceEnv }>();
    const { resolved } = await resolveForReader(ctx, { access, env: w.env, ...overlays.get(w.env.id)! }, false, {
      keys: w.keys,
      overlays,
      onMissing: (from, key, target, found) => {
        if (from.id === w.env.id && !missing.has(key)) missing.set(key, { target, found });
      },
    });
    for (const key of w.keys) {
      const r = resolved.get(key)!;
      const at = { key, env: w.env.name };
      if (!r.ok) {
        const message =
          r.code === 'REFERENCE_FORBIDDEN' && r.refused
            ? await refusedMessage(key, r.refused, w.env.id, await projects())
            : r.code === 'CIRCULAR_REFERENCE'
              ? `${key}: circular reference: following its references leads back to a variable already on the way`
              : r.message;
        out.push({ ...at, code: r.code, message });
        continue;
      }
      const miss = missing.get(key);
      if (miss) out.push({ ...at, code: 'REFERENCE_MISSING', message: missingMessage(key, miss.target, miss.found) });
    }
  }
  return out;
}

/** D67: refuses the write (422 UNRESOLVED_REFERENCES, nothing written) when unresolvedAfterWrite finds any. */
export async function refuseUnresolved(ctx: Ctx, access: ProjectAccess, writes: readonly WriteToCheck[]) {
  const unresolved = await unresolvedAfterWrite(ctx, access, writes);
  if (unresolved.length > 0) throw new UnresolvedReferencesError(unresolved);
}

const guessed = (guess: string | undefined) => (guess ? `; did you mean \`${guess}\`?` : '');

/**
 * REFERENCE_FORBIDDEN in words. Missing and unreadable read alike (D49); the guesses come from the projects
 * the writer can see and the environments of them the writer can read, so they reveal nothing else.
 */
function refusedMessage(
  key: string,
  refused: NonNullable<Extract<Resolution, { ok: false }>['refused']>,
  rootEnvId: string,
  visible: readonly Project[],
): string {
  const { target, from } = refused;
  const via = from.env === rootEnvId && from.key === key ? `${key}: ` : `${key}: through \`${from.key}\`, `;
  const readable = (p: Project | undefined) =>
    p ? Object.entries(p.access.envs).flatMap(([name, perm]) => (perm === 'none' ? [] : [name])) : [];
  const env = target.env!;
  const envGuess = (p: Project | undefined) =>
    guessed(
      closestName(
        env,
        readable(p).filter((n) => n !== env),
      ),
    );
  if (target.project === null) {
    const project = visible.find((p) => p.id === from.project);
    return `${via}the environment \`${env}\` does not exist or you cannot read it${envGuess(project)}`;
  }
  const project = visible.find((p) => p.slug === target.project);
  if (project) {
    return `${via}the environment \`${env}\` of project \`${target.project}\` does not exist or you cannot read it${envGuess(project)}`;
  }
  const slugs = visible.filter((p) => readable(p).length > 0).map((p) => p.slug);
  return `${via}the project \`${target.project}\` does not exist or you cannot read it${guessed(closestName(target.project, slugs))}`;
}

/** REFERENCE_MISSING in words: which variable is missing where, and how to make an empty value intended. */
function missingMessage(key: string, target: RefTarget, found: SourceEnv): string {
  const where =
    target.env === null ? 'this environment' : `\`${target.project ? `${target.project}.` : ''}${target.env}\``;
  const guess = closestName(target.key, [...found.vars.keys()]);
  return (
    `${key}: \`\${${target.text}}\` names no variable of ${where}, so it would be empty${guessed(guess)}` +
    ` (write \`\${${target.text}:-}\` if empty is intended)`
  );
}
