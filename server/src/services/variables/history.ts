import type { Db } from '../../db/index.js';
import type { Ctx } from '../core/context.js';
import type { EnvSealer, VarType } from '../core/values.js';

/**
 * The history of variables (D27) as every write records it, and the one way a stored version becomes the
 * variable again (restore of one key, rollback of an environment).
 */

export type HistoryAction = 'created' | 'updated' | 'deleted' | 'restored';

/** A version of one key as the history table holds it (sealed in the `history` role, values.ts). */
export interface SealedVersion {
  key: string;
  type: VarType;
  value_sealed: string;
  expires_at: string | null;
}

export const CHUNK = 500;
export async function insertChunked<T>(items: T[], insert: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += CHUNK) await insert(items.slice(i, i + CHUNK));
}

/**
 * History entries (D27) for the versions just written in `env`, by the caller, at `now`, in revision
 * `revision` (D44). Each entry holds the version as it now stands, expiry included, so that restoring it
 * restores that too.
 */
export async function recordVersions(
  trx: Db,
  ctx: Ctx,
  env: { id: string },
  at: { now: string; revision: number },
  versions: (SealedVersion & { action: HistoryAction })[],
): Promise<void> {
  const by = ctx.principal.userId;
  await insertChunked(versions, (chunk) =>
    trx
      .insertInto('variable_history')
      .values(
        chunk.map((v) => ({
          environment_id: env.id,
          key: v.key,
          type: v.type,
          value_sealed: v.value_sealed,
          expires_at: v.expires_at,
          action: v.action,
          changed_by: by,
          changed_at: at.now,
          revision: at.revision,
        })),
      )
      .execute(),
  );
}

/**
 * Makes a stored history version the variable's value again (its value, type and expiry), re-creating a
 * deleted key. A history ciphertext does not open as the variable's value (values.ts): it is opened and
 * re-sealed in that role. Returns the plaintext; the caller records the `restored` entry, which may take
 * the version's own ciphertext, being a history entry of the same key. `plain`: the version's value when the
 * caller has opened it already (rollback compares it first).
 */
export async function restoreVersion(
  trx: Db,
  sealer: EnvSealer,
  env: { id: string },
  version: SealedVersion,
  now: string,
  plain: string = sealer.open(version.key, version.value_sealed, 'history'),
): Promise<string> {
  const row = {
    type: version.type,
    value_sealed: sealer.seal(version.key, plain, 'current'),
    expires_at: version.expires_at,
    updated_at: now,
  };
  await trx
    .insertInto('variables')
    .values({ environment_id: env.id, key: version.key, created_at: now, ...row })
    .onConflict((oc) => oc.columns(['environment_id', 'key']).doUpdateSet(row))
    .execute();
  return plain;
}
