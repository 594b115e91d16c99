import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebhookResponse, listDeliveriesResponse } from '@svcenv/contract';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrate, openDb } from '../src/db/index.js';
import { JobQueue } from '../src/jobs/queue.js';
import { WEBHOOK_JOB, WEBHOOK_LANE_LIMIT, webhookJob } from '../src/jobs/webhook.js';
import { ManualClock } from '../src/lib/clock.js';
import { deriveKey } from '../src/lib/crypto.js';
import {
  createProject,
  dialectName,
  signupUser,
  startApp,
  TEST_DATABASE_URL,
  type TestApp,
  upsert,
} from './harness.js';
import { startReceiver } from './receiver.js';

const N = 40;
/** D35's 10-second attempt budget, cut short so the test does not sleep through it. */
const TIMEOUT_MS = 2_000;

/** A receiver that accepts every request and never answers (until told to). */
async function hangingReceiver() {
  const requests: { delivery: string; at: number }[] = [];
  let answering = false;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests.push({ delivery: String(req.headers['x-svcenv-delivery']), at: Date.now() });
      if (answering) res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hang`,
    requests,
    /**
     * Most attempts open at once while it hung. An unanswered attempt stays open for the whole timeout, so
     * attempts that arrived less than half a timeout apart were all open at the later one's arrival. Half:
     * the arrival times are read on this process's event loop, which the app and the test share, and a busy
     * machine can hold one arrival back by some hundreds of milliseconds; a lane that let a fifth attempt
     * start would still put it within milliseconds of the others. (Counting sockets here would see a cut
     * attempt's close after the next attempt's connect.)
     */
    mostOpen(timeoutMs: number) {
      const times = requests.map((r) => r.at).sort((a, b) => a - b);
      return Math.max(0, ...times.map((t, i) => times.slice(0, i + 1).filter((u) => u > t - timeoutMs / 2).length));
    },
    answerFromNowOn() {
      answering = true;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

async function until<T>(what: string, read: () => Promise<T> | T, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function createHook(app: TestApp, jwt: string, url: string) {
  const res = await app.request('POST', '/v1/workspace/webhooks', {
    token: jwt,
    body: { name: 'hook', url, events: ['var.update'] },
    schema: createWebhookResponse,
  });
  if (res.status !== 201) throw new Error(`create webhook failed: ${res.status} ${res.text}`);
  return res.body;
}

describe(`one hanging webhook target does not hold back the others (${dialectName}, D35)`, () => {
  it('delivers every change to a healthy receiver promptly while a hanging one times out and is retried', async () => {
    const clock = new ManualClock(new Date('2026-12-01T10:00:00.000Z'));
    const app = await startApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    // The app's own delivery job (jobs/webhook.ts), registered again over the same queue with a shorter budget.
    app.deps.jobs.register({
      [WEBHOOK_JOB]: webhookJob({ db: app.db.db, clock, ...app.deps.webhooks, timeoutMs: TIMEOUT_MS }),
    });
    const healthy = await startReceiver();
    const hanging = await hangingReceiver();
    try {
      const { jwt } = await signupUser(app);
      const p = await createProject(app, jwt);
      const keys = Array.from({ length: N }, (_, i) => `K${i}`);
      await upsert(
        app,
        jwt,
        p.id,
        ['dev'],
        keys.map((key) => ({ key, value: 'a', type: 'plain' })),
      );
      const slowHook = await createHook(app, jwt, hanging.url);
      await createHook(app, jwt, healthy.url('/ok'));

      // N changes, each one delivery to either receiver; when each change was answered.
      const changedAt = new Map<string, number>();
      for (const key of keys) {
        const put = await app.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/${key}`, {
          token: jwt,
          body: { value: 'b' },
        });
        expect(put.status).toBe(200);
        changedAt.set(key, Date.now());
      }
      // With the old batch runner, each batch of 20 jobs (10 per receiver) waited for its hanging members'
      // timeouts: the healthy receiver got its 40 deliveries over about 4 x TIMEOUT_MS, the last some three
      // timeouts after its change. None may wait as long as one timeout now; the bound is not less, because a
      // busy CI machine can stall this process for a few hundred milliseconds.
      const got = await healthy.waitFor(N, (r) => r.path === '/ok', 4 * TIMEOUT_MS);
      const latencies = got.map((r) => r.at - changedAt.get(r.body.updated[0]!)!).sort((a, b) => a - b);
      expect(new Set(got.map((r) => r.body.updated[0])).size).toBe(N);
      expect(latencies.at(-1), `healthy delivery latencies (ms): ${latencies.join(', ')}`).toBeLessThan(TIMEOUT_MS);

      // The hanging target is held to its lane: never more than WEBHOOK_LANE_LIMIT attempts open at once.
      await until(
        'the first hanging attempts to time out',
        async () => timedOut(),
        (rows) => rows.length >= 4,
      );
      expect(hanging.mostOpen(TIMEOUT_MS)).toBe(WEBHOOK_LANE_LIMIT);
      const listed = await app.request('GET', `/v1/workspace/webhooks/${slowHook.id}/deliveries`, {
        token: jwt,
        schema: listDeliveriesResponse,
      });
      const cut = listed.body.deliveries.filter((d) => d.status === 0);
      expect(cut.length).toBeGreaterThanOrEqual(4);
      for (const d of cut) {
        expect(d).toMatchObject({ attempt: 1, status: 0, error: 'timeout' });
        expect(d.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
        expect(d.durationMs).toBeLessThan(TIMEOUT_MS + 1_500);
      }

      // The receiver recovers. Every delivery it has not had yet arrives; the ones that timed out are retried
      // 30 s later on the injected clock (D35), under the same X-Svcenv-Delivery.
      hanging.answerFromNowOn();
      const firstAttempts = await until(
        'a first attempt of every hanging delivery',
        () => attemptsOf(slowHook.id),
        (rows) => rows.filter((r) => r.attempt === 1).length === N,
      );
      const failed = firstAttempts.filter((r) => r.status === 0);
      expect(failed.length).toBeGreaterThanOrEqual(4);
      const pending = await app.db.db
        .selectFrom('jobs')
        .select(['status', 'run_at'])
        .where('kind', '=', WEBHOOK_JOB)
        .where('status', '!=', 'done')
        .execute();
      expect(pending).toHaveLength(failed.length);
      for (const j of pending) {
        expect(j).toEqual({ status: 'pending', run_at: new Date(clock.now().getTime() + 30_000).toISOString() });
      }
      clock.advance(30_000);
      app.deps.jobs.kick();
      const all = await until(
        'every hanging delivery to succeed',
        () => attemptsOf(slowHook.id),
        (rows) => new Set(rows.filter((r) => r.status === 200).map((r) => r.delivery_id)).size === N,
      );
      for (const f of failed) {
        expect(all.filter((r) => r.delivery_id === f.delivery_id).map((r) => [r.attempt, r.status])).toEqual([
          [1, 0],
          [2, 200],
        ]);
        expect(hanging.requests.filter((r) => r.delivery === f.delivery_id)).toHaveLength(2);
      }
      const jobs = await app.db.db.selectFrom('jobs').select('status').where('kind', '=', WEBHOOK_JOB).execute();
      expect(jobs.map((j) => j.status)).toEqual(Array(2 * N).fill('done'));
      // Each healthy delivery went out once.
      expect(healthy.received.filter((r) => r.path === '/ok')).toHaveLength(N);
    } finally {
      await hanging.stop();
      await healthy.stop();
      await app.stop();
    }

    async function timedOut() {
      return (await attemptsOf()).filter((r) => r.status === 0);
    }
    async function attemptsOf(webhookId?: string) {
      return app.db.db
        .selectFrom('webhook_deliveries')
        .select(['webhook_id', 'delivery_id', 'attempt', 'status', 'error'])
        .$if(webhookId !== undefined, (q) => q.where('webhook_id', '=', webhookId!))
        .orderBy('id')
        .execute();
    }
  }, 60_000);
});

describe('the job runner keeps to its share of the PostgreSQL pool (D35)', () => {
  it.skipIf(dialectName !== 'postgres')(
    'holds at most 3 connections while 32 cut attempts record their results at once',
    async () => {
      const clock = new ManualClock(new Date('2026-12-01T10:00:00.000Z'));
      const masterKey = Buffer.alloc(32, 7);
      const app = await startApp({ clock, masterKey, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
      await app.deps.jobs.stop();
      // A runner of our own over a pool of its own (max 10, as the app's), named so pg_stat_activity tells
      // its connections apart; the app's delivery job over it, with a 1 s budget.
      const url = new URL(app.deps.config.DATABASE_URL!);
      url.searchParams.set('application_name', 'svcenv-runner-share');
      const handle = openDb({ dataDir: app.dataDir, databaseUrl: url.toString() });
      await migrate(handle);
      const runner = new JobQueue({
        db: handle.db,
        dialect: handle.dialect,
        clock,
        sealKey: deriveKey(masterKey, 'job-payload'),
        log: { error() {}, warn() {} },
      });
      runner.register({
        [WEBHOOK_JOB]: webhookJob({ db: handle.db, clock, ...app.deps.webhooks, timeoutMs: 1_000 }),
      });
      const hanging = await hangingReceiver();
      const watcher = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await watcher.connect();
      let watching = true;
      let most = 0;
      const watch = (async () => {
        while (watching) {
          const r = await watcher.query<{ n: string }>(
            "select count(*) as n from pg_stat_activity where application_name = 'svcenv-runner-share' and state <> 'idle'",
          );
          most = Math.max(most, Number(r.rows[0]!.n));
        }
      })();
      try {
        const { jwt } = await signupUser(app);
        await app.deps.jobs.runDue(); // the signup's verification email, on the app's own runner
        const p = await createProject(app, jwt);
        await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: 'a', type: 'plain' }]);
        // 8 webhooks x 4 changes: 32 attempts, each webhook's lane full, all cut at the same moment; every
        // four of them then record on one `webhooks` row (a row lock each waits for).
        for (let i = 0; i < 8; i++) await createHook(app, jwt, `${hanging.url}/${i}`);
        for (let i = 0; i < 4; i++) {
          const put = await app.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/A`, {
            token: jwt,
            body: { value: `v${i}` },
          });
          expect(put.status).toBe(200);
        }
        expect(await runner.runDue()).toBe(32);
        expect(hanging.requests).toHaveLength(32);
        const attempts = await handle.db.selectFrom('webhook_deliveries').select(['status', 'error']).execute();
        expect(attempts).toEqual(Array(32).fill({ status: 0, error: 'timeout' }));
      } finally {
        watching = false;
        await watch;
        await watcher.end();
        await runner.stop();
        await handle.close();
        await hanging.stop();
        await app.stop();
      }
      expect(most).toBeGreaterThan(0);
      expect(most, 'connections of the runner busy at once').toBeLessThanOrEqual(3);
    },
    30_000,
  );
});
