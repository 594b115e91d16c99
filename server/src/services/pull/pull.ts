import { createHash } from 'node:crypto';
import { CONTEXT_KEYS, type ContextKey, k8sSecretName, MASK, type OutputFormat } from '@svcenv/contract';
import { AppError, ReferenceError422 } from '../../lib/errors.js';
import { CONTENT_TYPES, FILE_EXTENSIONS, render } from '../../lib/formats.js';
import { type AuditEvent, auditRow, recordAudit } from '../core/audit.js';
import { authorizeEnv } from '../core/authz.js';
import { recordRead } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import type { Deps, ResolvedEnv } from '../core/deps.js';
import { emitEvent } from '../core/events.js';
import { decryptEnvValues, envSealer } from '../core/values.js';
import { overlay, ownOverrides } from '../variables/overrides.js';
import { dependenciesHold, masksResolution, resolveForReader } from '../variables/references.js';
import { valuesAt } from '../variables/revisions.js';

/**
 * Pull and export (spec "Variable endpoints", spec variables rules 4-9, D28-D30, D55); the renderings are
 * lib/formats.ts.
 *
 * The decrypted, resolved environment is cached per process keyed by the environment's revision, which every
 * write bumps in its own transaction, and by the revisions of every other environment its references read
 * (D49, ADR 0017). Each request still authenticates, authorizes and reads those revisions from the database
 * (the referenced ones in one query, with the caller's read permission on each checked again), so several
 * instances stay correct and a change anywhere a pull reached never yields a stale body or 304; only
 * unchanged environments skip decryption. An entry resolved for one reader serves another only when every
 * environment it read (or was refused) is read (or refused) alike by that one: a few entries per environment.
 */
type Format = OutputFormat;

/** Rendered bodies kept per cached environment before D67 subsets stop being added. */
const MAX_SUBSET_BODIES = 32;

/**
 * D28a: the synthetic context variables; a user-defined variable of the same name wins (`own`: the
 * environment's keys, also those a D67 subset leaves out, so a subset never shows a value the full pull does not).
 */
function contextEntries(
  own: ReadonlySet<string> | ReadonlyMap<string, unknown>,
  ctx: { projectId: string; env: string; projectName: string },
) {
  const values: Record<ContextKey, string> = {
    SVCENV_PROJECT: ctx.projectId,
    SVCENV_ENV: ctx.env,
    SVCENV_PROJECT_NAME: ctx.projectName,
  };
  const extra = CONTEXT_KEYS.map((k): [string, string] => [k, values[k]]);
  return extra.filter(([k]) => !own.has(k));
}
function withContext(entries: [string, string][], ctx: { projectId: string; env: string; projectName: string }) {
  return [...entries, ...contextEntries(new Set(entries.map(([k]) => k)), ctx)];
}

async function loadResolved(
  ctx: Ctx,
  target: { projectId: string; env: string; need: 'read' | 'write'; atRevision?: number | undefined },
) {
  const { deps } = ctx;
  // Pull and export write nothing the epoch cache holds, so their lookups share the counter value their
  // authentication read (db/epoch-cache.ts).
  const { access, env } = await authorizeEnv(ctx, { ...target, readOnly: true });
  if (target.atRevision !== undefined) {
    // D44: the state right after that revision (404 for an unknown one); references into this environment
    // resolve at it, others at their current state. Not cached: a past state is asked for rarely.
    const vars = await valuesAt(ctx, envSealer(deps.keyring, access, env), env, target.atRevision);
    const { resolved, dependencies, permissions } = await resolveForReader(ctx, { access, env, vars }, true);
    const cached: ResolvedEnv = { revision: target.atRevision, dependencies, vars, resolved, bodies: new Map() };
    return { access, env, cached, permissions };
  }
  const revision = Number(env.revision);
  // D75 (ADR 0031): the caller's own overrides, looked up only in an environment that ever had one. Resolved
  // for this person alone and never cached, so no one else's pull can be served their values; the ETag is the
  // hash of the body, so it moves for the owner when an override changes what they get, and for no one else.
  const mine = await ownOverrides(ctx, access, env);
  if (mine) {
    const shared = await decryptEnvValues(deps, access, env);
    const own = overlay(shared, mine);
    if (own) {
      const { resolved, dependencies, permissions } = await resolveForReader(
        ctx,
        { access, env, vars: own.vars },
        true,
      );
      const cached: ResolvedEnv = { revision, dependencies, vars: own.vars, resolved, bodies: new Map() };
      return { access, env, cached, permissions };
    }
  }
  for (const entry of deps.renderCache.candidates(env.id, revision)) {
    const permissions = await dependenciesHold(ctx, { access, env }, entry.dependencies, true);
    if (permissions) return { access, env, cached: entry, permissions };
  }
  const vars = await decryptEnvValues(deps, access, env);
  const { resolved, dependencies, permissions } = await resolveForReader(ctx, { access, env, vars }, true);
  const cached: ResolvedEnv = { revision, dependencies, vars, resolved, bodies: new Map() };
  deps.renderCache.add(env.id, cached);
  return { access, env, cached, permissions };
}

export interface PullResult {
  body: string;
  etag: string;
  /** The context variables the server added to the body, comma-separated ("" with metadata=false). */
  context: string;
  contentType: string;
  /** D44: the environment's revision the body was rendered at (X-Svcenv-Revision). */
  revision: number;
}

export interface PullInput {
  projectId: string;
  env: string;
  metadata: boolean;
  format: Format;
  operator: boolean;
  /** D44: pull the state right after this revision. */
  revision?: number | undefined;
  /** D67: only these variables (and the context variables); each must exist (400 VALIDATION `keys`). */
  keys?: readonly string[] | undefined;
}

/**
 * D43: a pull that may be held. With `wait` seconds and an `ifNoneMatch` equal to the current ETag, the answer
 * waits until the environment's body would change (rendered anew on every wake: never a stale 304), the time
 * is up, or the server drains; `reauthenticate` checks the credential again before a held pull answers, so a
 * token revoked meanwhile gets 401, not the new values. Audited as any pull: each 200, and a 304 as D66 says.
 */
export async function pullWaiting(
  ctx: Ctx,
  input: PullInput & { wait?: number | undefined; ifNoneMatch: (etag: string) => boolean },
  reauthenticate: () => Promise<Ctx>,
): Promise<PullResult> {
  let current = ctx;
  let rendered = await renderPull(current, input);
  // Pull takes access tokens only (spec variables rule 8): the token's id bounds its held pulls.
  const tokenId = ctx.principal.token?.id;
  // A past revision (D44) never changes: nothing to wait for.
  const wait = input.revision === undefined ? input.wait : undefined;
  if (wait !== undefined && tokenId !== undefined && input.ifNoneMatch(rendered.out.etag)) {
    const deadline = Date.now() + wait * 1000;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      // D49: woken by a change of any environment the body read, not only the one pulled.
      // D75: and by a change of an override in the environment pulled (ADR 0031).
      const held = ctx.deps.watch.wait(rendered.watched(), tokenId, left, {
        envId: rendered.envId,
        rev: rendered.overrideRev,
      });
      if (!held) break;
      const reason = await held;
      current = await reauthenticate();
      rendered = await renderPull(current, input);
      if (reason !== 'changed' || !input.ifNoneMatch(rendered.out.etag)) break;
    }
  }
  await auditPull(current, input, rendered, input.ifNoneMatch(rendered.out.etag), input.wait);
  return { ...rendered.out, contentType: CONTENT_TYPES[input.format], revision: rendered.revision };
}

/** The pull's body and ETag from the per-process cache, after the permission check. */
async function renderPull(ctx: Ctx, input: PullInput) {
  const { access, env, cached } = await loadResolved(ctx, {
    projectId: input.projectId,
    env: input.env,
    need: 'read',
    atRevision: input.revision,
  });
  const projectName = access.project.name;
  // D67: the whole environment is resolved (and cached) as for any pull, each variable apart, so a subset is
  // read from that resolution; a broken variable outside the subset is simply not rendered.
  const only = input.keys && [...input.keys].sort();
  if (only) {
    const unknown = only.filter((k) => !cached.vars.has(k));
    if (unknown.length > 0) throw unknownKeys(unknown, cached);
  }
  const variant = `${input.format}|${input.metadata}|${projectName}${only ? `|keys=${only.join(',')}` : ''}`;
  let out = cached.bodies.get(variant);
  if (!out) {
    const entries: [string, string][] = [];
    for (const [key, r] of only ? only.map((k) => [k, cached.resolved.get(k)!] as const) : cached.resolved) {
      // Spec variables rule 4: any unresolvable chain fails the whole pull with the flat 422 body (D49: also a
      // reference to an environment this reader may not read); one that reaches an undecryptable value, as
      // that value itself would (DECRYPT_FAILED, naming the pulled key).
      if (!r.ok) {
        if (r.code === 'DECRYPT_FAILED') throw new AppError('DECRYPT_FAILED', r.message, key);
        throw new ReferenceError422(r.code, key, r.message);
      }
      entries.push([key, r.value]);
    }
    const context = input.metadata
      ? contextEntries(cached.vars, { projectId: input.projectId, env: input.env, projectName })
      : [];
    // A value the format cannot carry throws FORMAT_UNSUPPORTED (D55) here, before anything is audited; such a
    // variant is rendered again on the next pull, which costs a scan of the cached values, no decryption.
    const body = render(input.format, k8sSecretName(projectName, input.env), [...entries, ...context]);
    // D29: a strong ETag, the hash of the body (so one per format and variant). `context` names the variables
    // the server added (ADR 0002).
    // A subset's ETag also hashes which keys were asked for: another set never matches it, even where the two
    // bodies happen to be equal.
    const hash = createHash('sha256').update(body);
    if (only) hash.update(`\0keys=${only.join(',')}`);
    out = {
      body,
      etag: `"${hash.digest('base64url')}"`,
      context: context.map(([k]) => k).join(', '),
    };
    // Subsets are as many as there are lists of keys: only a few are kept per revision.
    if (!only || cached.bodies.size < MAX_SUBSET_BODIES) cached.bodies.set(variant, out);
  }
  // The revisions the body was rendered at: this environment's and every other one its references read
  // (built only for a pull that is held).
  const watched = () => {
    const at = new Map<string, number>([[env.id, cached.revision]]);
    for (const d of cached.dependencies) if (d.envId !== null) at.set(d.envId, d.revision);
    return at;
  };
  // The keys go into the `vars.pull` event, which an unaudited 304 (D66) never sends, and which copies them only
  // for a subscribed webhook (services/core/events.ts): handed over as they are, when asked.
  const keys = (): Iterable<string> => only ?? cached.vars.keys();
  return { out, keys, watched, revision: cached.revision, envId: env.id, overrideRev: Number(env.override_rev) };
}

/**
 * D67: keys a subset names that the environment lacks: 400 naming them, except an entry equal to one of the
 * environment's values (a value typed where a key goes), which is counted, never repeated.
 */
function unknownKeys(unknown: string[], cached: ResolvedEnv): AppError {
  const values = new Set<string>();
  for (const [key, v] of cached.vars) {
    values.add(v.value);
    const r = cached.resolved.get(key);
    if (r?.ok) values.add(r.value);
  }
  const named = unknown.filter((k) => !values.has(k)).map((k) => `"${k}"`);
  const hidden = unknown.length - named.length;
  if (hidden) named.push(`${hidden === 1 ? 'one entry' : `${hidden} entries`} equal to a value (not repeated)`);
  return new AppError('VALIDATION', `keys: no variable in this environment for ${named.join(', ')}`, 'keys');
}

/**
 * A pull answered 200 is durably audited before it is answered (group commit, services/core/audit.ts). One
 * answered 304 hands over no value: D66 audits it once per credential, environment and revision per hour
 * (runtime/unchanged-pulls.ts), and the `vars.pull` webhook event (D34) follows the audit entry, so a fleet of
 * `run --watch` clients costs neither entries, deliveries nor commits while nothing changes (ADR 0020).
 */
async function auditPull(
  ctx: Ctx,
  input: PullInput,
  rendered: Awaited<ReturnType<typeof renderPull>>,
  notModified: boolean,
  wait?: number | undefined,
): Promise<void> {
  const { deps, principal } = ctx;
  const event = {
    action: 'vars.pull',
    projectId: input.projectId,
    targetEnv: input.env,
    detail: {
      format: input.format,
      ...(input.keys ? { keys: [...input.keys] } : {}),
      ...(input.operator ? { client: 'operator' } : {}),
      ...(wait !== undefined ? { wait } : {}),
      ...(notModified ? { notModified: true } : {}),
    },
  };
  let audited = true;
  if (notModified) audited = await auditUnchanged(ctx, rendered, event);
  else await recordRead(ctx, event);
  // Spec variables rule 7 / D18: every operator pull records the sync, a 304 too (that is its sign of life).
  if (input.operator) await recordOperatorSync(deps, principal.workspaceId);
  if (audited)
    await emitEvent(deps, deps.db, principal, 'vars.pull', input.projectId, input.env, { keys: rendered.keys() });
}

/** D66: writes the 304's entry unless its triple was audited within the hour; true when it wrote it. */
async function auditUnchanged(
  ctx: Ctx,
  rendered: Awaited<ReturnType<typeof renderPull>>,
  event: AuditEvent,
): Promise<boolean> {
  const { deps, principal } = ctx;
  const triple = { credentialId: principal.actorId, envId: rendered.envId, revision: rendered.revision };
  const now = deps.clock.now();
  if (deps.unchangedPulls.recent(triple, now.getTime())) return false;
  const claim = await deps.db.transaction().execute(async (trx) => {
    const c = await deps.unchangedPulls.claim(trx, triple, now);
    if (c.claimed) await recordAudit(trx, auditRow(deps.clock, principal, event));
    return c;
  });
  deps.unchangedPulls.remember(triple, claim.at, now.getTime());
  return claim.claimed;
}

/**
 * Spec variables rule 7 / D18: `lastSync` is the time of the latest operator pull, so every one records it. Never moved
 * backwards: of two concurrent pulls, the earlier may commit last.
 */
async function recordOperatorSync(deps: Deps, workspaceId: string): Promise<void> {
  const now = deps.clock.now().toISOString();
  await deps.db
    .updateTable('workspaces')
    .set({ operator_last_sync: now })
    .where('id', '=', workspaceId)
    .where((eb) => eb.or([eb('operator_last_sync', 'is', null), eb('operator_last_sync', '<', now)]))
    .execute();
}

export async function exportVars(
  ctx: Ctx,
  input: { projectId: string; env: string; metadata: boolean; format: Format; reveal: boolean },
): Promise<{ body: string; contentType: string; filename: string }> {
  // Export with reveal needs write permission (D23); masked export needs read.
  const { access, cached, permissions } = await loadResolved(ctx, {
    projectId: input.projectId,
    env: input.env,
    need: input.reveal ? 'write' : 'read',
  });
  const entries: [string, string][] = [];
  for (const [key, v] of cached.vars) {
    const r = cached.resolved.get(key)!;
    // Spec variables rule 3: a variable in a circular chain is left unresolved (its literal value); the rest resolve.
    // D49: the same for a reference this reader may not follow (its literal value is this environment's own).
    const masked = r.ok ? masksResolution(r, input.reveal, permissions) : v.type === 'secret' && !input.reveal;
    entries.push([key, masked ? MASK : r.ok ? r.value : v.value]);
  }
  const projectName = access.project.name;
  const all = input.metadata
    ? withContext(entries, { projectId: input.projectId, env: input.env, projectName })
    : entries;
  const name = k8sSecretName(projectName, input.env);
  // Rendered before the audit row, so a FORMAT_UNSUPPORTED export (D55) records no read that did not happen.
  const body = render(input.format, name, all);
  await recordRead(ctx, {
    action: 'vars.export',
    projectId: input.projectId,
    targetEnv: input.env,
    detail: { format: input.format, reveal: input.reveal },
  });
  return { body, contentType: CONTENT_TYPES[input.format], filename: `${name}.${FILE_EXTENSIONS[input.format]}` };
}
