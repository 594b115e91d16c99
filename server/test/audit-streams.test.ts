import { spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { AUDIT_STREAM_EVENT, type AuditEntry } from '@svcenv/contract';
import { operations as ops } from '@svcenv/contract/operations';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamBackoffMs } from '../src/jobs/audit-streams.js';
import {
  createProject,
  dialectName,
  freePort,
  freshPgSchema,
  repoRoot,
  signupUser,
  startApp,
  TEST_DATABASE_URL,
  type TestApp,
  until,
  upsert,
} from './harness.js';
import { type Received, type Receiver, signatureValid, startReceiver, streamBatchOf } from './receiver.js';

/**
 * D65: audit streams against a real HTTP receiver: every entry written after the stream was created, in id
 * order, in signed batches of at most 500, retried until acknowledged, a dead stream delaying nobody, nothing
 * after a delete; on PostgreSQL two instances and entries committed out of id order.
 */

async function workspaceOf(app: TestApp, jwt: string): Promise<string> {
  const res = await app.call(ops.getSession, {}, jwt);
  return res.body.user.workspaceId;
}

/**
 * Every entry of the workspace as the audit endpoint shows it, in id order (the stream's order; the endpoint
 * pages by time, D64, and an entry may commit, and so carry its time, out of id order).
 */
async function allEntries(app: TestApp, jwt: string): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  let cursor: string | undefined;
  for (;;) {
    const res = await app.call(ops.workspaceAudit, { query: { limit: '200', ...(cursor ? { cursor } : {}) } }, jwt);
    expect(res.status).toBe(200);
    out.push(...res.body.logs);
    if (!res.body.nextCursor) return out.sort((x, y) => x.id - y.id);
    cursor = res.body.nextCursor;
  }
}

/** `n` audit rows through the server's own audit writer (the writer thread on SQLite), in one transaction. */
async function writeRows(app: TestApp, workspaceId: string, userId: string, n: number, action = 'vars.pull') {
  const at = new Date().toISOString();
  const rows = Array.from({ length: n }, (_, i) => ({
    workspace_id: workspaceId,
    project_id: null,
    action,
    target_key: null,
    target_env: `e${i}`,
    actor_id: userId,
    actor_type: 'user' as const,
    detail: JSON.stringify({ i }),
    created_at: at,
  }));
  await app.db.insertAuditRows(rows);
}

const batchesAt = (rx: Receiver, path: string) => rx.received.filter((r) => r.path === path);
const idsIn = (batches: Received[]) => batches.flatMap((r) => streamBatchOf(r).entries.map((e) => e.id));

async function createStream(app: TestApp, jwt: string, url: string) {
  const res = await app.call(ops.createAuditStream, { body: { url } }, jwt);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function streamView(app: TestApp, jwt: string, id: string) {
  const res = await app.call(ops.listAuditStreams, {}, jwt);
  expect(res.status).toBe(200);
  const s = res.body.streams.find((x) => x.id === id);
  if (!s) throw new Error('stream not listed');
  return s;
}

/**
 * The stream's view once its cursor reached `lastId`. The server records a delivery when the receiver's answer
 * arrives, which is after the receiver saw the batch: reading the view the moment the batch arrived races it.
 */
async function viewOnceDelivered(app: TestApp, jwt: string, id: string, lastId: number) {
  let view: Awaited<ReturnType<typeof streamView>> | undefined;
  await until('the delivery recorded', async () => {
    view = await streamView(app, jwt, id);
    return view.lastDeliveredId === lastId;
  });
  return view!;
}

/** A receiver path of its own for each attempt, so that a retried test does not count an earlier try's batches. */
const pathOf = (name: string) => `/${name}-${randomBytes(4).toString('hex')}`;

describe(`audit streams (${dialectName})`, () => {
  let app: TestApp;
  let rx: Receiver;
  beforeAll(async () => {
    app = await startApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await app?.stop();
    await rx?.stop();
  });

  it('sends every later entry of the workspace, in id order, in signed batches of at most 500', async () => {
    const owner = await signupUser(app, 'Olga');
    const ws = await workspaceOf(app, owner.jwt);
    const p = await createProject(app, owner.jwt); // before the stream: never sent
    const order = pathOf('order');
    const stream = await createStream(app, owner.jwt, rx.url(order));
    expect(stream.secret).toMatch(/^whsec_[A-Za-z0-9]{20,}$/);
    expect(stream.url).toBe(rx.url(order));
    const other = await signupUser(app, 'Otto');
    await createProject(app, other.jwt); // another workspace: never sent
    await writeRows(app, ws, owner.user.id, 1234);
    await upsert(app, owner.jwt, p.id, ['dev'], [{ key: 'A', value: 'secret-value-1', type: 'secret' }]);
    const entries = await allEntries(app, owner.jwt);
    const last = entries[entries.length - 1]!;
    await until('the last entry', () => idsIn(batchesAt(rx, order)).includes(last.id));
    const batches = batchesAt(rx, order);
    const got = batches.flatMap((r) => streamBatchOf(r).entries);
    // Exactly the entries from the stream's own creation on, each as the audit endpoint shows it, once, in order.
    const from = entries.findIndex((e) => e.action === 'audit_stream.create');
    expect(from).toBeGreaterThan(0);
    expect(got).toEqual(entries.slice(from));
    for (const b of batches) {
      const n = streamBatchOf(b).entries.length;
      expect(n).toBeGreaterThan(0);
      expect(n).toBeLessThanOrEqual(500);
      expect(signatureValid(b, stream.secret)).toBe(true);
      expect(signatureValid(b, `${stream.secret}x`)).toBe(false);
      expect(b.headers['x-svcenv-event']).toBe(AUDIT_STREAM_EVENT);
      expect(b.headers['x-svcenv-delivery']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(b.headers['content-type']).toBe('application/json');
      expect(Object.keys(JSON.parse(b.raw.toString('utf8')))).toEqual(['entries']);
    }
    expect(batches.some((b) => streamBatchOf(b).entries.length === 500)).toBe(true);
    expect(new Set(batches.map((b) => b.headers['x-svcenv-delivery'])).size).toBe(batches.length);
    expect(Buffer.concat(batches.map((b) => b.raw)).toString('utf8')).not.toContain('secret-value-1');
    const view = await viewOnceDelivered(app, owner.jwt, stream.id, last.id);
    expect(view).toMatchObject({ lastDeliveredId: last.id, lastStatus: 200, pending: 0 });
    expect(view.lastDeliveredAt).not.toBeNull();
    expect(JSON.stringify(view)).not.toContain('whsec_');

    // Within 5 s of being written.
    const before = batchesAt(rx, order).length;
    const t0 = Date.now();
    await upsert(app, owner.jwt, p.id, ['dev'], [{ key: 'B', value: 'two', type: 'plain' }]);
    await until('the next batch', () => batchesAt(rx, order).length > before, 5_000);
    expect(Date.now() - t0).toBeLessThan(5_000);
  }, 60_000);

  it('retries a batch answered 500 and moves on after the 2xx, without loss or a second move', async () => {
    const owner = await signupUser(app, 'Rita');
    const ws = await workspaceOf(app, owner.jwt);
    const retry = pathOf('retry');
    rx.setAnswer((r) => ({ status: r.path === retry && batchesAt(rx, retry).length === 1 ? 500 : 200 }));
    try {
      const stream = await createStream(app, owner.jwt, rx.url(retry));
      await until('the first attempt', () => batchesAt(rx, retry).length === 1);
      await until('the failure recorded', async () => (await streamView(app, owner.jwt, stream.id)).lastStatus === 500);
      const failed = await streamView(app, owner.jwt, stream.id);
      expect(failed).toMatchObject({ lastDeliveredId: null, lastDeliveredAt: null });
      expect(failed.pending).toBeGreaterThanOrEqual(1);
      await until('the retry', () => batchesAt(rx, retry).length === 2, 10_000);
      const [first, second] = batchesAt(rx, retry) as [Received, Received];
      // About 1 s later (D65), the same entries under the same delivery id.
      expect(second.at - first.at).toBeGreaterThanOrEqual(streamBackoffMs(1) - 200);
      expect(streamBatchOf(second).entries[0]).toEqual(streamBatchOf(first).entries[0]);
      expect(second.headers['x-svcenv-delivery']).toBe(first.headers['x-svcenv-delivery']);
      await writeRows(app, ws, owner.user.id, 30);
      const entries = await allEntries(app, owner.jwt);
      const last = entries[entries.length - 1]!.id;
      await until('every entry', () => idsIn(batchesAt(rx, retry)).includes(last));
      const acked = idsIn(batchesAt(rx, retry).slice(1));
      const from = entries.findIndex((e) => e.action === 'audit_stream.create');
      expect(acked).toEqual(entries.slice(from).map((e) => e.id));
      const view = await viewOnceDelivered(app, owner.jwt, stream.id, last);
      expect(view).toMatchObject({ lastDeliveredId: last, lastStatus: 200, pending: 0 });
    } finally {
      rx.setAnswer(() => ({ status: 200 }));
    }
  }, 60_000);

  it('a hanging and a dead stream delay neither a webhook delivery nor another stream', async () => {
    const owner = await signupUser(app, 'Lane');
    const p = await createProject(app, owner.jwt);
    const hung: number[] = [];
    const hanging = createServer((req) => {
      req.resume();
      hung.push(Date.now());
    });
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const deadPort = (dead.address() as AddressInfo).port;
    await new Promise<void>((r) => dead.close(() => r())); // nothing listens there any more
    try {
      await createStream(app, owner.jwt, `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hang`);
      await createStream(app, owner.jwt, `http://127.0.0.1:${deadPort}/dead`);
      await until('the hanging stream to hold its request', () => hung.length > 0);
      const [healthyPath, hookPath] = [pathOf('healthy'), pathOf('hook')];
      const healthy = await createStream(app, owner.jwt, rx.url(healthyPath));
      const hook = await app.call(
        ops.createWebhook,
        { body: { name: 'lanes', url: rx.url(hookPath), events: ['vars.bulk_upsert', 'var.update'] } },
        owner.jwt,
      );
      expect(hook.status).toBe(201);
      let last = 0;
      for (let i = 0; i < 5; i++) {
        const t0 = Date.now();
        await upsert(app, owner.jwt, p.id, ['dev'], [{ key: `K${i}`, value: `v${i}`, type: 'plain' }]);
        const entries = await allEntries(app, owner.jwt);
        last = entries[entries.length - 1]!.id;
        await until('the webhook delivery', () => batchesAt(rx, hookPath).length > i, 3_000);
        await until('the healthy stream', () => idsIn(batchesAt(rx, healthyPath)).includes(last), 5_000);
        expect(Date.now() - t0).toBeLessThan(5_000);
      }
      // One batch in flight for the hanging stream (a second only after its 10-second timeout and backoff).
      expect(hung.length).toBeLessThanOrEqual(2);
      expect((await viewOnceDelivered(app, owner.jwt, healthy.id, last)).pending).toBe(0);
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((r) => hanging.close(() => r()));
    }
  }, 60_000);

  it('sends nothing after a delete, which is audited', async () => {
    const owner = await signupUser(app, 'Dora');
    const ws = await workspaceOf(app, owner.jwt);
    const deletedPath = `${pathOf('deleted')}?token=abc`;
    const stream = await createStream(app, owner.jwt, rx.url(deletedPath));
    await until('the first batch', () => batchesAt(rx, deletedPath).length > 0);
    const del = await app.call(ops.deleteAuditStream, { params: { id: stream.id } }, owner.jwt);
    expect(del.status).toBe(204);
    await writeRows(app, ws, owner.user.id, 20);
    await new Promise((r) => setTimeout(r, 1_500));
    const ids = idsIn(batchesAt(rx, deletedPath));
    const entries = await allEntries(app, owner.jwt);
    const deleted = entries.find((e) => e.action === 'audit_stream.delete')!;
    expect(deleted.detail).toEqual({ streamId: stream.id, host: new URL(rx.url()).host });
    expect(Math.max(...ids)).toBeLessThan(deleted.id);
    const created = entries.find((e) => e.action === 'audit_stream.create')!;
    expect(created.detail).toEqual({ streamId: stream.id, host: new URL(rx.url()).host });
    expect(JSON.stringify(entries)).not.toContain('whsec_');
    expect(JSON.stringify(entries)).not.toContain('token=abc');
    expect((await app.call(ops.listAuditStreams, {}, owner.jwt)).body.streams).toEqual([]);
    expect((await app.call(ops.deleteAuditStream, { params: { id: stream.id } }, owner.jwt)).status).toBe(404);
  }, 30_000);

  it('is for Owners with a session; the target follows D5', async () => {
    const owner = await signupUser(app, 'Owen');
    const stranger = await signupUser(app, 'Sten');
    const stream = await createStream(app, owner.jwt, rx.url('/rules'));
    // Another workspace's Owner neither sees nor deletes it.
    expect((await app.call(ops.listAuditStreams, {}, stranger.jwt)).body.streams).toEqual([]);
    expect((await app.call(ops.deleteAuditStream, { params: { id: stream.id } }, stranger.jwt)).status).toBe(404);
    const bad = await app.call(ops.createAuditStream, { body: { url: 'ftp://example.com/x' } }, owner.jwt);
    expect(bad.status).toBe(400);
    expect(bad.error).toMatchObject({ code: 'VALIDATION', field: 'url' });
    const meta = await app.call(ops.createAuditStream, { body: { url: 'http://169.254.169.254/x' } }, owner.jwt);
    expect(meta.status).toBe(400);
    const extra = await app.request('POST', ops.createAuditStream.path, {
      token: owner.jwt,
      body: { url: rx.url('/rules'), secret: 'mine' },
    });
    expect(extra.status).toBe(400);
    const strict = await startApp();
    try {
      const o = await signupUser(strict, 'Priv');
      for (const url of ['http://example.com/x', 'https://127.0.0.1/x', 'https://10.1.2.3/x']) {
        const res = await strict.call(ops.createAuditStream, { body: { url } }, o.jwt);
        expect(res.status, url).toBe(400);
        expect(res.error.field).toBe('url');
      }
    } finally {
      await strict.stop();
    }
  }, 60_000);
});

describe.runIf(TEST_DATABASE_URL)('audit streams on PostgreSQL, two instances', () => {
  it('deliver each entry once, in order, also when a lower id commits after a higher one', async () => {
    const schema = await freshPgSchema();
    const masterKey = randomBytes(32);
    const env = { WEBHOOK_ALLOW_PRIVATE: 'true' };
    const a = await startApp({ env, databaseUrl: schema.url, masterKey });
    const b = await startApp({ env, databaseUrl: schema.url, masterKey });
    const rx = await startReceiver();
    const side = new pg.Client({ connectionString: schema.url });
    await side.connect();
    // The stream's cursor as the other instance lists it, while the batches go out.
    const seen: number[] = [];
    let watching = true;
    let watcher: Promise<void> = Promise.resolve();
    try {
      const owner = await signupUser(a, 'Twin');
      const ws = await workspaceOf(a, owner.jwt);
      const p = await createProject(a, owner.jwt);
      const stream = await createStream(a, owner.jwt, rx.url('/twins'));
      watcher = (async () => {
        while (watching) {
          const v = await streamView(b, owner.jwt, stream.id);
          if (v.lastDeliveredId !== null) seen.push(v.lastDeliveredId);
          await new Promise((r) => setTimeout(r, 50));
        }
      })();

      // A transaction takes an audit id and stays open while later ids commit around it.
      await side.query('begin');
      const held = await side.query<{ id: string }>(
        `insert into audit_logs (workspace_id, action, actor_type, created_at) values ($1, 'test.held', 'user', $2) returning id`,
        [ws, new Date().toISOString()],
      );
      const heldId = Number(held.rows[0]!.id);
      // And one that rolls back: its id is a gap for good.
      const gap = new pg.Client({ connectionString: schema.url });
      await gap.connect();
      await gap.query('begin');
      await gap.query(
        `insert into audit_logs (workspace_id, action, actor_type, created_at) values ($1, 'test.gap', 'user', $2)`,
        [ws, new Date().toISOString()],
      );
      await gap.query('rollback');
      await gap.end();

      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < 20; i++) {
        const app = i % 2 === 0 ? a : b;
        writes.push(upsert(app, owner.jwt, p.id, ['dev'], [{ key: `K${i}`, value: `v${i}`, type: 'plain' }]));
        writes.push(writeRows(app, ws, owner.user.id, 60));
      }
      await Promise.all(writes);
      await new Promise((r) => setTimeout(r, 1_500));
      // Nothing past the open transaction's id went out: passing it would have skipped it.
      expect(idsIn(batchesAt(rx, '/twins')).every((id) => id < heldId)).toBe(true);
      await side.query('commit');

      const entries = await allEntries(a, owner.jwt);
      const last = entries[entries.length - 1]!.id;
      await until('every entry', () => idsIn(batchesAt(rx, '/twins')).includes(last), 20_000);
      watching = false;
      await watcher;
      const batches = batchesAt(rx, '/twins');
      const ids = idsIn(batches);
      const from = entries.findIndex((e) => e.action === 'audit_stream.create');
      expect(ids).toContain(heldId);
      // Each id once, in order, none missing: the receiver's list is the log from the stream's creation on.
      expect(ids).toEqual(entries.slice(from).map((e) => e.id));
      for (const r of batches) expect(streamBatchOf(r).entries.length).toBeLessThanOrEqual(500);
      for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThanOrEqual(seen[i - 1]!);
      expect((await viewOnceDelivered(a, owner.jwt, stream.id, last)).lastDeliveredId).toBe(last);
    } finally {
      watching = false;
      await watcher.catch(() => undefined);
      await side.end().catch(() => undefined);
      await a.stop();
      await b.stop();
      await rx.stop();
      await schema.drop();
    }
  }, 90_000);
});

describe(`the receiver example of docs/audit-streams.md (${dialectName})`, () => {
  it('takes each entry once, refuses a forged batch, forwards before acknowledging', async () => {
    const app = await startApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    // Stands in for Fluent Bit's `http` input; its first answer fails, so the example must not acknowledge.
    const fluent = await startReceiver();
    fluent.setAnswer((_r, i) => ({ status: i === 0 ? 500 : 201 }));
    const port = await freePort();
    const owner = await signupUser(app, 'Vera');
    const ws = await workspaceOf(app, owner.jwt);
    const stream = await createStream(app, owner.jwt, `http://127.0.0.1:${port}/`);
    const child = spawn(process.execPath, [join(repoRoot, 'docs', 'examples', 'audit-stream-receiver.mjs')], {
      env: {
        PATH: process.env.PATH ?? '',
        PORT: String(port),
        SVCENV_STREAM_SECRET: stream.secret,
        FORWARD_URL: fluent.url('/svcenv.audit'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
    });
    const printed = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id?: number; listening?: number });
    try {
      await until('the example to listen', () => printed().some((l) => l.listening === port));
      await writeRows(app, ws, owner.user.id, 30);
      const entries = await allEntries(app, owner.jwt);
      const from = entries.findIndex((e) => e.action === 'audit_stream.create');
      const want = entries.slice(from).map((e) => e.id);
      await until(
        'every entry printed',
        () => printed().filter((l) => l.id !== undefined).length >= want.length,
        20_000,
      );
      expect(printed().flatMap((l) => (l.id === undefined ? [] : [l.id]))).toEqual(want);
      // Forwarded as JSON arrays; the refused first forward came again.
      const forwarded = fluent.received.slice(1).flatMap((r) => JSON.parse(r.raw.toString('utf8')) as AuditEntry[]);
      expect(forwarded.map((e) => e.id)).toEqual(want);
      expect(forwarded).toEqual(entries.slice(from));

      const post = (body: string, signature: string) =>
        fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body, headers: { 'x-svcenv-signature': signature } });
      const sign = (body: string) => `sha256=${createHmac('sha256', stream.secret).update(body).digest('hex')}`;
      const again = JSON.stringify({ entries: entries.slice(from, from + 2) });
      expect((await post(again, sign(`${again} `))).status).toBe(401);
      expect((await post(again, 'sha256=00')).status).toBe(401);
      // A batch that comes again is acknowledged and adds nothing.
      expect((await post(again, sign(again))).status).toBe(204);
      expect(printed().filter((l) => l.id !== undefined)).toHaveLength(want.length);
      // The page shows this very file.
      const example = readFileSync(join(repoRoot, 'docs', 'examples', 'audit-stream-receiver.mjs'), 'utf8');
      const page = readFileSync(join(repoRoot, 'docs', 'audit-streams.md'), 'utf8');
      const block = /```js\n([\s\S]*?)```/.exec(page)?.[1];
      expect(block && example.endsWith(block)).toBe(true);
    } finally {
      child.kill();
      await fluent.stop();
      await app.stop();
    }
  }, 60_000);
});
