import { afterEach, describe, expect, it } from 'vitest';
import { type DbHandle, migrate, openDb } from '../src/db/index.js';
import { exponentialBackoff, type JobKind, JobQueue } from '../src/jobs/queue.js';
import { ManualClock } from '../src/lib/clock.js';
import { dialectName, startApp, type TestApp } from './harness.js';

const quietLog = { error() {}, warn() {} };

describe(`durable job queue (${dialectName})`, () => {
  const apps: TestApp[] = [];
  const extra: DbHandle[] = [];
  afterEach(async () => {
    for (const h of extra.splice(0)) await h.close();
    for (const a of apps.splice(0)) await a.stop();
  });

  async function setup() {
    const app = await startApp();
    apps.push(app);
    await app.deps.jobs.stop(); // the tests drive runners by hand
    return app;
  }

  function queue(db: DbHandle, clock: ManualClock, kinds: Record<string, JobKind<any>>) {
    const q = new JobQueue({ db: db.db, dialect: db.dialect, clock, sealKey: Buffer.alloc(32, 1), log: quietLog });
    q.register(kinds);
    return q;
  }

  it('runs a job written in a committed transaction, and none from a rolled-back one', async () => {
    const app = await setup();
    const clock = new ManualClock();
    const seen: unknown[] = [];
    const q = queue(app.db, clock, {
      work: { maxAttempts: 3, backoffMs: () => 1000, perform: async (p) => void seen.push(p) },
    });
    await app.db.db
      .transaction()
      .execute(async (trx) => q.enqueue(trx, { kind: 'work', payload: { n: 1, secret: 'hunter2' } }));
    await app.db.db
      .transaction()
      .execute(async (trx) => {
        await q.enqueue(trx, { kind: 'work', payload: { n: 2 } });
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(await q.runDue()).toBe(1);
    expect(seen).toEqual([{ n: 1, secret: 'hunter2' }]);
    const rows = await app.db.db.selectFrom('jobs').selectAll().execute();
    expect(rows.map((r) => r.status)).toEqual(['done']);
    expect(JSON.stringify(rows)).not.toContain('hunter2');
  });

  it('retries with backoff on the injected clock, then marks the job dead', async () => {
    const app = await setup();
    const clock = new ManualClock();
    let attempts = 0;
    const dead: string[] = [];
    const q = queue(app.db, clock, {
      flaky: {
        maxAttempts: 3,
        backoffMs: exponentialBackoff(30_000, 3_600_000),
        perform: async () => {
          attempts++;
          throw new Error(`failure ${attempts}`);
        },
        onDead: async (_p, e) => void dead.push(e),
      },
    });
    await q.enqueue(app.db.db, { kind: 'flaky', payload: {} });
    expect(await q.runDue()).toBe(1);
    expect(await q.runDue()).toBe(0);
    clock.advance(29_000);
    expect(await q.runDue()).toBe(0);
    clock.advance(2_000);
    expect(await q.runDue()).toBe(1);
    clock.advance(119_000);
    expect(await q.runDue()).toBe(0);
    clock.advance(2_000);
    expect(await q.runDue()).toBe(1);
    expect(attempts).toBe(3);
    const row = await app.db.db.selectFrom('jobs').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'dead', attempts: 3, last_error: 'failure 3' });
    expect(dead).toEqual(['failure 3']);
  });

  it('claims a job again when the instance that held it died (lease expiry)', async () => {
    const app = await setup();
    const clock = new ManualClock();
    let runs = 0;
    const q = queue(app.db, clock, { w: { maxAttempts: 5, backoffMs: () => 0, perform: async () => void runs++ } });
    await q.enqueue(app.db.db, { kind: 'w', payload: {} });
    // Simulate a crash mid-job: claimed (running, leased) but never finished.
    await app.db.db
      .updateTable('jobs')
      .set({ status: 'running', locked_until: new Date(clock.now().getTime() + 60_000).toISOString() })
      .execute();
    expect(await q.runDue()).toBe(0);
    clock.advance(61_000);
    expect(await q.runDue()).toBe(1);
    expect(runs).toBe(1);
  });

  it('never runs a job twice when two runners on separate connections compete', async () => {
    const app = await setup();
    const clock = new ManualClock();
    const second: DbHandle =
      app.db.dialect === 'postgres'
        ? openDb({ dataDir: app.dataDir, databaseUrl: app.deps.config.DATABASE_URL })
        : openDb({ dataDir: app.dataDir });
    extra.push(second);
    await migrate(second);
    const counts = new Map<number, number>();
    const kind: JobKind<{ n: number }> = {
      maxAttempts: 1,
      backoffMs: () => 0,
      perform: async ({ n }) => {
        counts.set(n, (counts.get(n) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, Math.random() * 3));
      },
    };
    const a = queue(app.db, clock, { k: kind });
    const b = queue(second, clock, { k: kind });
    for (let n = 0; n < 200; n++) await a.enqueue(app.db.db, { kind: 'k', payload: { n } });
    const [ra, rb] = await Promise.all([a.runDue(), b.runDue()]);
    expect(ra + rb).toBe(200);
    expect(counts.size).toBe(200);
    expect([...counts.values()].every((c) => c === 1)).toBe(true);
  });
});
