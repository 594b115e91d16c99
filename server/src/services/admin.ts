import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db, DbHandle } from '../db/index.js';
import { unwrapProjectKey, wrapProjectKey } from '../lib/crypto.js';
import { MASTER_KEY_FILE } from '../lib/master-key.js';
import { PLANS } from '../lib/plans.js';

export interface AdminResult {
  ok: boolean;
  message: string;
}

/**
 * Re-wraps every project data key under a new master key in one transaction: values stay as they are,
 * since they are encrypted under the project keys. Every key is unwrapped first, so a wrong current master
 * key changes nothing. With a key file in DATA_DIR, the file is replaced after the commit.
 */
export async function rewrapKeys(
  handle: DbHandle,
  current: Buffer,
  next: Buffer,
  opts: { dataDir: string; keyFromFile: boolean },
): Promise<AdminResult> {
  const count = await handle.db.transaction().execute(async (trx) => {
    const projects = await trx.selectFrom('projects').select(['id', 'wrapped_key']).execute();
    const rewrapped = projects.map((p) => ({
      id: p.id,
      wrapped: wrapProjectKey(next, p.id, unwrapProjectKey(current, p.id, p.wrapped_key)),
    }));
    for (const p of rewrapped) {
      await trx.updateTable('projects').set({ wrapped_key: p.wrapped }).where('id', '=', p.id).execute();
    }
    return rewrapped.length;
  });
  if (opts.keyFromFile) {
    const file = join(opts.dataDir, MASTER_KEY_FILE);
    writeFileSync(`${file}.new`, `${next.toString('base64')}\n`, { mode: 0o600 });
    renameSync(`${file}.new`, file);
    return { ok: true, message: `re-wrapped ${count} project keys; ${file} now holds the new master key` };
  }
  return {
    ok: true,
    message: `re-wrapped ${count} project keys; restart every instance with MASTER_KEY set to the new key`,
  };
}

/** D15: the operator's way to change a workspace's plan (there is no public endpoint for it). */
export async function setPlan(db: Db, workspace: string, plan: string): Promise<AdminResult> {
  if (!(plan in PLANS))
    return { ok: false, message: `unknown plan "${plan}"; use one of ${Object.keys(PLANS).join(', ')}` };
  const res = await db
    .updateTable('workspaces')
    .set({ plan })
    .where((eb) => eb.or([eb('id', '=', workspace), eb('slug', '=', workspace)]))
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) return { ok: false, message: `no workspace with id or slug "${workspace}"` };
  return { ok: true, message: `workspace ${workspace} is now on the ${plan} plan` };
}
