/**
 * D71's revocation job on an injected clock: two instances on one database (a lease made on one is revoked
 * by the other's job), a database down for twenty minutes (retried with backoff, never given up, never marked
 * revoked early), and a thousand leases expiring in the same minute (worked through in bounded batches while
 * pulls keep answering).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createdLease, listLeasesResponse } from '@svcenv/contract';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import {
  createProject,
  createToken,
  dialectName,
  freshPgSchema,
  signupUser,
  startApp,
  type TestApp,
  until,
  upsert,
} from './harness.js';
import {
  leasedUsernames,
  MARIADB,
  mariadbAdmin,
  mariadbUserExists,
  REDIS,
  redisAdmin,
  redisCanLogin,
  startRelay,
} from './managed-dbs.js';

const env = { DEFAULT_PLAN: 'enterprise', CONNECTIONS_TIMEOUT_MS: '1000' };

async function leaseState(app: TestApp, jwt: string, projectId: string, name: string, id: string) {
  const res = await app.request('GET', `/v1/projects/${projectId}/envs/dev/dynamic/${name}/leases?state=all`, {
    token: jwt,
  });
  return listLeasesResponse.parse(res.body).leases.find((l) => l.id === id)?.state;
}

describe(`the lease revocation job (D71, ${dialectName})`, () => {
  const cleanups: (() => Promise<void>)[] = [];
  /**
   * The users this suite's leases made, read from each app's store before it stops (clean-ups run in reverse,
   * so the apps stop before the admins' `drop`): whatever state a failing test left their leases in, those
   * users are removed with the suite's admin users, and no one else's.
   */
  const leased = new Set<string>();
  const stopping = (app: TestApp) => async () => {
    for (const u of await leasedUsernames(app.deps.db).catch(() => [])) leased.add(u);
    await app.stop();
  };
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it("a lease made on one instance is revoked by the other's job when it expires", async () => {
    const maria = await mariadbAdmin();
    cleanups.push(() => maria.drop(leased));
    const clock = new ManualClock(new Date());
    const masterKey = randomBytes(32);
    const pg = process.env.TEST_DATABASE_URL ? await freshPgSchema() : null;
    const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-two-'));
    const shared = { clock, masterKey, env, dataDir, ...(pg ? { databaseUrl: pg.url } : {}) };
    const a = await startApp(shared);
    const b = await startApp(shared);
    cleanups.push(async () => {
      await stopping(a)();
      await b.stop();
      await pg?.drop();
    });
    // A makes the lease and then runs no jobs: only B's job can revoke it.
    await a.deps.jobs.stop();
    const { jwt } = await signupUser(a, 'Ann');
    const projectId = (await createProject(a, jwt)).id;
    await a.request('POST', `/v1/projects/${projectId}/connections`, {
      token: jwt,
      body: {
        name: 'm',
        kind: 'mysql',
        host: '127.0.0.1',
        username: maria.username,
        password: maria.password,
        tls: { mode: 'disable' },
      },
    });
    await a.request('PUT', `/v1/projects/${projectId}/envs/dev/dynamic/two`, {
      token: jwt,
      body: { connection: 'm', create: [`CREATE USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'`] },
    });
    const lease = createdLease.parse(
      (
        await a.request('POST', `/v1/projects/${projectId}/envs/dev/dynamic/two/leases`, {
          token: jwt,
          body: { ttlSeconds: 60 },
        })
      ).body,
    );
    expect(await mariadbUserExists(lease.username)).toBe(true);
    clock.advance(30_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await mariadbUserExists(lease.username)).toBe(true); // not before its time
    clock.advance(31_000);
    await until(
      'B revoked the expired lease',
      async () => (await leaseState(b, jwt, projectId, 'two', lease.id)) === 'expired',
      15_000,
    );
    expect(await mariadbUserExists(lease.username)).toBe(false);
  }, 60_000);

  it('a database down for twenty minutes: retried with backoff, never given up, finished once it is back', async () => {
    const maria = await mariadbAdmin();
    cleanups.push(() => maria.drop(leased));
    const relay = await startRelay(MARIADB);
    cleanups.push(relay.stop);
    const clock = new ManualClock(new Date());
    const app = await startApp({ clock, env });
    cleanups.push(stopping(app));
    const { jwt } = await signupUser(app, 'Dan');
    const projectId = (await createProject(app, jwt)).id;
    await app.request('POST', `/v1/projects/${projectId}/connections`, {
      token: jwt,
      body: {
        name: 'm',
        kind: 'mysql',
        host: '127.0.0.1',
        port: relay.port,
        username: maria.username,
        password: maria.password,
        tls: { mode: 'disable' },
      },
    });
    await app.request('PUT', `/v1/projects/${projectId}/envs/dev/dynamic/away`, {
      token: jwt,
      body: { connection: 'm', create: [`CREATE USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'`] },
    });
    const lease = createdLease.parse(
      (
        await app.request('POST', `/v1/projects/${projectId}/envs/dev/dynamic/away/leases`, {
          token: jwt,
          body: { ttlSeconds: 30 },
        })
      ).body,
    );
    await relay.down();
    const attempts = async () =>
      Number(
        (await app.db.db.selectFrom('leases').select('attempts').where('id', '=', lease.id).executeTakeFirstOrThrow())
          .attempts,
      );
    // Twenty minutes in steps of a minute, each step waiting for the job to have looked.
    clock.advance(31_000);
    const lastError = async () =>
      (
        await app.db.db
          .selectFrom('leases')
          .select('next_attempt_at')
          .where('id', '=', lease.id)
          .executeTakeFirstOrThrow()
      ).next_attempt_at!;
    for (let minute = 0; minute < 20; minute++) {
      clock.advance(60_000);
      // Every retry that came due in this minute has run (the runner looks twice a second).
      await until('the due retry to run', async () => Date.parse(await lastError()) > clock.now().getTime(), 10_000);
      expect(await leaseState(app, jwt, projectId, 'away', lease.id)).toBe('revoke_failed');
    }
    expect(await attempts()).toBeGreaterThanOrEqual(8);
    expect(await mariadbUserExists(lease.username)).toBe(true);
    await relay.up();
    clock.advance(301_000);
    await until(
      'revoked once the database is back',
      async () => (await leaseState(app, jwt, projectId, 'away', lease.id)) === 'expired',
      15_000,
    );
    expect(await mariadbUserExists(lease.username)).toBe(false);
  }, 180_000);

  it('a thousand leases expiring in the same minute are revoked in bounded batches; pulls keep answering', async () => {
    const redis = await redisAdmin();
    cleanups.push(() => redis.drop(leased));
    const clock = new ManualClock(new Date());
    const app = await startApp({ clock, env });
    cleanups.push(stopping(app));
    const { jwt } = await signupUser(app, 'Tom');
    const projectId = (await createProject(app, jwt)).id;
    await upsert(app, jwt, projectId, ['dev'], [{ key: 'A', value: 'one', type: 'plain' }]);
    const { token } = await createToken(app, jwt, { scope: 'read' });
    await app.request('POST', `/v1/projects/${projectId}/connections`, {
      token: jwt,
      body: {
        name: 'r',
        kind: 'redis',
        host: REDIS.host,
        username: redis.username,
        password: redis.password,
        tls: { mode: 'disable' },
      },
    });
    await app.request('PUT', `/v1/projects/${projectId}/envs/dev/dynamic/many`, {
      token: jwt,
      body: {
        connection: 'r',
        create: [['ACL', 'SETUSER', '{{username}}', 'on', '>{{password}}', '~many:*', '+get']],
        maxLeases: 2000,
      },
    });
    const N = 1000;
    const made: { id: string; user: string; password: string }[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < N) {
          next++;
          const res = await app.request('POST', `/v1/projects/${projectId}/envs/dev/dynamic/many/leases`, {
            token: jwt,
            body: { ttlSeconds: 60 },
          });
          expect(res.status, res.text).toBe(201);
          const l = createdLease.parse(res.body);
          made.push({ id: l.id, user: l.username, password: l.values.MANY_PASSWORD! });
        }
      }),
    );
    expect(made).toHaveLength(N);
    clock.advance(61_000);
    const pulls: number[] = [];
    const open = async () =>
      Number(
        (
          await app.db.db
            .selectFrom('leases')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('dynamic_secret_id', 'in', (q) =>
              q.selectFrom('dynamic_secrets').select('id').where('name', '=', 'many'),
            )
            .where('state', 'in', ['active', 'revoking', 'revoke_failed'])
            .executeTakeFirstOrThrow()
        ).n,
      );
    const deadline = Date.now() + 120_000;
    while ((await open()) > 0) {
      if (Date.now() > deadline) throw new Error(`still ${await open()} open leases`);
      const t = performance.now();
      const res = await app.request('GET', `/v1/projects/${projectId}/envs/dev/pull`, { token });
      pulls.push(performance.now() - t);
      expect(res.status).toBe(200);
      // The job runs every 5 s of the clock: move it so the next run comes.
      clock.advance(5_000);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await redisCanLogin(made[0]!.user, made[0]!.password)).toBe(false);
    expect(await redisCanLogin(made[N - 1]!.user, made[N - 1]!.password)).toBe(false);
    pulls.sort((x, y) => x - y);
    const p50 = pulls[Math.floor(pulls.length / 2)]!;
    // Pulls wait on no revocation: each is answered in well under a second, the median in milliseconds.
    expect(pulls.at(-1)!).toBeLessThan(1_000);
    expect(p50).toBeLessThan(100);
  }, 240_000);
});
