import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EpochCache } from '../src/db/epoch-cache.js';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';

/**
 * The per-process cache of authentication and authorization rows (db/epoch-cache.ts, ADR 0007) must never
 * answer from rows the database no longer holds. Changes here are made behind the server's back, on a
 * second connection to the same SQLite file (as another process or an operator's sqlite3 would), so only
 * the triggers of migration T05 can tell the server about them.
 */
describe.skipIf(dialectName !== 'sqlite')('epoch-validated read cache (sqlite)', () => {
  let srv: TestApp;
  let other: Database.Database;
  let jwt: string;
  let project: { id: string };
  const pullUrl = () => `/v1/projects/${project.id}/envs/dev/pull?metadata=false`;

  beforeAll(async () => {
    srv = await startApp();
    other = new Database(join(srv.dataDir, 'svcenv.db'));
    ({ jwt } = await signupUser(srv, 'Cache'));
    project = await createProject(srv, jwt);
    await upsert(srv, jwt, project.id, ['dev', 'staging'], [{ key: 'A', value: 'one', type: 'plain' }]);
  });
  afterAll(async () => {
    other.close();
    await srv.stop();
  });

  it('sees a token revoked by another connection on the next request', async () => {
    const tok = await createToken(srv, jwt, { scope: 'read' });
    expect((await srv.request('GET', pullUrl(), { token: tok.token })).text).toBe('A=one\n');
    expect((await srv.request('GET', pullUrl(), { token: tok.token })).status).toBe(200); // now cached
    other.prepare('update access_tokens set revoked_at = ? where id = ?').run(new Date().toISOString(), tok.id);
    const res = await srv.request('GET', pullUrl(), { token: tok.token });
    expect(res.status).toBe(401);
    expect(res.error.message).toMatch(/revoked/);
  });

  it('refuses every one of many pulls sent together after a revocation by another connection', async () => {
    const tok = await createToken(srv, jwt, { scope: 'read' });
    expect((await srv.request('GET', pullUrl(), { token: tok.token })).status).toBe(200);
    other.prepare('update access_tokens set revoked_at = ? where id = ?').run(new Date().toISOString(), tok.id);
    // Read from their sockets in the same turns, they share counter reads (ADR 0007, seventh round).
    const pulls = await Promise.all(
      Array.from({ length: 30 }, () => srv.request('GET', pullUrl(), { token: tok.token })),
    );
    expect(pulls.map((r) => r.status)).toEqual(Array(30).fill(401));
  });

  it('sees a token narrowed to other environments, and an environment renamed, on the next request', async () => {
    const tok = await createToken(srv, jwt, { scope: 'read' });
    expect((await srv.request('GET', pullUrl(), { token: tok.token })).status).toBe(200);
    other.prepare(`update access_tokens set envs = '["staging"]' where id = ?`).run(tok.id);
    expect((await srv.request('GET', pullUrl(), { token: tok.token })).status).toBe(403);
    const staging = `/v1/projects/${project.id}/envs/staging/pull?metadata=false`;
    expect((await srv.request('GET', staging, { token: tok.token })).text).toBe('A=one\n');
    other.prepare(`update environments set name = 'stage' where project_id = ? and name = 'staging'`).run(project.id);
    expect((await srv.request('GET', staging, { token: tok.token })).status).toBe(404);
    other.prepare(`update environments set name = 'staging' where project_id = ? and name = 'stage'`).run(project.id);
    expect((await srv.request('GET', staging, { token: tok.token })).status).toBe(200);
  });

  it('sees a session whose member was removed, and a project moved away, on the next request', async () => {
    const owner = await signupUser(srv, 'Second');
    const p = await createProject(srv, owner.jwt);
    expect((await srv.request('GET', `/v1/projects/${p.id}`, { token: owner.jwt })).status).toBe(200);
    other
      .prepare(
        `update projects set workspace_id = (select id from workspaces where id <> projects.workspace_id limit 1) where id = ?`,
      )
      .run(p.id);
    expect((await srv.request('GET', `/v1/projects/${p.id}`, { token: owner.jwt })).status).toBe(404);
    other.prepare('delete from workspace_members where user_id = ?').run(owner.user.id);
    expect((await srv.request('GET', '/v1/projects', { token: owner.jwt })).status).toBe(401);
  });

  it('does not keep what a rolled-back transaction wrote', async () => {
    const tok = await createToken(srv, jwt, { scope: 'read' });
    expect((await srv.request('GET', pullUrl(), { token: tok.token })).status).toBe(200);
    const before = other.prepare('select n from cache_epoch').pluck().get();
    let during: Promise<{ status: number }> | undefined;
    await srv.db.db
      .transaction()
      .execute(async (trx) => {
        await trx
          .updateTable('access_tokens')
          .set({ revoked_at: new Date().toISOString() })
          .where('id', '=', tok.id)
          .execute();
        // A request arriving while the transaction is open must not trust the uncommitted counter.
        during = srv.request('GET', pullUrl(), { token: tok.token });
        await new Promise((r) => setTimeout(r, 50));
        throw new Error('roll back');
      })
      .catch(() => {});
    expect((await during!).status).toBe(200);
    expect(other.prepare('select n from cache_epoch').pluck().get()).toBe(before);
    expect((await srv.request('GET', pullUrl(), { token: tok.token })).status).toBe(200);
    // The next committed change takes the counter to the value the rolled-back one had reached.
    await sql`update access_tokens set revoked_at = ${new Date().toISOString()} where id = ${tok.id}`.execute(
      srv.db.db,
    );
    expect((await srv.request('GET', pullUrl(), { token: tok.token })).status).toBe(401);
  });
});

/** EpochCache.readAfterTurn on a real SQLite file, changed on a second connection. */
describe('one counter read for the requests of a turn', () => {
  const open = () => {
    const dir = mkdtempSync(join(tmpdir(), 'svcenv-epoch-'));
    const db = new Database(join(dir, 'a.db'));
    db.pragma('journal_mode = WAL');
    db.exec(
      'create table cache_epoch (id integer primary key, n integer not null); insert into cache_epoch values (1, 1)',
    );
    const other = new Database(join(dir, 'a.db'));
    return {
      db,
      other,
      close() {
        other.close();
        db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  };

  it('is made after every request that asked for it; one asking after it is made gets a read of its own', async () => {
    const { db, other, close } = open();
    try {
      const cache = new EpochCache(db);
      const first = cache.readAfterTurn();
      const second = cache.readAfterTurn();
      expect(second).toBe(first);
      // Committed after both asked and before the turn ended: their shared read sees it (D33).
      other.prepare('update cache_epoch set n = 2').run();
      expect(await first).toBe(2);
      other.prepare('update cache_epoch set n = 3').run();
      const later = cache.readAfterTurn();
      expect(later).not.toBe(first);
      expect(await later).toBe(3);
    } finally {
      close();
    }
  });

  it('is undefined while a transaction is open on the connection, as a direct read is', async () => {
    const { db, close } = open();
    try {
      const cache = new EpochCache(db);
      db.exec('begin');
      const during = cache.readAfterTurn();
      expect(await during).toBeUndefined();
      db.exec('rollback');
      expect(await cache.readAfterTurn()).toBe(1);
    } finally {
      close();
    }
  });
});
