import { type HistoryEntry, MASK, type Variable } from '@svcenv/contract';
import type { Db } from '../../db/index.js';
import { AppError, notFound } from '../../lib/errors.js';
import { containsReference, type Resolution } from '../../lib/references.js';
import { authorizeEnv, authorizeEnvs, type EnvFull, type EnvRow, type EnvTarget, readNeed } from '../core/authz.js';
import { type Change, checkRevision, recordChange, recordRead } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import {
  decryptEnvValues,
  type EnvSealer,
  envSealer,
  openEnvValues,
  type PlainVar,
  type VarType,
} from '../core/values.js';
import {
  CHUNK,
  type HistoryAction,
  insertChunked,
  recordVersions,
  restoreVersion,
  type SealedVersion,
} from './history.js';
import { overlay, ownOverrides } from './overrides.js';
import { masksResolution, type ReaderResolution, refuseUnresolved, resolveForReader } from './references.js';
import { valuesAt } from './revisions.js';

export { MASK };

/**
 * Spec variables rules 1-3, D26 and D49: masking, resolvedValue only for references, resolveError for what
 * cannot resolve (a cycle, a limit, an environment the reader may not read). A variable whose value cannot be
 * decrypted (`broken`) is listed with `valueError` and no value, and a reference that reaches it, however
 * indirectly and in whichever environment, cannot resolve. `resolved` and `permissions` come from
 * services/variables/references.ts (resolveForReader).
 */
export function presentVars(
  vars: Map<string, PlainVar>,
  reveal: boolean,
  broken: ReadonlyMap<string, Omit<PlainVar, 'value'>>,
  { resolved, permissions }: Pick<ReaderResolution, 'resolved' | 'permissions'>,
): Variable[] {
  const listed: Variable[] = [...vars].map(([key, v]) => {
    const out: Variable = {
      key,
      value: v.type === 'secret' && !reveal ? MASK : v.value,
      type: v.type,
      updatedAt: v.updatedAt,
      expiresAt: v.expiresAt,
    };
    if (containsReference(v.value)) {
      const r = resolved.get(key)!;
      if (r.ok) out.resolvedValue = masksResolution(r, reveal, permissions) ? MASK : r.value;
      else out.resolveError = r.message;
    }
    return out;
  });
  if (broken.size === 0) return listed;
  for (const [key, v] of broken) listed.push({ key, value: '', ...v, valueError: 'DECRYPT_FAILED' });
  return listed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * The environment's variables, masked unless `reveal`; with `revision`, as they were right after that
 * revision (D44). Also answers the revision the listing shows (`X-Svcenv-Revision`).
 */
export async function listVars(
  ctx: Ctx,
  input: EnvTarget & { reveal: boolean; revision?: number | undefined },
): Promise<{ vars: Variable[]; revision: number }> {
  const { access, env } = await authorizeEnv(ctx, { ...input, need: readNeed(input.reveal) });
  // D44: at a past revision, references into this environment resolve at that revision, others at their
  // current state (the resolver reads this environment's variables from `plain` whatever the path).
  const { vars: plain, broken } =
    input.revision !== undefined
      ? { vars: await valuesAt(ctx, envSealer(ctx.deps.keyring, access, env), env, input.revision), broken: new Map() }
      : await openEnvValues(ctx.deps, access, env);
  // D75: at the current state, the caller's own overrides replace the shared values they override (for this
  // person only; `overridden: true` on those items). A past revision shows what was shared then.
  const own = input.revision === undefined ? overlay(plain, await ownOverrides(ctx, access, env)) : null;
  const shown = own?.vars ?? plain;
  const resolution = await resolveForReader(ctx, { access, env, vars: shown, broken }, false);
  const vars = presentVars(shown, input.reveal, broken, resolution);
  if (own) for (const v of vars) if (own.applied.has(v.key)) v.overridden = true;
  if (input.reveal) {
    await recordRead(ctx, {
      action: 'var.reveal',
      projectId: input.projectId,
      targetEnv: input.env,
      detail: { list: true, ...(input.revision !== undefined ? { revision: input.revision } : {}) },
    });
  }
  return { vars, revision: input.revision ?? Number(env.revision) };
}

/**
 * Two environments compared as a pull of each gives them (ADR 0026): a key is `different` when the values its
 * pulls would hand over differ, references resolved for this reader (D49), secrets included; `sameByReference`
 * names the keys whose stored text differs but which resolve to the same value (`${dev.DB_HOST}` beside
 * `db2.internal`). The reader's own overrides (D75) take part, as in their pulls. A value that cannot resolve
 * equals only the same stored text failing the same way. Needs
 * read on both; the answer says only which keys differ, never a value.
 */
export async function diffEnvs(
  ctx: Ctx,
  input: { projectId: string; a: string; b: string },
): Promise<{ onlyInA: string[]; onlyInB: string[]; different: string[]; sameByReference: string[] }> {
  const { deps } = ctx;
  const { access, envs } = await authorizeEnvs(ctx, {
    projectId: input.projectId,
    envs: [input.a, input.b],
    need: 'read',
  });
  const [envA, envB] = envs as [EnvFull, EnvFull];
  const [sharedA, sharedB] = [await decryptEnvValues(deps, access, envA), await decryptEnvValues(deps, access, envB)];
  // Each side's references into the other read the shared values already decrypted here (still authorized per
  // reader): a reference from another environment reads the shared value (ADR 0031), as the pull does.
  const overlays = new Map([
    [envA.id, { vars: sharedA }],
    [envB.id, { vars: sharedB }],
  ]);
  // D75: each side as this person's pull of it gives it, their own overrides applied (ADR 0031).
  const [va, vb] = [
    overlay(sharedA, await ownOverrides(ctx, access, envA))?.vars ?? sharedA,
    overlay(sharedB, await ownOverrides(ctx, access, envB))?.vars ?? sharedB,
  ];
  const [ra, rb] = [
    (await resolveForReader(ctx, { access, env: envA, vars: va }, false, { overlays })).resolved,
    (await resolveForReader(ctx, { access, env: envB, vars: vb }, false, { overlays })).resolved,
  ];
  const pulled = (vars: Map<string, PlainVar>, resolved: Map<string, Resolution>, key: string) => {
    const stored = vars.get(key)!.value;
    if (!containsReference(stored)) return { stored, ok: true as const, value: stored };
    const r = resolved.get(key)!;
    return r.ok ? { stored, ok: true as const, value: r.value } : { stored, ok: false as const, code: r.code };
  };
  const different: string[] = [];
  const sameByReference: string[] = [];
  for (const key of va.keys()) {
    if (!vb.has(key)) continue;
    const [x, y] = [pulled(va, ra, key), pulled(vb, rb, key)];
    const same = x.ok && y.ok ? x.value === y.value : !x.ok && !y.ok && x.stored === y.stored && x.code === y.code;
    if (!same) different.push(key);
    else if (x.stored !== y.stored) sameByReference.push(key);
  }
  const sorted = (xs: Iterable<string>) => [...xs].sort();
  return {
    onlyInA: sorted([...va.keys()].filter((k) => !vb.has(k))),
    onlyInB: sorted([...vb.keys()].filter((k) => !va.has(k))),
    different: sorted(different),
    sameByReference: sorted(sameByReference),
  };
}

/** One environment's changes, written as one revision (writeEnvChanges). */
export interface EnvChangeSet {
  /** `expiresAt` (ISO): the new expiry; omitted, the variable keeps its own (a new one has none). */
  set: { key: string; value: string; type: VarType; expiresAt?: string | undefined }[];
  delete: string[];
}

export interface EnvChangeKeys {
  created: string[];
  updated: string[];
  deleted: string[];
}

/**
 * Writes `change` to `env` in the caller's transaction as one revision (D44): the variables, their history
 * entries (D27) and one `recordChange`, whose audit action and event `record` names from the keys touched.
 * The path of the bulk upsert (per environment) and of an approved change request (D47). Deleting keys that
 * do not exist changes nothing; with nothing changed there is no revision (null).
 */
export async function writeEnvChanges(
  trx: Db,
  ctx: Ctx,
  sealer: EnvSealer,
  env: EnvRow,
  change: EnvChangeSet,
  record: (keys: EnvChangeKeys) => Change,
): Promise<EnvChangeKeys & { revision: number | null }> {
  const now = ctx.deps.clock.now().toISOString();
  // Key → its expiry, which an upsert keeps (the conflict update below leaves expires_at alone).
  const existing = new Map(
    (
      await trx.selectFrom('variables').select(['key', 'expires_at']).where('environment_id', '=', env.id).execute()
    ).map((r) => [r.key, r.expires_at]),
  );
  const rows = change.set.map((item) => ({
    environment_id: env.id,
    key: item.key,
    type: item.type,
    value_sealed: sealer.seal(item.key, item.value, 'current'),
    expires_at: item.expiresAt ?? null,
    created_at: now,
    updated_at: now,
  }));
  await insertChunked(rows, (chunk) =>
    trx
      .insertInto('variables')
      .values(chunk)
      .onConflict((oc) =>
        oc.columns(['environment_id', 'key']).doUpdateSet((eb) => ({
          type: eb.ref('excluded.type'),
          value_sealed: eb.ref('excluded.value_sealed'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute(),
  );
  // A new expiry replaces the one the conflict update kept (a change request may set one, D47).
  for (const item of change.set) {
    if (item.expiresAt === undefined || !existing.has(item.key)) continue;
    await trx
      .updateTable('variables')
      .set({ expires_at: item.expiresAt })
      .where('environment_id', '=', env.id)
      .where('key', '=', item.key)
      .execute();
  }
  const versions: (SealedVersion & { action: HistoryAction })[] = change.set.map((item) => ({
    key: item.key,
    type: item.type,
    value_sealed: sealer.seal(item.key, item.value, 'history'),
    expires_at: item.expiresAt ?? existing.get(item.key) ?? null,
    action: existing.has(item.key) ? ('updated' as const) : ('created' as const),
  }));
  const removed = await deleteKeys(trx, env, sealer, [...new Set(change.delete)]);
  versions.push(...asDeleted(removed));
  const keys: EnvChangeKeys = {
    created: change.set.filter((i) => !existing.has(i.key)).map((i) => i.key),
    updated: change.set.filter((i) => existing.has(i.key)).map((i) => i.key),
    deleted: removed.map((r) => r.key),
  };
  const touched = keys.created.length + keys.updated.length + keys.deleted.length > 0;
  const revision = await recordChange(trx, ctx, {
    ...record(keys),
    revision: touched ? { envId: env.id, ...keys } : undefined,
  });
  if (revision !== null) await recordVersions(trx, ctx, env, { now, revision }, versions);
  return { ...keys, revision };
}

/** Spec: upserts every item in every listed environment, in one transaction. */
export async function bulkUpsert(
  ctx: Ctx,
  input: {
    projectId: string;
    envs: string[];
    items: { key: string; value: string; type: VarType }[];
    /** D46: If-Match, allowed when the request names one environment. */
    ifRevision?: number | undefined;
    /** D67: refuse values whose references would not resolve for the caller (nothing written). */
    validate?: boolean | undefined;
  },
): Promise<{ created: string[]; updated: string[]; revision?: number }> {
  const seen = new Set<string>();
  for (const [i, item] of input.items.entries()) {
    if (seen.has(item.key)) throw new AppError('VALIDATION', `duplicate key "${item.key}"`, `items.${i}.key`);
    seen.add(item.key);
  }
  const { projectId } = input;
  const envNames = [...new Set(input.envs)];
  if (input.ifRevision !== undefined && envNames.length !== 1) {
    throw new AppError('VALIDATION', 'If-Match applies to a request that names one environment', 'envs');
  }
  const { access, envs } = await authorizeEnvs(ctx, { projectId, envs: envNames, need: 'direct-write' });
  // Checked before the transaction: the resolver reads through the pool, which a SQLite transaction holds.
  if (input.validate)
    await refuseUnresolved(
      ctx,
      access,
      envs.map((env) => ({ env, set: input.items })),
    );
  const created = new Set<string>();
  const updated = new Set<string>();
  let revision: number | undefined;
  await ctx.deps.db.transaction().execute(async (trx) => {
    for (const env of envs) {
      await checkRevision(trx, ctx.deps, env.id, input.ifRevision);
      const sealer = envSealer(ctx.deps.keyring, access, env);
      // D34: one event (and one audit row) per environment; D44: one revision per environment.
      const keys = await writeEnvChanges(trx, ctx, sealer, env, { set: input.items, delete: [] }, (k) => ({
        action: 'vars.bulk_upsert',
        projectId,
        targetEnv: env.name,
        detail: { created: k.created, updated: k.updated },
        event: { created: k.created, updated: k.updated },
      }));
      for (const k of keys.created) created.add(k);
      for (const k of keys.updated) updated.add(k);
      revision = keys.revision!;
    }
  });
  return { created: [...created], updated: [...updated], ...(envs.length === 1 ? { revision: revision! } : {}) };
}

async function currentVar(db: Db, environmentId: string, key: string) {
  return db
    .selectFrom('variables')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('key', '=', key)
    .executeTakeFirst();
}

export async function updateVar(
  ctx: Ctx,
  input: EnvTarget & {
    key: string;
    value?: string | undefined;
    type?: VarType | undefined;
    expiresAt?: string | null | undefined;
    clearExpiry?: boolean | undefined;
    ifRevision?: number | undefined;
    /** D67: see bulkUpsert. */
    validate?: boolean | undefined;
  },
) {
  const { projectId, env: envName, key, ifRevision, validate, ...change } = input;
  if (change.clearExpiry && change.expiresAt) {
    throw new AppError('VALIDATION', 'give either expiresAt or clearExpiry, not both', 'clearExpiry');
  }
  const { access, env } = await authorizeEnv(ctx, { projectId, env: envName, need: 'direct-write' });
  // D28b's 404 comes first: only an existing variable's new value is checked.
  if (validate && change.value !== undefined && (await currentVar(ctx.deps.db, env.id, key))) {
    await refuseUnresolved(ctx, access, [{ env, set: [{ key, value: change.value }] }]);
  }
  const sealer = envSealer(ctx.deps.keyring, access, env);
  const now = ctx.deps.clock.now().toISOString();
  return ctx.deps.db.transaction().execute(async (trx) => {
    await checkRevision(trx, ctx.deps, env.id, ifRevision);
    const row = await currentVar(trx, env.id, key);
    // D28b: variables are created by the bulk upsert; PUT only changes an existing one.
    if (!row) throw notFound(`variable "${key}"`);
    const next = {
      type: change.type ?? row.type,
      value_sealed: change.value !== undefined ? sealer.seal(key, change.value, 'current') : row.value_sealed,
      expires_at: change.clearExpiry
        ? null
        : change.expiresAt !== undefined
          ? change.expiresAt && new Date(change.expiresAt).toISOString()
          : row.expires_at,
      updated_at: now,
    };
    await trx.updateTable('variables').set(next).where('environment_id', '=', env.id).where('key', '=', key).execute();
    const fields = Object.keys(change).filter((f) => change[f as keyof typeof change] !== undefined);
    const revision = await recordChange(trx, ctx, {
      action: 'var.update',
      projectId,
      targetEnv: envName,
      targetKey: key,
      detail: { fields },
      revision: { envId: env.id, created: [], updated: [key], deleted: [] },
      event: { updated: [key] },
    });
    const historic =
      change.value !== undefined ? sealer.seal(key, change.value, 'history') : sealer.toHistory(key, row.value_sealed);
    await recordVersions(trx, ctx, env, { now, revision: revision! }, [
      { key, ...next, value_sealed: historic, action: 'updated' },
    ]);
    const value = next.type === 'secret' ? MASK : sealer.open(key, next.value_sealed, 'current');
    return { key, value, type: next.type, updatedAt: now, expiresAt: next.expires_at, revision: revision! };
  });
}

/**
 * Deletes the keys that exist; returns their last versions (sealed as history entries), which the caller
 * records as `deleted` entries once its change has a revision. Restoring one re-creates the key (D27).
 */
async function deleteKeys(trx: Db, env: EnvRow, sealer: EnvSealer, keys: string[]): Promise<SealedVersion[]> {
  const rows: SealedVersion[] = [];
  for (let i = 0; i < keys.length; i += CHUNK) {
    const chunk = keys.slice(i, i + CHUNK);
    const found = await trx
      .selectFrom('variables')
      .select(['key', 'type', 'value_sealed', 'expires_at'])
      .where('environment_id', '=', env.id)
      .where('key', 'in', chunk)
      .execute();
    if (found.length === 0) continue;
    await trx
      .deleteFrom('variables')
      .where('environment_id', '=', env.id)
      .where(
        'key',
        'in',
        found.map((r) => r.key),
      )
      .execute();
    for (const r of found) rows.push({ ...r, value_sealed: sealer.toHistory(r.key, r.value_sealed) });
  }
  return rows;
}

const asDeleted = (rows: SealedVersion[]) => rows.map((r) => ({ ...r, action: 'deleted' as const }));

export async function deleteVar(
  ctx: Ctx,
  input: EnvTarget & { key: string; ifRevision?: number | undefined },
): Promise<{ revision: number }> {
  const { projectId, key } = input;
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'direct-write' });
  const sealer = envSealer(ctx.deps.keyring, access, env);
  const now = ctx.deps.clock.now().toISOString();
  return ctx.deps.db.transaction().execute(async (trx) => {
    await checkRevision(trx, ctx.deps, env.id, input.ifRevision);
    const deleted = await deleteKeys(trx, env, sealer, [key]);
    if (deleted.length === 0) throw notFound(`variable "${key}"`);
    const revision = await recordChange(trx, ctx, {
      action: 'var.delete',
      projectId,
      targetEnv: env.name,
      targetKey: key,
      revision: { envId: env.id, created: [], updated: [], deleted: [key] },
      event: { keys: [key] },
    });
    await recordVersions(trx, ctx, env, { now, revision: revision! }, asDeleted(deleted));
    return { revision: revision! };
  });
}

export async function bulkDelete(
  ctx: Ctx,
  input: EnvTarget & { keys: string[]; ifRevision?: number | undefined },
): Promise<{ deleted: number; revision: number }> {
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'direct-write' });
  const sealer = envSealer(ctx.deps.keyring, access, env);
  const now = ctx.deps.clock.now().toISOString();
  return ctx.deps.db.transaction().execute(async (trx) => {
    await checkRevision(trx, ctx.deps, env.id, input.ifRevision);
    const rows = await deleteKeys(trx, env, sealer, [...new Set(input.keys)]);
    const deleted = rows.map((r) => r.key);
    // Nothing deleted changes no variable: no revision (and the pull caches stay).
    const revision = await recordChange(trx, ctx, {
      action: 'vars.bulk_delete',
      projectId: input.projectId,
      targetEnv: env.name,
      detail: { keys: deleted },
      revision: deleted.length > 0 ? { envId: env.id, created: [], updated: [], deleted } : undefined,
      event: { keys: deleted },
    });
    if (revision !== null) await recordVersions(trx, ctx, env, { now, revision }, asDeleted(rows));
    return { deleted: deleted.length, revision: revision ?? env.revision };
  });
}

/** D27: history masks exactly as listings do; reveal needs write permission. Newest first. */
export async function history(ctx: Ctx, input: EnvTarget & { key: string; reveal: boolean }): Promise<HistoryEntry[]> {
  const { key, reveal } = input;
  const { access, env } = await authorizeEnv(ctx, { ...input, need: readNeed(reveal) });
  const rows = await ctx.deps.db
    .selectFrom('variable_history')
    .selectAll()
    .where('environment_id', '=', env.id)
    .where('key', '=', key)
    .orderBy('id', 'desc')
    .execute();
  if (rows.length === 0) throw notFound(`history of "${key}"`);
  if (reveal) {
    await recordRead(ctx, {
      action: 'var.reveal',
      projectId: input.projectId,
      targetEnv: input.env,
      targetKey: key,
      detail: { history: true },
    });
  }
  const sealer = envSealer(ctx.deps.keyring, access, env);
  return rows.map((r) => ({
    id: Number(r.id),
    value: r.type === 'secret' && !reveal ? MASK : sealer.open(key, r.value_sealed, 'history'),
    type: r.type,
    action: r.action,
    changedBy: r.changed_by,
    changedAt: r.changed_at,
  }));
}

/** Restores the value, type and expiry of a history entry (re-creating a deleted key, D27). */
export async function restore(
  ctx: Ctx,
  input: EnvTarget & { key: string; versionId: number; ifRevision?: number | undefined },
) {
  const { projectId, key, versionId } = input;
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'direct-write' });
  const now = ctx.deps.clock.now().toISOString();
  return ctx.deps.db.transaction().execute(async (trx) => {
    await checkRevision(trx, ctx.deps, env.id, input.ifRevision);
    const entry = await trx
      .selectFrom('variable_history')
      .selectAll()
      .where('id', '=', versionId)
      .where('environment_id', '=', env.id)
      .where('key', '=', key)
      .executeTakeFirst();
    if (!entry) throw notFound(`history entry ${versionId} of "${key}"`);
    const existed = (await currentVar(trx, env.id, key)) !== undefined;
    const plain = await restoreVersion(trx, envSealer(ctx.deps.keyring, access, env), env, entry, now);
    const change = existed ? { created: [], updated: [key] } : { created: [key], updated: [] };
    const revision = await recordChange(trx, ctx, {
      action: 'var.restore',
      projectId,
      targetEnv: env.name,
      targetKey: key,
      detail: { versionId },
      revision: { envId: env.id, ...change, deleted: [] },
      event: change,
    });
    await recordVersions(trx, ctx, env, { now, revision: revision! }, [{ ...entry, action: 'restored' }]);
    return {
      key,
      value: entry.type === 'secret' ? MASK : plain,
      type: entry.type,
      updatedAt: now,
      revision: revision!,
    };
  });
}
