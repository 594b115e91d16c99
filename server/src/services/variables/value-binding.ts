import type { Db } from '../../db/index.js';
import { DecryptionError, isLegacyValue, type ProjectKeyring, type ValueRole } from '../../lib/crypto.js';

/**
 * Values sealed before their role was bound (`v1.`: a history ciphertext copied into the
 * variable's row would open as its current value) are re-sealed once, in their role, at start-up, before
 * the server answers anything. Idempotent and safe with several instances starting at once: each row is
 * replaced only if it still holds the ciphertext that was read. A `v1.` value that does not open (it was
 * already damaged) is left as it is and stays unreadable (DECRYPT_FAILED). Returns how many were re-sealed.
 */
export async function bindLegacyValues(deps: { db: Db; keyring: ProjectKeyring }): Promise<number> {
  const { db, keyring } = deps;
  let count = 0;
  const reseal = (row: Row, role: ValueRole): string | null => {
    const at = { projectId: row.project_id, wrapped: row.wrapped_key, environmentId: row.environment_id, key: row.key };
    try {
      return keyring.encryptValue(at, keyring.decryptLegacyValue(at, row.value_sealed), role);
    } catch (e) {
      if (e instanceof DecryptionError) return null;
      throw e;
    }
  };
  const current = await db
    .selectFrom('variables as v')
    .innerJoin('environments as e', 'e.id', 'v.environment_id')
    .innerJoin('projects as p', 'p.id', 'e.project_id')
    .select(['v.environment_id', 'v.key', 'v.value_sealed', 'p.id as project_id', 'p.wrapped_key'])
    .where('v.value_sealed', 'like', 'v1.%')
    .execute();
  for (const row of current) {
    const sealed = isLegacyValue(row.value_sealed) ? reseal(row, 'current') : null;
    if (sealed === null) continue;
    const res = await db
      .updateTable('variables')
      .set({ value_sealed: sealed })
      .where('environment_id', '=', row.environment_id)
      .where('key', '=', row.key)
      .where('value_sealed', '=', row.value_sealed)
      .executeTakeFirst();
    count += Number(res.numUpdatedRows);
  }
  const history = await db
    .selectFrom('variable_history as v')
    .innerJoin('environments as e', 'e.id', 'v.environment_id')
    .innerJoin('projects as p', 'p.id', 'e.project_id')
    .select(['v.id', 'v.environment_id', 'v.key', 'v.value_sealed', 'p.id as project_id', 'p.wrapped_key'])
    .where('v.value_sealed', 'like', 'v1.%')
    .execute();
  for (const row of history) {
    const sealed = isLegacyValue(row.value_sealed) ? reseal(row, 'history') : null;
    if (sealed === null) continue;
    const res = await db
      .updateTable('variable_history')
      .set({ value_sealed: sealed })
      .where('id', '=', row.id)
      .where('value_sealed', '=', row.value_sealed)
      .executeTakeFirst();
    count += Number(res.numUpdatedRows);
  }
  return count;
}

interface Row {
  environment_id: string;
  key: string;
  value_sealed: string;
  project_id: string;
  wrapped_key: string;
}
