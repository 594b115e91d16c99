import { cachedRows } from '../../db/epoch-cache.js';
import { AppError } from '../../lib/errors.js';
import { type EnvLookup, type Resolution, resolveAll, type SourceEnv } from '../../lib/references.js';
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
import { openEnvValues, type PlainVar, sourceEnv } from '../core/values.js';
import { projectIdOf } from '../projects/project-ref.js';

/**
 * D49: references resolved as their reader may see them (ADR 0017). lib/references.ts resolves; this module
 * answers its lookups: `${env.KEY}` in the referring environment's project, `${slug.env.KEY}` in the caller's
 * workspace (services/projects/project-ref.ts), each environment reached through `authorizeEnv` with `read`, so the
 * token's scope, environment list and project restriction and the user's roles and overrides apply exactly as
 * they do to a direct read. A refusal (404 or 403 there) is only "cannot resolve": which of the two is never
 * said. Only environments a variable actually reaches are read and decrypted.
 */

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
      const { vars, broken } = await openEnvValues(ctx.deps, access, env);
      source = sourceEnv(env.id, access.project.id, vars, broken);
      byId.set(env.id, source);
      permissions.set(env.id, envPermission(access, env));
    }
    return source;
  };
  const resolved = await resolveAll(rootSource, lookup);
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
