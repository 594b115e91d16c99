/**
 * D70 connections and D71 dynamic secrets over HTTP, on SQLite and PostgreSQL as svcenv's own store, against
 * the machine's PostgreSQL, MariaDB and Redis as managed databases. A lease is proven by logging in with its
 * values, and its revocation by failing to; a database that goes away is a relay the test takes down.
 */
import {
  auditPage,
  connection as connectionSchema,
  createdLease,
  dynamicSecret,
  listDynamicSecretsResponse,
  listLeasesResponse,
  renewedLease,
  sessionResponse,
  switchWorkspaceResponse,
  testConnectionResponse,
} from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp, until } from './harness.js';
import {
  MARIADB,
  mariadbAdmin,
  mariadbCanLogin,
  mariadbUserExists,
  PG,
  pgAdmin,
  pgCanLogin,
  pgRoleExists,
  REDIS,
  redisAdmin,
  redisCanLogin,
  startRelay,
} from './managed-dbs.js';
import { type Receiver, startReceiver } from './receiver.js';

const ADMIN_PASSWORD_MARK = 'pw'; // every admin password of managed-dbs.ts starts so; checked absent below

describe(`connections and dynamic secrets (D70, D71, ${dialectName})`, () => {
  let app: TestApp;
  let receiver: Receiver;
  let owner: { jwt: string; id: string };
  let projectId: string;
  let maria: Awaited<ReturnType<typeof mariadbAdmin>>;
  let redis: Awaited<ReturnType<typeof redisAdmin>>;
  const secrets: string[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    app = await startApp({
      env: { DEFAULT_PLAN: 'enterprise', CONNECTIONS_TIMEOUT_MS: '1000', WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    maria = await mariadbAdmin();
    redis = await redisAdmin();
    secrets.push(maria.password, redis.password);
    const o = await signupUser(app, 'Olga');
    owner = { jwt: o.jwt, id: o.user.id };
    projectId = (await createProject(app, owner.jwt, { name: `dyn-${dialectName}` })).id;
    const hook = await app.request('POST', '/v1/workspace/webhooks', {
      token: owner.jwt,
      body: { name: 'leases', url: receiver.url(), events: ['lease.create', 'lease.revoke', 'lease.expire'] },
    });
    expect(hook.status, hook.text).toBe(201);
  }, 60_000);

  afterAll(async () => {
    // The users this suite's leases made, whatever state a failing test left them in: only those are removed.
    const { leasedUsernames, pgDropRoles } = await import('./managed-dbs.js');
    const leased = app ? await leasedUsernames(app.deps.db) : [];
    await app?.stop();
    await receiver?.stop();
    await maria?.drop(leased);
    await redis?.drop(leased);
    await pgDropRoles(leased);
  });

  const path = (rest: string) => `/v1/projects/${projectId}${rest}`;
  const post = (p: string, body: unknown, token = owner.jwt) => app.request('POST', path(p), { token, body });
  const put = (p: string, body: unknown, token = owner.jwt) => app.request('PUT', path(p), { token, body });

  async function pgConnection(name: string, port = PG.port) {
    const res = await post('/connections', {
      name,
      kind: 'postgres',
      host: '127.0.0.1',
      port,
      database: PG.database,
      username: 'postgres',
      password: 'pw-trust-ignores-it',
      tls: { mode: 'disable' },
    });
    expect(res.status, res.text).toBe(201);
    return res;
  }

  const PG_CREATE = [
    `CREATE ROLE "{{username}}" LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`,
    `GRANT CONNECT ON DATABASE test TO "{{username}}"`,
  ];

  describe('connections (D70)', () => {
    it('creates one without answering, logging or auditing its password; names are unique; a PATCH keeps it', async () => {
      const res = await post('/connections', {
        name: 'maria',
        kind: 'mysql',
        host: '127.0.0.1',
        username: maria.username,
        password: maria.password,
        tls: { mode: 'disable' },
      });
      expect(res.status, res.text).toBe(201);
      const conn = connectionSchema.parse(res.body);
      expect(conn).toMatchObject({
        name: 'maria',
        kind: 'mysql',
        port: 3306,
        database: null,
        tls: { mode: 'disable' },
      });
      expect(res.text).not.toContain(maria.password);
      expect((await post('/connections', { ...conn, password: 'x', tls: { mode: 'disable' } })).status).toBe(400); // unknown fields
      const dup = await post('/connections', {
        name: 'maria',
        kind: 'mysql',
        host: '127.0.0.1',
        username: 'u',
        password: 'p',
        tls: { mode: 'disable' },
      });
      expect(dup.status).toBe(409);
      const patched = await app.request('PATCH', path('/connections/maria'), {
        token: owner.jwt,
        body: { port: 3306 },
      });
      expect(patched.status, patched.text).toBe(200);
      const tested = await post('/connections/maria/test', {});
      expect(tested.status).toBe(200);
      expect(testConnectionResponse.parse(tested.body)).toMatchObject({ ok: true });
      const list = await app.request('GET', path('/connections'), { token: owner.jwt });
      expect(list.text).not.toContain(maria.password);
      const audit = await app.request('GET', path('/audit?limit=50'), { token: owner.jwt, schema: auditPage });
      expect(audit.body.logs.map((l) => l.action)).toEqual(
        expect.arrayContaining(['connection.create', 'connection.update']),
      );
      expect(audit.text).not.toContain(maria.password);
      expect(app.logs()).not.toContain(maria.password);
    });

    it('refuses link-local and metadata hosts, plain TLS off loopback, a database for redis (400, naming the field)', async () => {
      const base = { kind: 'postgres', username: 'u', password: 'p', tls: { mode: 'require' } };
      for (const [host, i] of [
        ['169.254.169.254', 1],
        ['fe80::1', 2],
        ['[fe80::1]', 3],
        ['fd00:ec2::254', 4],
      ] as const) {
        const res = await post('/connections', { ...base, name: `meta-${i}`, host });
        expect(res.status, `${host}: ${res.text}`).toBe(400);
        expect(res.error.field).toBe('host');
      }
      const plain = await post('/connections', {
        ...base,
        name: 'plain',
        host: 'db.example.com',
        tls: { mode: 'disable' },
      });
      expect(plain.status).toBe(400);
      expect(plain.error.field).toBe('tls.mode');
      const redisDb = await post('/connections', {
        ...base,
        kind: 'redis',
        name: 'r',
        host: '127.0.0.1',
        database: 'x',
        tls: { mode: 'disable' },
      });
      expect(redisDb.status).toBe(400);
      expect(redisDb.error.field).toBe('database');
    });

    it('says what failed for a wrong password, never the password, and bounds a silent database', async () => {
      const wrong = 'definitely-not-the-password-9f2c';
      const res = await post('/connections', {
        name: 'maria-wrong',
        kind: 'mysql',
        host: '127.0.0.1',
        username: maria.username,
        password: wrong,
        tls: { mode: 'disable' },
      });
      expect(res.status).toBe(201);
      const tested = await post('/connections/maria-wrong/test', {});
      const body = testConnectionResponse.parse(tested.body);
      expect(body.ok).toBe(false);
      expect(body.message).toMatch(/denied|password|auth/i);
      expect(tested.text).not.toContain(wrong);
      expect(app.logs()).not.toContain(wrong);

      const relay = await startRelay(MARIADB);
      await relay.silent();
      await post('/connections', {
        name: 'silent',
        kind: 'mysql',
        host: '127.0.0.1',
        port: relay.port,
        username: maria.username,
        password: maria.password,
        tls: { mode: 'disable' },
      });
      const started = Date.now();
      const [slow, other] = await Promise.all([
        post('/connections/silent/test', {}),
        // Another request meanwhile is answered at once.
        (async () => {
          const t = Date.now();
          const r = await app.request('GET', path('/connections'), { token: owner.jwt });
          return { status: r.status, ms: Date.now() - t };
        })(),
      ]);
      expect(Date.now() - started).toBeLessThan(8_000);
      expect(testConnectionResponse.parse(slow.body)).toMatchObject({ ok: false });
      expect(testConnectionResponse.parse(slow.body).message).toMatch(/time|answer/i);
      expect(other.status).toBe(200);
      expect(other.ms).toBeLessThan(1_000);
      await relay.stop();
    });

    it('is for Owners and project Admins only', async () => {
      const m = await signupUser(app, 'Mel');
      const session = await app.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
      const inv = await app.request('POST', '/v1/workspace/invites', {
        token: owner.jwt,
        body: { email: m.email, wsRole: 'Member' },
      });
      expect(inv.status).toBe(200);
      const sw = await app.request('POST', '/v1/auth/switch-workspace', {
        token: m.jwt,
        body: { workspaceId: session.body.user.workspaceId },
        schema: switchWorkspaceResponse,
      });
      await app.request('PUT', path(`/members/${m.user.id}`), { token: owner.jwt, body: { role: 'Developer' } });
      const member = sw.body.token;
      expect((await app.request('GET', path('/connections'), { token: member })).status).toBe(403);
      expect((await post('/connections/maria/test', {}, member)).status).toBe(403);
      // Reading the dynamic secrets of an environment they may read is fine (what may pull may see them).
      expect((await app.request('GET', path('/envs/dev/dynamic'), { token: member })).status).toBe(200);
    });
  });

  describe('dynamic secrets and leases (D71)', () => {
    it('declares one on PostgreSQL; a lease logs in, and after its revocation it cannot', async () => {
      await pgConnection('pg');
      const decl = await put('/envs/dev/dynamic/app-db', { connection: 'pg', create: PG_CREATE, maxLeases: 3 });
      expect(decl.status, decl.text).toBe(200);
      expect(dynamicSecret.parse(decl.body)).toMatchObject({
        name: 'app-db',
        kind: 'postgres',
        revokeIsDefault: true,
        keys: { username: 'APP_DB_USERNAME', password: 'APP_DB_PASSWORD' },
        defaultTtlSeconds: 3600,
        maxLeases: 3,
      });
      const token = (await createToken(app, owner.jwt, { scope: 'read', envs: ['dev'] })).token;
      const res = await post('/envs/dev/dynamic/app-db/leases', { ttlSeconds: 120 }, token);
      expect(res.status, res.text).toBe(201);
      const lease = createdLease.parse(res.body);
      const user = lease.values.APP_DB_USERNAME!;
      const password = lease.values.APP_DB_PASSWORD!;
      expect(user).toMatch(/^v_dev_app_db_[a-z0-9]{8,}$/);
      expect(password).toMatch(/^[A-Za-z0-9]{32}$/);
      expect(await pgCanLogin(user, password)).toBe(true);
      const listed = await app.request('GET', path('/envs/dev/dynamic/app-db/leases'), { token });
      const leases = listLeasesResponse.parse(listed.body).leases;
      expect(leases).toEqual([
        expect.objectContaining({ id: lease.id, username: user, state: 'active', mayRevoke: true }),
      ]);
      expect(listed.text).not.toContain(password);
      const del = await app.request('DELETE', path(`/envs/dev/dynamic/app-db/leases/${lease.id}`), { token });
      expect(del.status, del.text).toBe(204);
      expect(await pgCanLogin(user, password)).toBe(false);
      expect(await pgRoleExists(user)).toBe(false);
      const all = await app.request('GET', path('/envs/dev/dynamic/app-db/leases?state=all'), { token });
      expect(listLeasesResponse.parse(all.body).leases[0]).toMatchObject({ id: lease.id, state: 'revoked' });
      const audit = await app.request('GET', path('/audit?limit=50'), { token: owner.jwt, schema: auditPage });
      expect(audit.body.logs.map((l) => l.action)).toEqual(expect.arrayContaining(['lease.create', 'lease.revoke']));
      expect(audit.text).not.toContain(password);
      expect(app.logs()).not.toContain(password);
      await until('webhooks of the lease', () =>
        ['lease.create', 'lease.revoke'].every((e) => receiver.received.some((r) => r.body.event === e)),
      );
      expect(JSON.stringify(receiver.received.map((r) => r.raw.toString()))).not.toContain(password);
    });

    it('eight leases at once, each granting CONNECT on the same database: all made ("tuple concurrently updated" retried)', async () => {
      const decl = await put('/envs/dev/dynamic/burst', { connection: 'pg', create: PG_CREATE, maxLeases: 20 });
      expect(decl.status, decl.text).toBe(200);
      for (let round = 0; round < 2; round++) {
        const made = await Promise.all(Array.from({ length: 8 }, () => post('/envs/dev/dynamic/burst/leases', {})));
        for (const res of made) expect(res.status, res.text).toBe(201);
        const leases = made.map((res) => createdLease.parse(res.body));
        for (const l of leases) expect(await pgCanLogin(l.username, l.values.BURST_PASSWORD!)).toBe(true);
        for (const l of leases) {
          const del = await app.request('DELETE', path(`/envs/dev/dynamic/burst/leases/${l.id}`), { token: owner.jwt });
          expect(del.status, del.text).toBe(204);
          expect(await pgRoleExists(l.username)).toBe(false);
        }
      }
    });

    it('PostgreSQL: a create that changed its session leaves nothing to the next lease; a failing last statement, or one whose quote runs into what follows, leaves no user', async () => {
      const role = `CREATE ROLE "{{username}}" LOGIN PASSWORD '{{password}}'`;
      const dirty = await put('/envs/dev/dynamic/dirty', {
        connection: 'pg',
        create: [role, `SET application_name = 'dirty'`, `SET search_path = pg_catalog`],
      });
      expect(dirty.status, dirty.text).toBe(200);
      // Fails unless the session is as a fresh login left it.
      const clean = await put('/envs/dev/dynamic/clean', {
        connection: 'pg',
        create: [
          role,
          `DO $$ BEGIN IF current_setting('application_name') <> 'svcenv' OR current_setting('search_path') <> '"$user", public' THEN RAISE EXCEPTION 'a dirty session'; END IF; END $$`,
        ],
      });
      expect(clean.status, clean.text).toBe(200);
      // One at a time: the pool hands the connection just released out again.
      for (let i = 0; i < 3; i++) {
        const a = await post('/envs/dev/dynamic/dirty/leases', {});
        expect(a.status, a.text).toBe(201);
        const b = await post('/envs/dev/dynamic/clean/leases', {});
        expect(b.status, b.text).toBe(201);
      }
      for (const [name, last, message] of [
        ['div', 'SELECT 1/0', /division by zero/],
        ['quote', `SELECT 'unterminated`, /unterminated quoted string/],
        ['comment', 'SELECT 1 -- a comment to the end of the line', null],
      ] as const) {
        const decl = await put(`/envs/dev/dynamic/${name}`, { connection: 'pg', create: [role, last] });
        expect(decl.status, decl.text).toBe(200);
        const res = await post(`/envs/dev/dynamic/${name}/leases`, {});
        const all = listLeasesResponse.parse(
          (await app.request('GET', path(`/envs/dev/dynamic/${name}/leases?state=all`), { token: owner.jwt })).body,
        ).leases;
        expect(all).toHaveLength(1);
        if (message === null) {
          // A comment ends at the line's end: what follows the statement still runs, the COMMIT with it.
          expect(res.status, res.text).toBe(201);
          expect(await pgRoleExists(all[0]!.username)).toBe(true);
          continue;
        }
        expect(res.status, res.text).toBe(502);
        expect(res.error.message).toMatch(message);
        expect(all[0]!.state).toBe('failed');
        expect(await pgRoleExists(all[0]!.username)).toBe(false);
      }
    });

    it('caps a renewal at maxTtlSeconds, refuses past maxLeases (429), a token of another environment (403)', async () => {
      const decl = await put('/envs/dev/dynamic/capped', {
        connection: 'pg',
        create: PG_CREATE,
        defaultTtlSeconds: 60,
        maxTtlSeconds: 90,
        maxLeases: 1,
      });
      expect(decl.status, decl.text).toBe(200);
      const first = await post('/envs/dev/dynamic/capped/leases', {});
      expect(first.status, first.text).toBe(201);
      const lease = createdLease.parse(first.body);
      expect(Date.parse(lease.maxExpiresAt) - Date.parse(lease.expiresAt)).toBeLessThanOrEqual(31_000);
      // The engine runs the first create statement while the lease's record is written (in a transaction it
      // commits only after the record): a full maxLeases rolls it back, leaving no role and no record.
      const cappedRoles = () =>
        pgAdmin(async (c) =>
          Number(
            (await c.query(`select count(*) n from pg_roles where rolname like 'v\\_dev\\_capped\\_%'`)).rows[0].n,
          ),
        );
      const before = await cappedRoles();
      const full = await post('/envs/dev/dynamic/capped/leases', {});
      expect(full.status).toBe(429);
      expect(full.error.code).toBe('RATE_LIMIT');
      expect(await cappedRoles()).toBe(before);
      const all = await app.request('GET', path('/envs/dev/dynamic/capped/leases?state=all'), { token: owner.jwt });
      expect(listLeasesResponse.parse(all.body).leases.map((l) => l.id)).toEqual([lease.id]);
      const renewed = await post(`/envs/dev/dynamic/capped/leases/${lease.id}/renew`, { ttlSeconds: 3600 });
      expect(renewed.status, renewed.text).toBe(200);
      expect(renewedLease.parse(renewed.body).expiresAt).toBe(lease.maxExpiresAt);
      const staging = (await createToken(app, owner.jwt, { scope: 'read', envs: ['staging'] })).token;
      expect((await post('/envs/dev/dynamic/capped/leases', {}, staging)).status).toBe(403);
      expect(
        (await app.request('DELETE', path(`/envs/dev/dynamic/capped/leases/${lease.id}`), { token: owner.jwt })).status,
      ).toBe(204);
    });

    it('answers 404 for a lease of another project or workspace', async () => {
      const other = await createProject(app, owner.jwt, { name: `other-${dialectName}` });
      const res = await post('/envs/dev/dynamic/app-db/leases', {});
      const lease = createdLease.parse(res.body);
      const elsewhere = await app.request(
        'DELETE',
        `/v1/projects/${other.id}/envs/dev/dynamic/app-db/leases/${lease.id}`,
        { token: owner.jwt },
      );
      expect(elsewhere.status).toBe(404);
      const stranger = await signupUser(app, 'Stan');
      const foreign = await app.request('DELETE', path(`/envs/dev/dynamic/app-db/leases/${lease.id}`), {
        token: stranger.jwt,
      });
      expect(foreign.status).toBe(404);
      expect(await pgCanLogin(lease.username, lease.values.APP_DB_PASSWORD!)).toBe(true);
      await app.request('DELETE', path(`/envs/dev/dynamic/app-db/leases/${lease.id}`), { token: owner.jwt });
    });

    it('a create statement with a syntax error is 502 UPSTREAM_FAILED and leaves no user behind (MariaDB)', async () => {
      const decl = await put('/envs/dev/dynamic/broken', {
        connection: 'maria',
        create: [
          `CREATE USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'`,
          `GRANT SELEKT ON test.* TO '{{username}}'@'%'`,
        ],
      });
      expect(decl.status, decl.text).toBe(200);
      const res = await post('/envs/dev/dynamic/broken/leases', {});
      expect(res.status, res.text).toBe(502);
      expect(res.error.code).toBe('UPSTREAM_FAILED');
      expect(res.error.message).toMatch(/syntax/i);
      const all = listLeasesResponse.parse(
        (await app.request('GET', path('/envs/dev/dynamic/broken/leases?state=all'), { token: owner.jwt })).body,
      ).leases;
      expect(all).toHaveLength(1);
      expect(all[0]!.state).toBe('failed');
      expect(await mariadbUserExists(all[0]!.username)).toBe(false);
      expect(res.text).not.toContain(ADMIN_PASSWORD_MARK + maria.password.slice(2));
    });

    it('leases MariaDB and Redis users that log in, and are gone after revocation', async () => {
      await put('/envs/dev/dynamic/maria-ro', {
        connection: 'maria',
        create: [
          `CREATE USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'`,
          `GRANT SELECT ON test.* TO '{{username}}'@'%'`,
        ],
        keys: { username: 'DB_USER', password: 'DB_PASS', host: 'DB_HOST', port: 'DB_PORT' },
      });
      const m = createdLease.parse((await post('/envs/dev/dynamic/maria-ro/leases', {})).body);
      expect(m.values).toMatchObject({ DB_HOST: '127.0.0.1', DB_PORT: '3306' });
      expect(await mariadbCanLogin(m.values.DB_USER!, m.values.DB_PASS!), 'maria lease logs in').toBe(true);
      const mGone = await app.request('DELETE', path(`/envs/dev/dynamic/maria-ro/leases/${m.id}`), {
        token: owner.jwt,
      });
      expect(mGone.status, mGone.text).toBe(204);
      expect(await mariadbCanLogin(m.values.DB_USER!, m.values.DB_PASS!), 'revoked maria user').toBe(false);

      const conn = await post('/connections', {
        name: 'redis',
        kind: 'redis',
        host: REDIS.host,
        username: redis.username,
        password: redis.password,
        tls: { mode: 'disable' },
      });
      expect(conn.status, conn.text).toBe(201);
      const decl = await put('/envs/dev/dynamic/cache', {
        connection: 'redis',
        create: [['ACL', 'SETUSER', '{{username}}', 'on', '>{{password}}', '~app:*', '+@read']],
      });
      expect(decl.status, decl.text).toBe(200);
      // Redis statements are argument lists; SQL text is refused for a redis connection.
      expect((await put('/envs/dev/dynamic/cache2', { connection: 'redis', create: ['ACL SETUSER x'] })).status).toBe(
        400,
      );
      const r = createdLease.parse((await post('/envs/dev/dynamic/cache/leases', {})).body);
      expect(await redisCanLogin(r.values.CACHE_USERNAME!, r.values.CACHE_PASSWORD!), 'redis lease logs in').toBe(true);
      const gone = await app.request('DELETE', path(`/envs/dev/dynamic/cache/leases/${r.id}`), { token: owner.jwt });
      expect(gone.status, gone.text).toBe(204);
      expect(await redisCanLogin(r.values.CACHE_USERNAME!, r.values.CACHE_PASSWORD!), 'revoked redis user').toBe(false);
    });

    it('a connection of another project is 400 (field connection); the list shows declarations', async () => {
      const other = await createProject(app, owner.jwt, { name: `third-${dialectName}` });
      const res = await app.request('PUT', `/v1/projects/${other.id}/envs/dev/dynamic/x`, {
        token: owner.jwt,
        body: { connection: 'pg', create: PG_CREATE },
      });
      expect(res.status).toBe(400);
      expect(res.error.field).toBe('connection');
      const list = listDynamicSecretsResponse.parse(
        (await app.request('GET', path('/envs/dev/dynamic'), { token: owner.jwt })).body,
      );
      expect(list.dynamicSecrets.map((d) => d.name)).toEqual(
        expect.arrayContaining(['app-db', 'capped', 'maria-ro', 'cache']),
      );
    });

    it('a user dropped by hand before its revocation: the revocation still completes', async () => {
      const l = createdLease.parse((await post('/envs/dev/dynamic/maria-ro/leases', {})).body);
      const { mariadbRoot } = await import('./managed-dbs.js');
      await mariadbRoot((c) => c.query(`DROP USER '${l.values.DB_USER}'@'%'`));
      const del = await app.request('DELETE', path(`/envs/dev/dynamic/maria-ro/leases/${l.id}`), { token: owner.jwt });
      expect(del.status, del.text).toBe(204);
    });

    it('a database that goes away: revocations fail loudly, are retried, finish once it is back (never early)', async () => {
      const relay = await startRelay(MARIADB);
      await post('/connections', {
        name: 'maria-relay',
        kind: 'mysql',
        host: '127.0.0.1',
        port: relay.port,
        username: maria.username,
        password: maria.password,
        tls: { mode: 'disable' },
      });
      await put('/envs/dev/dynamic/flaky', {
        connection: 'maria-relay',
        create: [`CREATE USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'`],
      });
      const l = createdLease.parse((await post('/envs/dev/dynamic/flaky/leases', {})).body);
      const user = l.values.FLAKY_USERNAME!;
      await relay.down();
      const del = await app.request('DELETE', path(`/envs/dev/dynamic/flaky/leases/${l.id}`), { token: owner.jwt });
      expect(del.status).toBe(502);
      expect(del.error.code).toBe('UPSTREAM_FAILED');
      const listed = await app.request('GET', path('/envs/dev/dynamic/flaky/leases'), { token: owner.jwt });
      expect(listLeasesResponse.parse(listed.body).leases[0]).toMatchObject({ state: 'revoke_failed' });
      const overview = await app.request('GET', path('/envs/dev/dynamic/flaky'), { token: owner.jwt });
      expect(dynamicSecret.parse(overview.body).revokeFailed).toBe(1);
      expect(await mariadbUserExists(user)).toBe(true); // not revoked, and not marked so
      await relay.up();
      // The job retries (5 s backoff) and finishes it.
      await until(
        'the retried revocation',
        async () =>
          listLeasesResponse.parse(
            (await app.request('GET', path('/envs/dev/dynamic/flaky/leases?state=all'), { token: owner.jwt })).body,
          ).leases[0]?.state === 'revoked',
        30_000,
      );
      expect(await mariadbUserExists(user)).toBe(false);
      await relay.stop();
    }, 60_000);

    it('revoking the token that made a lease revokes the lease', async () => {
      const t = await createToken(app, owner.jwt, { scope: 'read', envs: ['*'] });
      const l = createdLease.parse((await post('/envs/dev/dynamic/maria-ro/leases', {}, t.token)).body);
      expect(await mariadbCanLogin(l.values.DB_USER!, l.values.DB_PASS!)).toBe(true);
      expect((await app.request('DELETE', `/v1/tokens/${t.id}`, { token: owner.jwt })).status).toBe(204);
      await until("the token's lease revoked", async () => !(await mariadbUserExists(l.values.DB_USER!)), 20_000);
    }, 30_000);

    it('deleting a dynamic secret revokes its open leases first; deleting a connection in use is 409', async () => {
      const l = createdLease.parse((await post('/envs/dev/dynamic/maria-ro/leases', {})).body);
      expect((await app.request('DELETE', path('/connections/maria'), { token: owner.jwt })).status).toBe(409);
      const del = await app.request('DELETE', path('/envs/dev/dynamic/maria-ro'), { token: owner.jwt });
      expect(del.status, del.text).toBe(204);
      expect(await mariadbUserExists(l.values.DB_USER!)).toBe(false);
    });
  });
});
