import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { billing, workspace } from '@svcenv/contract';
import { operations } from '@svcenv/contract/operations';
import { describe, expect, it } from 'vitest';
import { openDb } from '../src/db/index.js';
import { createProject, createToken, freshPgSchema, repoRoot, signupUser, startServer, upsert } from './harness.js';

function admin(args: string[], env: Record<string, string>) {
  return spawnSync(
    join(repoRoot, 'node_modules', '.bin', 'tsx'),
    [join(repoRoot, 'server', 'src', 'admin.ts'), ...args],
    {
      env: { PATH: process.env.PATH, ...env },
      encoding: 'utf8',
    },
  );
}

async function storage() {
  if (!process.env.TEST_DATABASE_URL) return { env: {} as Record<string, string>, drop: async () => {} };
  const s = await freshPgSchema();
  return { env: { DATABASE_URL: s.url, MASTER_KEY: randomBytes(32).toString('base64') }, drop: s.drop };
}

describe('admin commands (server/src/admin.ts)', () => {
  it('changes a workspace plan by slug (D15)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-admin-'));
    const st = await storage();
    const srv = await startServer({ dataDir, env: st.env });
    try {
      const { jwt } = await signupUser(srv, 'Plan');
      const ws = (await srv.request('GET', '/v1/workspace', { token: jwt, schema: workspace })).body;
      const res = admin(['set-plan', ws.slug, 'team'], { DATA_DIR: dataDir, ...st.env });
      expect(res.stderr).toBe('');
      expect(res.status).toBe(0);
      const plan = await srv.request('GET', '/v1/workspace/billing', { token: jwt, schema: billing });
      expect(plan.body).toMatchObject({ plan: 'team', limits: { projects: 20, members: 25, envsPerProject: 10 } });
      expect(admin(['set-plan', ws.slug, 'platinum'], { DATA_DIR: dataDir, ...st.env }).status).toBe(1);
      expect(admin(['set-plan', 'no-such-workspace', 'team'], { DATA_DIR: dataDir, ...st.env }).status).toBe(1);
    } finally {
      await srv.stop();
      await st.drop();
    }
  });

  it('grant-admin makes another account an instance administrator (D69)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-grant-'));
    const st = await storage();
    const srv = await startServer({ dataDir, env: st.env });
    try {
      const first = await signupUser(srv, 'First');
      const other = await signupUser(srv, 'Other');
      const flag = async (jwt: string) => (await srv.call(operations.getMe, {}, jwt)).body.user.instanceAdmin;
      expect(await flag(first.jwt)).toBe(true);
      expect(await flag(other.jwt)).toBe(false);
      expect((await srv.call(operations.adminListUsers, {}, other.jwt)).status).toBe(403);
      const res = admin(['grant-admin', other.email.toUpperCase()], { DATA_DIR: dataDir, ...st.env });
      expect(res.stderr).toBe('');
      expect(res.status).toBe(0);
      expect(res.stdout).toContain('is now an administrator');
      // Read from the database on the next request: the same session now passes.
      expect(await flag(other.jwt)).toBe(true);
      expect((await srv.call(operations.adminListUsers, {}, other.jwt)).status).toBe(200);
      const unknown = admin(['grant-admin', 'nobody@example.test'], { DATA_DIR: dataDir, ...st.env });
      expect(unknown.status).toBe(1);
      expect(admin(['grant-admin'], { DATA_DIR: dataDir, ...st.env }).status).toBe(1);
    } finally {
      await srv.stop();
      await st.drop();
    }
  });

  it('re-wraps every project key under a new master key; values stay readable, the old key no longer works', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-rewrap-'));
    const st = await storage();
    const first = await startServer({ dataDir, env: st.env });
    const { jwt } = await signupUser(first, 'Key');
    const p = await createProject(first, jwt);
    await upsert(first, jwt, p.id, ['dev'], [{ key: 'SECRET', value: 'survives-rotation', type: 'secret' }]);
    const { token } = await createToken(first, jwt);
    await first.stop();

    const next = randomBytes(32).toString('base64');
    const res = admin(['rewrap-keys'], { DATA_DIR: dataDir, NEW_MASTER_KEY: next, ...st.env });
    expect(res.status).toBe(0);
    expect(res.stdout).toContain('re-wrapped 1 project keys');
    expect(res.stdout + res.stderr).not.toContain(next);
    if (!st.env.MASTER_KEY) {
      expect(readFileSync(join(dataDir, 'master.key'), 'utf8').trim()).toBe(next);
      expect(statSync(join(dataDir, 'master.key')).mode & 0o777).toBe(0o600);
    }
    const env = st.env.MASTER_KEY ? { ...st.env, MASTER_KEY: next } : st.env;
    const second = await startServer({ dataDir, env });
    try {
      const pulled = await second.request('GET', `/v1/projects/${p.id}/envs/dev/pull?metadata=false`, { token });
      expect(pulled.status).toBe(200);
      expect(pulled.text).toBe('SECRET=survives-rotation\n');
      // Logins still work: the JWT key derives from the master key, so old sessions end with the rotation.
      expect((await second.request('GET', '/v1/auth/session', { token: jwt })).status).toBe(401);
    } finally {
      await second.stop();
      await st.drop();
    }
    expect(admin(['rewrap-keys'], { DATA_DIR: dataDir, NEW_MASTER_KEY: 'short', ...st.env }).status).toBe(1);
  });

  it('backs up the embedded database while the server runs; the copy restores every value (D53)', async () => {
    const st = await storage();
    if (st.env.DATABASE_URL) {
      const res = admin(['backup', join(tmpdir(), 'never.db')], { DATA_DIR: tmpdir(), ...st.env });
      expect(res.status).toBe(1);
      expect(res.stderr).toContain('pg_dump');
      await st.drop();
      return;
    }
    const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-backup-'));
    const srv = await startServer({ dataDir });
    const { jwt } = await signupUser(srv, 'Backup');
    const p = await createProject(srv, jwt);
    await upsert(srv, jwt, p.id, ['dev'], [{ key: 'KEPT', value: 'in-the-copy', type: 'secret' }]);
    const { token } = await createToken(srv, jwt);
    const copy = join(mkdtempSync(join(tmpdir(), 'svcenv-backup-out-')), 'svcenv-backup.db');
    // Writes go on while the copy is made.
    const writing = upsert(srv, jwt, p.id, ['dev'], [{ key: 'DURING', value: 'x', type: 'plain' }]);
    const res = admin(['backup', copy], { DATA_DIR: dataDir });
    await writing;
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    expect(statSync(copy).mode & 0o777).toBe(0o600);
    await srv.stop();
    // Restore: a new DATA_DIR with the copy as svcenv.db and the same master key file.
    const restored = mkdtempSync(join(tmpdir(), 'svcenv-restored-'));
    copyFileSync(copy, join(restored, 'svcenv.db'));
    copyFileSync(join(dataDir, 'master.key'), join(restored, 'master.key'));
    const again = await startServer({ dataDir: restored });
    try {
      const pulled = await again.request('GET', `/v1/projects/${p.id}/envs/dev/pull?metadata=false`, { token });
      expect(pulled.status).toBe(200);
      expect(pulled.text).toContain('KEPT=in-the-copy\n');
    } finally {
      await again.stop();
    }
  });

  it('verifies every stored value and names what cannot be decrypted, never a value (D53)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-verify-'));
    const st = await storage();
    const srv = await startServer({ dataDir, env: st.env });
    const { jwt } = await signupUser(srv, 'Verify');
    const p = await createProject(srv, jwt);
    await upsert(
      srv,
      jwt,
      p.id,
      ['dev'],
      [
        { key: 'GOOD', value: 'fine-value', type: 'secret' },
        { key: 'DAMAGED', value: 'damaged-value', type: 'secret' },
      ],
    );
    await srv.stop();
    try {
      const ok = admin(['verify'], { DATA_DIR: dataDir, ...st.env });
      expect(ok.stderr).toBe('');
      expect(ok.stdout).toBe('checked 2 values and 2 history entries: 0 failed\n');
      expect(ok.status).toBe(0);
      // Someone copies one row's ciphertext over another's.
      const db = openDb({ dataDir, databaseUrl: st.env.DATABASE_URL });
      const good = await db.db
        .selectFrom('variables')
        .select('value_sealed')
        .where('key', '=', 'GOOD')
        .executeTakeFirstOrThrow();
      await db.db
        .updateTable('variables')
        .set({ value_sealed: good.value_sealed })
        .where('key', '=', 'DAMAGED')
        .execute();
      await db.close();
      const bad = admin(['verify'], { DATA_DIR: dataDir, ...st.env });
      expect(bad.status).toBe(1);
      expect(bad.stdout).toContain('checked 2 values and 2 history entries: 1 failed');
      expect(bad.stdout).toContain(`cannot decrypt value ${p.id}/dev/DAMAGED`);
      expect(bad.stdout + bad.stderr).not.toMatch(/fine-value|damaged-value/);
    } finally {
      await st.drop();
    }
  });
});

/**
 * D53: a backup is checked with the distribution's own `sqlite3` (Debian 12: SQLite 3.40; Ubuntu 24.04: 3.45),
 * not only with the SQLite bundled in better-sqlite3. No schema object may need a function newer than 3.40:
 * before migration 2026-12-03T00-portable-audit-keys, `PRAGMA integrity_check` failed there with `unknown
 * function: unhex()`. Skipped when sqlite3 is absent, except under CI=true (.ci/run installs it).
 */
const SQLITE3 = ['/usr/bin/sqlite3', '/usr/local/bin/sqlite3'].find((p) => existsSync(p));
if (!SQLITE3 && process.env.CI === 'true')
  throw new Error('sqlite3 is missing: apt-get install -y sqlite3 (see .ci/run)');

/** Functions and date modifiers SQLite added after 3.40 (its release notes, 3.41 to 3.51). */
const AFTER_340 = [
  'unhex',
  'subsec',
  'timediff',
  'octet_length',
  'concat',
  'concat_ws',
  'string_agg',
  'json_pretty',
  'unistr',
  'unistr_quote',
  'if',
];
/** Words that stand before a parenthesis in a schema without being a call. */
const NOT_CALLS = new Set([
  'cast',
  'key',
  'unique',
  'check',
  'varchar',
  'char',
  'numeric',
  'decimal',
  'in',
  'exists',
  'default',
  'references',
  'as',
  'values',
  'on',
  'table',
  'index',
]);

describe.skipIf(!SQLITE3)("a backup and the distribution's sqlite3 (D53)", () => {
  const sqlite3 = (file: string, statement: string) => {
    const res = spawnSync(SQLITE3!, ['-batch', '-bail', file, statement], { encoding: 'utf8' });
    return { out: res.stdout, err: res.stderr, status: res.status };
  };

  it('checks a backup of `npm run admin -- backup` as ok, and its schema calls no function newer than 3.40', async () => {
    if (process.env.TEST_DATABASE_URL) return; // the embedded database only (pg_dump otherwise)
    const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-backup-340-'));
    const srv = await startServer({ dataDir });
    const copy = join(mkdtempSync(join(tmpdir(), 'svcenv-backup-340-out-')), 'svcenv-backup.db');
    try {
      // Audit entries of every shape the indexes key: a workspace's, a project's, a person's, a token's pull.
      const { jwt } = await signupUser(srv, 'Portable');
      const p = await createProject(srv, jwt);
      await upsert(srv, jwt, p.id, ['dev'], [{ key: 'KEPT', value: 'in-the-copy', type: 'secret' }]);
      const { token } = await createToken(srv, jwt);
      for (let i = 0; i < 3; i++) {
        expect((await srv.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token })).status).toBe(200);
      }
      // Reading the audit log moves the pulls' entries from the inbox into audit_logs.
      expect((await srv.request('GET', '/v1/workspace/audit', { token: jwt })).status).toBe(200);
      const res = spawnSync('npm', ['run', '--silent', 'admin', '--', 'backup', copy], {
        cwd: repoRoot,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir },
        encoding: 'utf8',
      });
      expect(res.status, res.stderr).toBe(0);
    } finally {
      await srv.stop();
    }
    const version = sqlite3(':memory:', 'select sqlite_version()').out.trim();
    const check = sqlite3(copy, 'pragma integrity_check');
    expect(check.err, `sqlite3 ${version}`).toBe('');
    expect(check.out, `sqlite3 ${version}`).toBe('ok\n');
    expect(sqlite3(copy, 'pragma foreign_key_check').out).toBe('');
    // The indexes were checked over real entries: with project, actor and a token's pulls.
    const counts = sqlite3(
      copy,
      "select count(*), count(project_id), count(actor_id), sum(action = 'vars.pull') from audit_logs",
    );
    const [n, withProject, withActor, pulls] = counts.out.trim().split('|').map(Number);
    expect(n).toBeGreaterThan(5);
    expect(withProject).toBeGreaterThan(0);
    expect(withActor).toBeGreaterThan(0);
    expect(pulls).toBe(3);

    // Every call in the schema (indexes, triggers, views, defaults, checks, generated columns) is one this
    // sqlite3 knows, and none came after 3.40.
    const known = new Set(sqlite3(':memory:', 'select name from pragma_function_list').out.trim().split('\n'));
    const schema = sqlite3(copy, 'select sql from sqlite_master where sql is not null').out;
    const tables = new Set(sqlite3(copy, "select name from sqlite_master where type = 'table'").out.trim().split('\n'));
    const calls = new Set(
      [...schema.matchAll(/\b([A-Za-z_][A-Za-z0-9_]*)\s*\(/g)]
        .map((m) => m[1]!.toLowerCase())
        .filter((w) => !NOT_CALLS.has(w) && !tables.has(w)),
    );
    expect([...calls].sort()).toEqual(expect.arrayContaining(['julianday', 'substr']));
    for (const f of calls) expect(known, `${f}() in the schema, unknown to sqlite3 ${version}`).toContain(f);
    for (const f of AFTER_340) {
      expect(calls.has(f), `${f}() in the schema`).toBe(false);
      expect(schema.toLowerCase()).not.toContain(`'${f}'`);
    }
  });
});
