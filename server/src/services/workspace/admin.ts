import { chmodSync, existsSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import type { Db, DbHandle } from '../../db/index.js';
import { DecryptionError, ProjectKeyring, unwrapProjectKey, wrapProjectKey } from '../../lib/crypto.js';
import { MASTER_KEY_FILE } from '../../lib/master-key.js';
import { PLANS } from '../../lib/plans.js';

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

/**
 * D69: makes the account with `email` an administrator of the instance (the first account is one already).
 * Another administrator can then be made from the dashboard's Instance page too.
 */
export async function grantAdmin(db: Db, email: string): Promise<AdminResult> {
  const address = email.trim().toLowerCase();
  const res = await db.updateTable('users').set({ instance_admin: 1 }).where('email', '=', address).executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) return { ok: false, message: `no account with the email "${address}"` };
  return { ok: true, message: `${address} is now an administrator of this instance` };
}

/**
 * D53: a consistent copy of the embedded database while the server runs, through SQLite's online backup
 * (a read transaction of its own: writers go on, the copy is the state at one moment). Restore: stop the
 * server and put the file in DATA_DIR as svcenv.db. PostgreSQL has its own tool.
 */
export async function backup(opts: { dataDir: string; databaseUrl?: string | undefined }, file: string) {
  if (opts.databaseUrl) {
    return {
      ok: false,
      message:
        'with DATABASE_URL the data is in PostgreSQL: back it up with pg_dump (e.g. `pg_dump --format=custom "$DATABASE_URL" > svcenv.dump`); restore with pg_restore into an empty database',
    };
  }
  const source = join(opts.dataDir, 'svcenv.db');
  if (!existsSync(source)) return { ok: false, message: `no database at ${source} (check DATA_DIR)` };
  const db = new SQLite(source, { readonly: true, fileMustExist: true });
  try {
    // Written beside the target and renamed, so that a failed copy never leaves a half file at `file`.
    const partial = `${file}.partial`;
    await db.backup(partial);
    chmodSync(partial, 0o600);
    renameSync(partial, file);
  } finally {
    db.close();
  }
  return {
    ok: true,
    message: `backed up ${source} to ${file} (mode 0600); restore: stop the server, copy it to DATA_DIR/svcenv.db, keep the same master key`,
  };
}

/**
 * D53: decrypts every stored value (variables, history entries) with its project key and counts the rows
 * checked and failed, by table. Never prints a value; a failure names the project, environment and key, so
 * that an admin can restore or set it again. Exit status 1 on any failure.
 */
export async function verify(db: Db, masterKey: Buffer): Promise<AdminResult> {
  const keyring = new ProjectKeyring(masterKey);
  const failures: string[] = [];
  const counts = { values: 0, history: 0 };
  const place = (r: { project_id: string; env_name: string; key: string }) => `${r.project_id}/${r.env_name}/${r.key}`;
  const tables = [
    ['variables', 'values', 'current'],
    ['variable_history', 'history', 'history'],
  ] as const;
  for (const [table, counter, role] of tables) {
    const rows = await db
      // Both tables have the columns read here; the cast only picks one for the types.
      .selectFrom(`${table} as v` as 'variables as v')
      .innerJoin('environments as e', 'e.id', 'v.environment_id')
      .innerJoin('projects as p', 'p.id', 'e.project_id')
      .select([
        'v.environment_id',
        'v.key',
        'v.value_sealed',
        'p.id as project_id',
        'p.wrapped_key',
        'e.name as env_name',
      ])
      .execute();
    for (const r of rows) {
      counts[counter]++;
      const at = { projectId: r.project_id, wrapped: r.wrapped_key, environmentId: r.environment_id, key: r.key };
      try {
        keyring.decryptValue(at, r.value_sealed, role);
      } catch (e) {
        if (!(e instanceof DecryptionError)) throw e;
        failures.push(`${counter === 'values' ? 'value' : 'history entry'} ${place(r)}`);
      }
    }
  }
  const summary = `checked ${counts.values} values and ${counts.history} history entries: ${failures.length} failed`;
  return { ok: failures.length === 0, message: [summary, ...failures.map((f) => `  cannot decrypt ${f}`)].join('\n') };
}
