import type { HistoryEntry, Variable } from '@svcenv/contract';
import type { Db } from '../db/index.js';
import { AppError, notFound } from '../lib/errors.js';
import { containsReference, type Resolution, resolveAll } from '../lib/references.js';
import { auditRow, recordAudit } from './audit.js';
import { type EnvRow, envPermission, loadProjectAccess, type ProjectAccess, requireEnv } from './authz.js';
import type { Deps } from './deps.js';
import { emitEvent, keyChange } from './events.js';
import type { Principal } from './principal.js';
import { type EnvFull, findEnv } from './projects.js';

export const MASK = '***';
type VarType = 'secret' | 'plain';

export interface PlainVar {
  value: string;
  type: VarType;
  updatedAt: string;
  expiresAt: string | null;
}

/** Decrypts every variable of an environment; only called after an authorization check. */
export async function decryptEnvValues(
  deps: Pick<Deps, 'db' | 'keyring'>,
  access: ProjectAccess,
  env: EnvRow,
): Promise<Map<string, PlainVar>> {
  const rows = await deps.db
    .selectFrom('variables')
    .select(['key', 'type', 'value_sealed', 'updated_at', 'expires_at'])
    .where('environment_id', '=', env.id)
    .orderBy('key')
    .execute();
  const { id, wrapped_key } = access.project;
  const out = new Map<string, PlainVar>();
  for (const r of rows) {
    out.set(r.key, {
      value: deps.keyring.decryptValue(id, wrapped_key, env.id, r.key, r.value_sealed),
      type: r.type,
      updatedAt: r.updated_at,
      expiresAt: r.expires_at,
    });
  }
  return out;
}

export function resolveEnv(vars: Map<string, PlainVar>): Map<string, Resolution> {
  return resolveAll(new Map([...vars].map(([k, v]) => [k, { value: v.value, secret: v.type === 'secret' }])));
}

/** Spec rules 1-3 and D26: masking, resolvedValue only for references, resolveError for cycles. */
export function presentVars(vars: Map<string, PlainVar>, reveal: boolean): Variable[] {
  const resolved = resolveEnv(vars);
  return [...vars].map(([key, v]) => {
    const out: Variable = {
      key,
      value: v.type === 'secret' && !reveal ? MASK : v.value,
      type: v.type,
      updatedAt: v.updatedAt,
      expiresAt: v.expiresAt,
    };
    if (containsReference(v.value)) {
      const r = resolved.get(key)!;
      if (r.ok) out.resolvedValue = r.usedSecret && !reveal ? MASK : r.value;
      else out.resolveError = r.message;
    }
    return out;
  });
}

async function envForRead(deps: Deps, principal: Principal, projectId: string, envName: string, reveal: boolean) {
  const access = await loadProjectAccess(deps.db, principal, projectId);
  const env = await findEnv(deps.db, projectId, envName);
  // Plaintext reads (reveal=true) require write permission (spec, D23).
  requireEnv(access, env, reveal ? 'write' : 'read');
  return { access, env };
}

export async function listVars(
  deps: Deps,
  principal: Principal,
  projectId: string,
  envName: string,
  reveal: boolean,
): Promise<Variable[]> {
  const { access, env } = await envForRead(deps, principal, projectId, envName, reveal);
  const vars = presentVars(await decryptEnvValues(deps, access, env), reveal);
  if (reveal) {
    await deps.auditBatcher.append(
      auditRow(deps.clock, principal, { action: 'var.reveal', projectId, targetEnv: envName, detail: { list: true } }),
    );
  }
  return vars;
}

async function bumpRevision(trx: Db, environmentId: string): Promise<void> {
  await trx
    .updateTable('environments')
    .set((eb) => ({ revision: eb('revision', '+', 1) }))
    .where('id', '=', environmentId)
    .execute();
}

interface HistoryInsert {
  environment_id: string;
  key: string;
  type: VarType;
  value_sealed: string;
  expires_at: string | null;
  action: 'created' | 'updated' | 'deleted' | 'restored';
  changed_by: string;
  changed_at: string;
}

const CHUNK = 500;
async function insertChunked<T>(items: T[], insert: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += CHUNK) await insert(items.slice(i, i + CHUNK));
}

/** Spec: upserts every item in every listed environment, in one transaction. */
export async function bulkUpsert(
  deps: Deps,
  principal: Principal,
  projectId: string,
  input: { envs: string[]; items: { key: string; value: string; type: VarType }[] },
): Promise<{ created: string[]; updated: string[] }> {
  const seen = new Set<string>();
  for (const [i, item] of input.items.entries()) {
    if (seen.has(item.key)) throw new AppError('VALIDATION', `duplicate key "${item.key}"`, `items.${i}.key`);
    seen.add(item.key);
  }
  const envNames = [...new Set(input.envs)];
  const access = await loadProjectAccess(deps.db, principal, projectId);
  const envs: EnvFull[] = [];
  for (const name of envNames) {
    const env = await findEnv(deps.db, projectId, name);
    requireEnv(access, env, 'write');
    envs.push(env);
  }
  const now = deps.clock.now().toISOString();
  const { id, wrapped_key } = access.project;
  const created = new Set<string>();
  const updated = new Set<string>();
  await deps.db.transaction().execute(async (trx) => {
    const audits = [];
    for (const env of envs) {
      // Key → its expiry, which an upsert keeps (the conflict update below leaves expires_at alone).
      const existing = new Map(
        (
          await trx.selectFrom('variables').select(['key', 'expires_at']).where('environment_id', '=', env.id).execute()
        ).map((r) => [r.key, r.expires_at]),
      );
      const rows = input.items.map((item) => ({
        environment_id: env.id,
        key: item.key,
        type: item.type,
        value_sealed: deps.keyring.encryptValue(id, wrapped_key, env.id, item.key, item.value),
        expires_at: null as string | null,
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
      const history: HistoryInsert[] = rows.map((r) => ({
        environment_id: env.id,
        key: r.key,
        type: r.type,
        value_sealed: r.value_sealed,
        // The version as it now stands, expiry included, so that restoring it restores that too.
        expires_at: existing.get(r.key) ?? null,
        action: existing.has(r.key) ? 'updated' : 'created',
        changed_by: principal.userId,
        changed_at: now,
      }));
      await insertChunked(history, (chunk) => trx.insertInto('variable_history').values(chunk).execute());
      await bumpRevision(trx, env.id);
      const envCreated = input.items.filter((i) => !existing.has(i.key)).map((i) => i.key);
      const envUpdated = input.items.filter((i) => existing.has(i.key)).map((i) => i.key);
      for (const k of envCreated) created.add(k);
      for (const k of envUpdated) updated.add(k);
      audits.push(
        auditRow(deps.clock, principal, {
          action: 'vars.bulk_upsert',
          projectId,
          targetEnv: env.name,
          detail: { created: envCreated, updated: envUpdated },
        }),
      );
      await emitEvent(deps, trx, principal, 'vars.bulk_upsert', projectId, env.name, {
        created: envCreated,
        updated: envUpdated,
      });
    }
    await recordAudit(trx, audits);
  });
  return { created: [...created], updated: [...updated] };
}

/** The version and the history entry, with the environment's revision bump (pull cache key), in one place. */
async function recordVersion(
  trx: Db,
  entry: Omit<HistoryInsert, 'changed_at' | 'changed_by'>,
  by: Principal,
  now: string,
): Promise<void> {
  await trx
    .insertInto('variable_history')
    .values({ ...entry, changed_by: by.userId, changed_at: now })
    .execute();
  await bumpRevision(trx, entry.environment_id);
}

async function currentVar(db: Db, environmentId: string, key: string) {
  return db
    .selectFrom('variables')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('key', '=', key)
    .executeTakeFirst();
}

async function envForWrite(deps: Deps, principal: Principal, projectId: string, envName: string) {
  const access = await loadProjectAccess(deps.db, principal, projectId);
  const env = await findEnv(deps.db, projectId, envName);
  requireEnv(access, env, 'write');
  return { access, env };
}

export async function updateVar(
  deps: Deps,
  principal: Principal,
  projectId: string,
  envName: string,
  key: string,
  input: {
    value?: string | undefined;
    type?: VarType | undefined;
    expiresAt?: string | null | undefined;
    clearExpiry?: boolean | undefined;
  },
) {
  if (input.clearExpiry && input.expiresAt) {
    throw new AppError('VALIDATION', 'give either expiresAt or clearExpiry, not both', 'clearExpiry');
  }
  const { access, env } = await envForWrite(deps, principal, projectId, envName);
  const now = deps.clock.now().toISOString();
  return deps.db.transaction().execute(async (trx) => {
    const row = await currentVar(trx, env.id, key);
    // D28b: variables are created by the bulk upsert; PUT only changes an existing one.
    if (!row) throw notFound(`variable "${key}"`);
    const next = {
      type: input.type ?? row.type,
      value_sealed:
        input.value !== undefined
          ? deps.keyring.encryptValue(access.project.id, access.project.wrapped_key, env.id, key, input.value)
          : row.value_sealed,
      expires_at: input.clearExpiry
        ? null
        : input.expiresAt !== undefined
          ? input.expiresAt && new Date(input.expiresAt).toISOString()
          : row.expires_at,
      updated_at: now,
    };
    await trx.updateTable('variables').set(next).where('environment_id', '=', env.id).where('key', '=', key).execute();
    await recordVersion(
      trx,
      {
        environment_id: env.id,
        key,
        type: next.type,
        value_sealed: next.value_sealed,
        expires_at: next.expires_at,
        action: 'updated',
      },
      principal,
      now,
    );
    const fields = Object.keys(input).filter((f) => input[f as keyof typeof input] !== undefined);
    await recordAudit(
      trx,
      auditRow(deps.clock, principal, {
        action: 'var.update',
        projectId,
        targetEnv: envName,
        targetKey: key,
        detail: { fields },
      }),
    );
    await emitEvent(deps, trx, principal, 'var.update', projectId, envName, { updated: [key] });
    const value =
      next.type === 'secret'
        ? MASK
        : deps.keyring.decryptValue(access.project.id, access.project.wrapped_key, env.id, key, next.value_sealed);
    return { key, value, type: next.type, updatedAt: now, expiresAt: next.expires_at };
  });
}

async function deleteKeys(deps: Deps, trx: Db, principal: Principal, env: EnvRow, keys: string[]): Promise<string[]> {
  const now = deps.clock.now().toISOString();
  const rows = await trx
    .selectFrom('variables')
    .selectAll()
    .where('environment_id', '=', env.id)
    .where('key', 'in', keys)
    .execute();
  if (rows.length === 0) return [];
  await insertChunked(rows, (chunk) =>
    trx
      .deleteFrom('variables')
      .where('environment_id', '=', env.id)
      .where(
        'key',
        'in',
        chunk.map((r) => r.key),
      )
      .execute(),
  );
  // The last value is kept in the `deleted` entry, so restoring it re-creates the key (D27).
  await insertChunked(rows, (chunk) =>
    trx
      .insertInto('variable_history')
      .values(
        chunk.map((r) => ({
          environment_id: env.id,
          key: r.key,
          type: r.type,
          value_sealed: r.value_sealed,
          expires_at: r.expires_at,
          action: 'deleted' as const,
          changed_by: principal.userId,
          changed_at: now,
        })),
      )
      .execute(),
  );
  await bumpRevision(trx, env.id);
  return rows.map((r) => r.key);
}

export async function deleteVar(deps: Deps, principal: Principal, projectId: string, envName: string, key: string) {
  const { env } = await envForWrite(deps, principal, projectId, envName);
  await deps.db.transaction().execute(async (trx) => {
    const deleted = await deleteKeys(deps, trx, principal, env, [key]);
    if (deleted.length === 0) throw notFound(`variable "${key}"`);
    await recordAudit(
      trx,
      auditRow(deps.clock, principal, { action: 'var.delete', projectId, targetEnv: envName, targetKey: key }),
    );
    await emitEvent(deps, trx, principal, 'var.delete', projectId, envName, { keys: [key] });
  });
}

export async function bulkDelete(deps: Deps, principal: Principal, projectId: string, envName: string, keys: string[]) {
  const { env } = await envForWrite(deps, principal, projectId, envName);
  return deps.db.transaction().execute(async (trx) => {
    let deleted: string[] = [];
    const unique = [...new Set(keys)];
    for (let i = 0; i < unique.length; i += CHUNK) {
      deleted = deleted.concat(await deleteKeys(deps, trx, principal, env, unique.slice(i, i + CHUNK)));
    }
    await recordAudit(
      trx,
      auditRow(deps.clock, principal, {
        action: 'vars.bulk_delete',
        projectId,
        targetEnv: envName,
        detail: { keys: deleted },
      }),
    );
    await emitEvent(deps, trx, principal, 'vars.bulk_delete', projectId, envName, { keys: deleted });
    return { deleted: deleted.length };
  });
}

/** D27: history masks exactly as listings do; reveal needs write permission. Newest first. */
export async function history(
  deps: Deps,
  principal: Principal,
  projectId: string,
  envName: string,
  key: string,
  reveal: boolean,
): Promise<HistoryEntry[]> {
  const { access, env } = await envForRead(deps, principal, projectId, envName, reveal);
  const rows = await deps.db
    .selectFrom('variable_history')
    .selectAll()
    .where('environment_id', '=', env.id)
    .where('key', '=', key)
    .orderBy('id', 'desc')
    .execute();
  if (rows.length === 0) throw notFound(`history of "${key}"`);
  if (reveal) {
    await deps.auditBatcher.append(
      auditRow(deps.clock, principal, {
        action: 'var.reveal',
        projectId,
        targetEnv: envName,
        targetKey: key,
        detail: { history: true },
      }),
    );
  }
  return rows.map((r) => ({
    id: Number(r.id),
    value:
      r.type === 'secret' && !reveal
        ? MASK
        : deps.keyring.decryptValue(access.project.id, access.project.wrapped_key, env.id, key, r.value_sealed),
    type: r.type,
    action: r.action,
    changedBy: r.changed_by,
    changedAt: r.changed_at,
  }));
}

/** Restores the value, type and expiry of a history entry (re-creating a deleted key, D27). */
export async function restore(
  deps: Deps,
  principal: Principal,
  projectId: string,
  envName: string,
  key: string,
  versionId: number,
) {
  const { access, env } = await envForWrite(deps, principal, projectId, envName);
  const now = deps.clock.now().toISOString();
  return deps.db.transaction().execute(async (trx) => {
    const entry = await trx
      .selectFrom('variable_history')
      .selectAll()
      .where('id', '=', versionId)
      .where('environment_id', '=', env.id)
      .where('key', '=', key)
      .executeTakeFirst();
    if (!entry) throw notFound(`history entry ${versionId} of "${key}"`);
    await emitEvent(deps, trx, principal, 'var.restore', projectId, envName, { changes: keyChange(trx, env.id, key) });
    // The sealed value is bound to (project, environment, key), which restore keeps: copy it as it is.
    const values = {
      type: entry.type,
      value_sealed: entry.value_sealed,
      expires_at: entry.expires_at,
      updated_at: now,
    };
    await trx
      .insertInto('variables')
      .values({ environment_id: env.id, key, created_at: now, ...values })
      .onConflict((oc) => oc.columns(['environment_id', 'key']).doUpdateSet(values))
      .execute();
    await recordVersion(
      trx,
      {
        environment_id: env.id,
        key,
        type: entry.type,
        value_sealed: entry.value_sealed,
        expires_at: entry.expires_at,
        action: 'restored',
      },
      principal,
      now,
    );
    await recordAudit(
      trx,
      auditRow(deps.clock, principal, {
        action: 'var.restore',
        projectId,
        targetEnv: envName,
        targetKey: key,
        detail: { versionId },
      }),
    );
    const value =
      entry.type === 'secret'
        ? MASK
        : deps.keyring.decryptValue(access.project.id, access.project.wrapped_key, env.id, key, entry.value_sealed);
    return { key, value, type: entry.type, updatedAt: now };
  });
}

export { envPermission };
