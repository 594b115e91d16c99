import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
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
