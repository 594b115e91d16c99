import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWebhookResponse, listDeliveriesResponse } from '@svcenv/contract';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDb } from '../src/db/index.js';
import {
  createProject,
  dialectName,
  freePort,
  freshPgSchema,
  type ServerProcess,
  signupUser,
  startServer,
  TEST_DATABASE_URL,
  upsert,
} from './harness.js';
import { signatureValid, startReceiver } from './receiver.js';

/** Server processes on a database of their own: a fresh PostgreSQL schema, or SQLite in DATA_DIR. */
async function storage() {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-events-'));
  if (!TEST_DATABASE_URL) return { dataDir, env: {} as Record<string, string>, drop: async () => {} };
  const schema = await freshPgSchema();
  return {
    dataDir,
    env: { DATABASE_URL: schema.url, MASTER_KEY: randomBytes(32).toString('base64') },
    drop: schema.drop,
  };
}

async function createHook(srv: ServerProcess, jwt: string, url: string, events: string[]) {
  const res = await srv.request('POST', '/v1/workspace/webhooks', {
    token: jwt,
    body: { name: 'hook', url, events },
    schema: createWebhookResponse,
  });
  expect(res.status).toBe(201);
  return res.body;
}

async function until(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe(`webhook deliveries across server processes (${dialectName})`, () => {
  it('delivers every queued delivery after a SIGKILL and restart (D35: deliveries are durable)', async () => {
    const store = await storage();
    const env: Record<string, string> = { ...store.env, WEBHOOK_ALLOW_PRIVATE: 'true' };
    // The receiver is down while the first server runs: every delivery stays queued.
    const port = await freePort();
    const first = await startServer({ dataDir: store.dataDir, env });
    let second: ServerProcess | null = null;
    let receiver: Awaited<ReturnType<typeof startReceiver>> | null = null;
    try {
      const { jwt } = await signupUser(first);
      const p = await createProject(first, jwt);
      const hook = await createHook(first, jwt, `http://127.0.0.1:${port}/hook`, ['vars.bulk_upsert']);
      for (let i = 0; i < 20; i++) {
        await upsert(first, jwt, p.id, ['dev'], [{ key: `K${i}`, value: `v${i}`, type: 'plain' }]);
      }
      const db = openDb({ dataDir: store.dataDir, databaseUrl: env.DATABASE_URL });
      const jobs = () =>
        db.db.selectFrom('jobs').select(['status', 'attempts']).where('kind', '=', 'webhook.deliver').execute();
      try {
        // Each first attempt finds nobody listening and is rescheduled 30 s later.
        await until('first attempts', async () => {
          const rows = await jobs();
          return rows.length === 20 && rows.every((r) => r.status === 'pending' && r.attempts === 1);
        });
        expect(await first.stop('SIGKILL')).toBe(null);
        // The server stays down past the 30 s backoff: move the queued retries to now instead of sleeping.
        await sql`update jobs set run_at = ${new Date().toISOString()} where kind = 'webhook.deliver'`.execute(db.db);
        expect((await jobs()).map((r) => r.status)).toEqual(Array(20).fill('pending'));
      } finally {
        await db.close();
      }

      receiver = await startReceiver(port);
      second = await startServer({ dataDir: store.dataDir, env });
      const got = await receiver.waitFor(20);
      expect(new Set(got.map((r) => r.headers['x-svcenv-delivery'])).size).toBe(20);
      expect(got.map((r) => r.body.keys[0]).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `K${i}`).sort());
      for (const r of got) expect(signatureValid(r, hook.secret)).toBe(true);
      const deliveriesPath = `/v1/workspace/webhooks/${hook.id}/deliveries`;
      const deliveries = await second.request('GET', deliveriesPath, { token: jwt, schema: listDeliveriesResponse });
      const attempts = deliveries.body.deliveries.map((d) => `${d.attempt}:${d.status}`);
      expect(attempts.filter((a) => a === '1:0')).toHaveLength(20);
      await until('second attempts recorded', async () => {
        const res = await second!.request('GET', deliveriesPath, { token: jwt, schema: listDeliveriesResponse });
        return res.body.deliveries.filter((d) => d.attempt === 2 && d.status === 200).length === 20;
      });
    } finally {
      // (A child already killed has exitCode null, so only stop it if it is still running.)
      if (first.child.exitCode === null && first.child.signalCode === null) await first.stop('SIGKILL');
      await second?.stop();
      await receiver?.stop();
      await store.drop();
    }
  }, 90_000);

  it.skipIf(!TEST_DATABASE_URL)(
    'two instances on PostgreSQL deliver 200 events exactly once each (D2, leased claims)',
    async () => {
      const store = await storage();
      const env: Record<string, string> = { ...store.env, WEBHOOK_ALLOW_PRIVATE: 'true' };
      const rx = await startReceiver();
      const a = await startServer({ dataDir: store.dataDir, env });
      const b = await startServer({ dataDir: mkdtempSync(join(tmpdir(), 'svcenv-events-b-')), env });
      try {
        const { jwt } = await signupUser(a);
        const p = await createProject(a, jwt);
        await upsert(a, jwt, p.id, ['dev'], [{ key: 'K', value: 'v0', type: 'plain' }]);
        const hook = await createHook(a, jwt, rx.url('/multi'), ['var.update']);
        // The webhook was created on a; b loads it on its first event (no earlier cache entry).
        const put = (srv: ServerProcess, i: number) =>
          srv.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/K`, { token: jwt, body: { value: `v${i}` } });
        for (let batch = 0; batch < 20; batch++) {
          const results = await Promise.all(
            Array.from({ length: 10 }, (_, j) => put((batch * 10 + j) % 2 === 0 ? a : b, batch * 10 + j)),
          );
          expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
        }
        const got = await rx.waitFor(200, (r) => r.path === '/multi', 30_000);
        const db = openDb({ dataDir: store.dataDir, databaseUrl: env.DATABASE_URL });
        try {
          await until('every job done', async () => {
            const rows = await db.db
              .selectFrom('jobs')
              .select(['status', 'attempts'])
              .where('kind', '=', 'webhook.deliver')
              .execute();
            return rows.length === 200 && rows.every((r) => r.status === 'done');
          });
          const rows = await db.db
            .selectFrom('jobs')
            .select('attempts')
            .where('kind', '=', 'webhook.deliver')
            .execute();
          expect(rows.every((r) => r.attempts === 1)).toBe(true);
        } finally {
          await db.close();
        }
        // Give a duplicate every chance to show up before counting.
        await new Promise((r) => setTimeout(r, 1_000));
        expect(rx.received.filter((r) => r.path === '/multi')).toHaveLength(200);
        expect(new Set(got.map((r) => r.headers['x-svcenv-delivery'])).size).toBe(200);
        for (const r of got) expect(signatureValid(r, hook.secret)).toBe(true);
      } finally {
        await a.stop();
        await b.stop();
        await rx.stop();
        await store.drop();
      }
    },
    120_000,
  );
});
