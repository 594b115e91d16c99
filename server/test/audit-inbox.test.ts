/**
 * The audit inbox (migration 2026-11-29T10-audit-inbox, ADR 0007 eighth round): the entries of reads are
 * committed, before their answer, to an unindexed table, and moved into audit_logs a few hundred at a time or
 * whenever the server is about to read audit_logs. Nothing about it may show through the API: every entry
 * is listed, streamed, pruned and deleted with its project as if it had been written to audit_logs at once.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditPage } from '@svcenv/contract';
import { operations as ops } from '@svcenv/contract/operations';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneAudit } from '../src/jobs/audit-prune.js';
import { DAY_MS, ManualClock } from '../src/lib/clock.js';
import {
  createProject,
  createToken,
  dialectName,
  freshPgSchema,
  pullAuditRow,
  signupUser,
  startApp,
  startServer,
  type TestApp,
  until,
  upsert,
} from './harness.js';
import { type Receiver, startReceiver, streamBatchOf } from './receiver.js';

describe(`audit inbox (${dialectName})`, () => {
  let app: TestApp;
  let rx: Receiver;
  const inbox = () =>
    app.db.db
      .selectFrom('audit_inbox' as never)
      .select('target_key' as never)
      .execute();
  const logged = (workspaceId: string) =>
    app.db.db
      .selectFrom('audit_logs')
      .select(['target_key', 'project_id'])
      .where('workspace_id', '=', workspaceId)
      .where('action', '=', 'vars.pull')
      .orderBy('id')
      .execute();
  const workspaceOf = async (jwt: string) => (await app.call(ops.getSession, {}, jwt)).body.user.workspaceId;

  beforeAll(async () => {
    app = await startApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await app?.stop();
    await rx?.stop();
  });

  it("lists a pull's entry as soon as the pull is answered, though it was committed to the inbox", async () => {
    const owner = await signupUser(app, 'Ines');
    const p = await createProject(app, owner.jwt);
    await upsert(app, owner.jwt, p.id, ['dev'], [{ key: 'A', value: 'a', type: 'plain' }]);
    const { token } = await createToken(app, owner.jwt, { scope: 'read' });
    const pull = await app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token });
    expect(pull.status, pull.text).toBe(200);
    // Durable before the answer, and not yet in audit_logs: the inbox is what this test is about.
    expect(await inbox()).toHaveLength(1);
    expect(await logged(await workspaceOf(owner.jwt))).toEqual([]);
    for (const path of ['/v1/workspace/audit', `/v1/projects/${p.id}/audit`]) {
      const res = await app.request('GET', path, { token: owner.jwt, schema: auditPage });
      expect(res.status, res.text).toBe(200);
      expect(res.body.logs[0]).toMatchObject({ action: 'vars.pull', targetEnv: 'dev', project: { id: p.id } });
    }
    expect(await inbox()).toEqual([]);
  });

  it('moves the inbox into audit_logs once 512 entries wait, with no reader, in commit order', async () => {
    const owner = await signupUser(app, 'Ivo');
    const ws = await workspaceOf(owner.jwt);
    for (let b = 0; b < 6; b++) {
      await app.db.insertAuditRows(Array.from({ length: 100 }, (_, i) => pullAuditRow(ws, null, `k${b * 100 + i}`)));
    }
    // Read without a flush on purpose: the writer moves them by itself right after answering the sixth commit
    // (600 >= 512).
    await until('the move', async () => (await inbox()).length === 0);
    expect((await logged(ws)).map((r) => r.target_key)).toEqual(Array.from({ length: 600 }, (_, i) => `k${i}`));
  });

  it('drops the waiting entries of a deleted project with it, and moves the others', async () => {
    const owner = await signupUser(app, 'Ilse');
    const ws = await workspaceOf(owner.jwt);
    const gone = await createProject(app, owner.jwt, { name: 'gone' });
    const kept = await createProject(app, owner.jwt, { name: 'kept' });
    await app.db.insertAuditRows([
      pullAuditRow(ws, gone.id, 'g1'),
      pullAuditRow(ws, kept.id, 'k1'),
      pullAuditRow(ws, gone.id, 'g2'),
    ]);
    expect(await inbox()).toHaveLength(3);
    const del = await app.request('DELETE', `/v1/projects/${gone.id}`, { token: owner.jwt });
    expect(del.status, del.text).toBe(204);
    await app.db.flushAuditInbox();
    expect(await inbox()).toEqual([]);
    expect(await logged(ws)).toEqual([{ target_key: 'k1', project_id: kept.id }]);
  });

  it.skipIf(dialectName !== 'postgres')(
    'commits an entry while its project is locked: the inbox locks no parent row (PostgreSQL)',
    async () => {
      const owner = await signupUser(app, 'Iona');
      const ws = await workspaceOf(owner.jwt);
      const p = await createProject(app, owner.jwt, { name: 'locked' });
      // A foreign key's check would take `for key share` on the project, which `for update` holds off until
      // this transaction ends (migration 2026-11-29T20-audit-inbox-unchecked: the checks took a multixact per
      // row of concurrent commits).
      const waited = await app.db.db.transaction().execute(async (trx) => {
        await sql`select id from projects where id = ${p.id} for update`.execute(trx);
        const committed = app.db.insertAuditRows([pullAuditRow(ws, p.id, 'while-locked')]).then(() => 'committed');
        return Promise.race([committed, new Promise((r) => setTimeout(() => r('waited'), 2_000))]);
      });
      expect(waited).toBe('committed');
      // Taken down and up again: the foreign keys come back (dropping the entries of gone parents) and go.
      const migration = await import('../src/db/migrations/2026-11-29T20-audit-inbox-unchecked.js');
      await app.db.insertAuditRows([pullAuditRow(ws, randomUUID(), 'orphan')]);
      await migration.down(app.db.db, 'postgres');
      const waiting = (await inbox()).map((r) => (r as { target_key: string }).target_key);
      expect(waiting).toContain('while-locked');
      expect(waiting).not.toContain('orphan');
      const fks = () =>
        sql<{ n: number }>`select count(*)::int as n from pg_constraint
          where conrelid = 'audit_inbox'::regclass and contype = 'f'`.execute(app.db.db);
      expect((await fks()).rows[0]!.n).toBe(2);
      await migration.up(app.db.db, 'postgres');
      expect((await fks()).rows[0]!.n).toBe(0);
      await app.db.flushAuditInbox();
    },
  );

  it("streams a pull's entry with no reader of the log, and none written before the stream", async () => {
    const owner = await signupUser(app, 'Igor');
    const p = await createProject(app, owner.jwt);
    await upsert(app, owner.jwt, p.id, ['dev'], [{ key: 'A', value: 'a', type: 'plain' }]);
    const { token } = await createToken(app, owner.jwt, { scope: 'read' });
    const pull = (format: string) =>
      app.request('GET', `/v1/projects/${p.id}/envs/dev/pull?format=${format}`, { token });
    expect((await pull('dotenv')).status).toBe(200); // before the stream, still in the inbox when it is created
    expect(await inbox()).toHaveLength(1);
    const path = `/inbox-${Date.now()}`;
    const res = await app.call(ops.createAuditStream, { body: { url: rx.url(path) } }, owner.jwt);
    expect(res.status, res.text).toBe(201);
    expect((await pull('json')).status).toBe(200);
    const entries = () =>
      rx.received
        .filter((r) => r.path === path)
        .flatMap((r) => streamBatchOf(r).entries)
        .map((e) => [e.action, (e.detail as { format?: string } | null)?.format]);
    await until('the second pull streamed', () => entries().some(([, format]) => format === 'json'), 5_000);
    expect(entries()).toEqual([
      ['audit_stream.create', undefined],
      ['vars.pull', 'json'],
    ]);
  });
});

describe(`audit inbox and retention (${dialectName})`, () => {
  const t0 = new Date('2026-12-01T00:00:00.000Z');
  const clock = new ManualClock(t0);
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ clock, env: { AUDIT_RETENTION_DAYS: '1' } });
    await app.deps.jobs.stop();
  });
  afterAll(() => app?.stop());

  it('prunes old entries that still wait in the inbox', async () => {
    clock.set(new Date(t0.getTime() + 2 * DAY_MS));
    const owner = await signupUser(app, 'Iris');
    const ws = (await app.call(ops.getSession, {}, owner.jwt)).body.user.workspaceId;
    // The workspace's only old entries, and they are in the inbox: the job has to look there to find them.
    await app.db.insertAuditRows([pullAuditRow(ws, null, 'old1', t0), pullAuditRow(ws, null, 'old2', t0)]);
    expect(
      await app.db.db
        .selectFrom('audit_inbox' as never)
        .selectAll()
        .execute(),
    ).toHaveLength(2);
    const done = await pruneAudit({ handle: app.db, clock, retentionDays: 1, holder: 'inbox-test', pauseMs: 0 });
    expect(done).toEqual([{ workspaceId: ws, deleted: 2 }]);
    await app.db.flushAuditInbox();
    const left = await app.db.db
      .selectFrom('audit_logs')
      .select('target_key')
      .where('workspace_id', '=', ws)
      .where('action', '=', 'vars.pull')
      .execute();
    expect(left).toEqual([]);
  });
});

describe(`audit inbox across instances and a SIGKILL (${dialectName})`, () => {
  it('lists on one instance a pull answered by another, also once that one was killed', async () => {
    const pgSchema = process.env.TEST_DATABASE_URL ? await freshPgSchema() : null;
    const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-inbox-'));
    const env: Record<string, string> = pgSchema
      ? { DATABASE_URL: pgSchema.url, MASTER_KEY: randomBytes(32).toString('base64') }
      : {};
    /** What waits in the inbox, read behind both servers' backs. */
    const waiting = async (): Promise<unknown[]> => {
      if (!pgSchema) {
        const file = new SQLite(join(dataDir, 'svcenv.db'), { readonly: true });
        try {
          return file.prepare('select target_env from audit_inbox').all();
        } finally {
          file.close();
        }
      }
      const client = new pg.Client({ connectionString: pgSchema.url });
      await client.connect();
      try {
        return (await client.query('select target_env from audit_inbox')).rows;
      } finally {
        await client.end();
      }
    };
    const a = await startServer({ dataDir, env });
    const b = await startServer({ dataDir, env });
    try {
      const owner = await signupUser(a);
      const p = await createProject(a, owner.jwt);
      await upsert(a, owner.jwt, p.id, ['dev', 'prod'], [{ key: 'A', value: 'a', type: 'plain' }]);
      const { token } = await createToken(a, owner.jwt, { scope: 'read' });
      const pulls = async () => {
        const res = await b.request('GET', `/v1/projects/${p.id}/audit`, { token: owner.jwt, schema: auditPage });
        expect(res.status, res.text).toBe(200);
        return res.body.logs.filter((l) => l.action === 'vars.pull').map((l) => l.targetEnv);
      };
      expect((await a.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token })).status).toBe(200);
      expect(await waiting()).toEqual([{ target_env: 'dev' }]);
      expect(await pulls()).toEqual(['dev']);
      expect((await a.request('GET', `/v1/projects/${p.id}/envs/prod/pull`, { token })).status).toBe(200);
      await a.stop('SIGKILL');
      expect(await waiting()).toEqual([{ target_env: 'prod' }]);
      expect(await pulls()).toEqual(['prod', 'dev']);
      expect(await waiting()).toEqual([]);
    } finally {
      if (a.child.signalCode === null) await a.stop();
      await b.stop();
      await pgSchema?.drop();
    }
  });
});

describe.runIf(dialectName === 'postgres')('audit inbox and a concurrent deletion (postgres)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.stop());

  it('a project deleted while a move waits for it: the deletion goes through, the move is made again', async () => {
    const owner = await signupUser(app, 'Ida');
    const ws = (await app.call(ops.getSession, {}, owner.jwt)).body.user.workspaceId;
    const gone = await createProject(app, owner.jwt, { name: 'gone' });
    const kept = await createProject(app, owner.jwt, { name: 'kept' });
    await app.db.insertAuditRows([pullAuditRow(ws, gone.id, 'g1'), pullAuditRow(ws, kept.id, 'k1')]);
    let flushing: Promise<void> | undefined;
    await app.db.db.transaction().execute(async (trx) => {
      // The deletion's first lock, taken before the move starts...
      await sql`select id from projects where id = ${gone.id} for update`.execute(trx);
      // ...then the move: it locks both inbox rows and waits for that project (audit_logs' foreign key)...
      flushing = app.db.flushAuditInbox();
      await new Promise((r) => setTimeout(r, 100));
      // ...and the deletion goes through. Before migration 2026-11-29T20-audit-inbox-unchecked its cascade
      // wanted the move's inbox row: a deadlock unless the move gave way. Now the move's foreign key check
      // fails on the deleted project (or its lock wait times out), and the move is made again.
      await trx.deleteFrom('projects').where('id', '=', gone.id).execute();
    });
    await flushing;
    expect(await app.db.db.selectFrom('projects').select('id').where('id', '=', gone.id).execute()).toEqual([]);
    expect(
      await app.db.db
        .selectFrom('audit_logs')
        .select('target_key')
        .where('workspace_id', '=', ws)
        .where('action', '=', 'vars.pull')
        .execute(),
    ).toEqual([{ target_key: 'k1' }]);
  });
});
