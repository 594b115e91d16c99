import { MAX_REVISION, type Revision } from '@svcenv/contract';
import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { decodeCursor, encodeCursor } from '../../lib/cursor.js';
import { notFound } from '../../lib/errors.js';
import { authorizeEnv, type EnvFull, type EnvTarget } from '../core/authz.js';
import { checkRevision, recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import { type EnvSealer, envSealer, type PlainVar, type VarType } from '../core/values.js';
import { recordVersions, restoreVersion, type SealedVersion } from './history.js';

/**
 * Versions of a whole environment (D44, D45): the revision list, the state right after a revision, and
 * rollback to it. Every write records its revision through `recordChange` (services/core/changes.ts), and each
 * history entry carries the revision it belongs to (migration 2026-11-25T02).
 */

/** D44: the revisions of an environment, newest first, paged like the audit log. */
export async function listRevisions(
  ctx: Ctx,
  input: EnvTarget & { limit: number; cursor?: string | undefined },
): Promise<{ revisions: Revision[]; nextCursor: string }> {
  const { env } = await authorizeEnv(ctx, { ...input, need: 'read' });
  const before = decodeCursor(input.cursor, MAX_REVISION);
  let q = ctx.deps.db.selectFrom('env_revisions').selectAll().where('environment_id', '=', env.id);
  if (before !== null) q = q.where('revision', '<', before);
  const rows = await q
    .orderBy('revision', 'desc')
    .limit(input.limit + 1)
    .execute();
  const page = rows.slice(0, input.limit);
  return {
    revisions: page.map((r) => ({
      revision: Number(r.revision),
      createdAt: r.created_at,
      actor: r.actor_name,
      action: r.action,
      created: JSON.parse(r.created) as string[],
      updated: JSON.parse(r.updated) as string[],
      deleted: JSON.parse(r.deleted) as string[],
    })),
    nextCursor: rows.length > input.limit ? encodeCursor(Number(page[page.length - 1]!.revision)) : '',
  };
}

/** A key's version in the history: what the environment held for it right after some revision. */
interface StoredVersion {
  key: string;
  type: VarType;
  value_sealed: string;
  expires_at: string | null;
  action: 'created' | 'updated' | 'deleted' | 'restored';
  changed_at: string;
}

/**
 * The environment's keys right after `revision`, each with its latest history entry at or before it
 * (deleted keys left out). One index step per key (a loose index scan over (environment_id, key,
 * revision)): the cost follows the number of keys the environment ever had, not the length of its history.
 */
async function stateAt(db: Db, envId: string, revision: number): Promise<Map<string, StoredVersion>> {
  const rows = await sql<StoredVersion>`
    with recursive keys(k) as (
      select min(key) from variable_history where environment_id = ${envId}
      union all
      select (select min(key) from variable_history where environment_id = ${envId} and key > keys.k)
      from keys where keys.k is not null
    )
    select h.key, h.type, h.value_sealed, h.expires_at, h.action, h.changed_at
    from keys join variable_history h on h.id = (
      select h2.id from variable_history h2
      where h2.environment_id = ${envId} and h2.key = keys.k and h2.revision <= ${revision}
      order by h2.revision desc, h2.id desc limit 1
    )
    where keys.k is not null`.execute(db);
  return new Map(rows.rows.filter((r) => r.action !== 'deleted').map((r) => [r.key, r]));
}

/** 404 unless the revision was recorded (D44: an unknown revision is NOT_FOUND). */
async function requireRevision(db: Db, env: EnvFull, revision: number): Promise<void> {
  const row = await db
    .selectFrom('env_revisions')
    .select('revision')
    .where('environment_id', '=', env.id)
    .where('revision', '=', revision)
    .executeTakeFirst();
  if (!row) throw notFound(`revision ${revision} of environment "${env.name}"`);
}

/** D44: the environment's variables, decrypted, as they were right after `revision`. */
export async function valuesAt(
  ctx: Ctx,
  sealer: EnvSealer,
  env: EnvFull,
  revision: number,
): Promise<Map<string, PlainVar>> {
  await requireRevision(ctx.deps.db, env, revision);
  const state = await stateAt(ctx.deps.db, env.id, revision);
  const out = new Map<string, PlainVar>();
  for (const [key, v] of [...state].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    out.set(key, {
      value: sealer.open(key, v.value_sealed, 'history'),
      type: v.type,
      updatedAt: v.changed_at,
      expiresAt: v.expires_at,
    });
  }
  return out;
}

/**
 * D45: makes the environment's variables equal to their state right after `revision`, in one transaction
 * and one new revision: each key that differs gets a `restored` history entry (its value, type and expiry
 * then), each key that did not exist then a `deleted` one; one audit row and one webhook event `env.rollback`.
 * Nothing to change: the same answer with empty lists, and no revision.
 */
export async function rollback(
  ctx: Ctx,
  input: EnvTarget & { revision: number; ifRevision?: number | undefined },
): Promise<{ revision: number; created: string[]; updated: string[]; deleted: string[] }> {
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'direct-write' });
  const sealer = envSealer(ctx.deps.keyring, access, env);
  const now = ctx.deps.clock.now().toISOString();
  return ctx.deps.db.transaction().execute(async (trx) => {
    await checkRevision(trx, ctx.deps, env.id, input.ifRevision);
    await requireRevision(trx, env, input.revision);
    const then = await stateAt(trx, env.id, input.revision);
    const current = await trx
      .selectFrom('variables')
      .select(['key', 'type', 'value_sealed', 'expires_at'])
      .where('environment_id', '=', env.id)
      .execute();
    const nowByKey = new Map(current.map((r) => [r.key, r]));
    const created: string[] = [];
    const updated: string[] = [];
    const deleted: string[] = [];
    /** The keys to restore, with the value of revision N (opened once, for the comparison and the restore). */
    const restoredValues = new Map<string, string>();
    for (const [key, v] of then) {
      const value = sealer.open(key, v.value_sealed, 'history');
      const cur = nowByKey.get(key);
      if (cur) {
        const same =
          cur.type === v.type && cur.expires_at === v.expires_at && openOrNull(sealer, key, cur.value_sealed) === value;
        if (same) continue;
        updated.push(key);
      } else {
        created.push(key);
      }
      restoredValues.set(key, value);
    }
    for (const key of nowByKey.keys()) if (!then.has(key)) deleted.push(key);
    const currentRevision = env.revision;
    if (created.length + updated.length + deleted.length === 0) {
      return { revision: Number(currentRevision), created, updated, deleted };
    }
    const revision = await recordChange(trx, ctx, {
      action: 'env.rollback',
      projectId: input.projectId,
      targetEnv: env.name,
      detail: { toRevision: input.revision, created, updated, deleted },
      revision: { envId: env.id, created, updated, deleted },
      event: { keys: [...created, ...updated, ...deleted], created, updated },
    });
    const versions: (SealedVersion & { action: 'restored' | 'deleted' })[] = [];
    for (const [key, value] of restoredValues) {
      // The entry of revision N is already a history ciphertext of this key: it is the restored version.
      const v = then.get(key)!;
      await restoreVersion(trx, sealer, env, v, now, value);
      versions.push({ ...v, action: 'restored' });
    }
    for (const key of deleted) {
      const cur = nowByKey.get(key)!;
      await trx.deleteFrom('variables').where('environment_id', '=', env.id).where('key', '=', key).execute();
      versions.push({ ...cur, value_sealed: sealer.toHistory(key, cur.value_sealed), action: 'deleted' });
    }
    await recordVersions(trx, ctx, env, { now, revision: revision! }, versions);
    return { revision: revision!, created, updated, deleted };
  });
}

/** The current value, or null when it does not decrypt (a rollback then replaces it). */
function openOrNull(sealer: EnvSealer, key: string, sealed: string): string | null {
  try {
    return sealer.open(key, sealed, 'current');
  } catch {
    return null;
  }
}
