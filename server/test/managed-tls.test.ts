/**
 * D70-D72 against databases that check passwords and speak TLS (managed-servers.ts): the machine's shared
 * PostgreSQL trusts every loopback login and none of its databases has TLS, so there a wrong password would
 * log in and `require` could not be shown. Here a lease's password, a rotate-root and a rotation are proven by
 * real SCRAM-SHA-256 logins, old passwords by refused ones, and each TLS mode by what the server presents.
 */
import { randomBytes } from 'node:crypto';
import { createdLease, testConnectionResponse } from '@svcenv/contract';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  createToken,
  dialectName,
  signupUser,
  startApp,
  type TestApp,
  until,
  upsert,
} from './harness.js';
import { PG } from './managed-dbs.js';
import { type Certs, makeCerts, startScramPostgres, startTlsRedis } from './managed-servers.js';

describe(`managed databases with passwords and TLS (D70-D72, ${dialectName})`, () => {
  let certs: Certs;
  let app: TestApp;
  let jwt: string;
  let projectId: string;
  const path = (p: string) => `/v1/projects/${projectId}${p}`;
  const send = (method: string, p: string, body?: unknown) =>
    app.request(method, path(p), { token: jwt, body: body ?? (method === 'POST' ? {} : undefined) });
  const testOf = async (name: string) => {
    const res = await send('POST', `/connections/${name}/test`);
    expect(res.status, res.text).toBe(200);
    return testConnectionResponse.parse(res.body);
  };

  beforeAll(async () => {
    certs = makeCerts();
    app = await startApp({ env: { CONNECTIONS_TIMEOUT_MS: '2000' } });
    jwt = (await signupUser(app, 'Tess')).jwt;
    projectId = (await createProject(app, jwt, { name: 'tls' })).id;
  });
  afterAll(async () => {
    await app?.stop();
  });

  describe('PostgreSQL that checks SCRAM-SHA-256 passwords, over TLS', () => {
    let server: Awaited<ReturnType<typeof startScramPostgres>>;
    const login = async (user: string, password: string) => {
      const c = new pg.Client({
        host: '127.0.0.1',
        port: server.port,
        database: 'postgres',
        user,
        password,
        ssl: { ca: certs.ca },
        connectionTimeoutMillis: 3000,
      });
      try {
        await c.connect();
        await c.query('SELECT 1');
        return true;
      } catch {
        return false;
      } finally {
        await c.end().catch(() => {});
      }
    };
    const asSuperuser = async (sql: string) => {
      const c = new pg.Client({
        host: '127.0.0.1',
        port: server.port,
        database: 'postgres',
        user: 'postgres',
        password: server.password,
        ssl: { ca: certs.ca },
      });
      await c.connect();
      try {
        await c.query(sql);
      } finally {
        await c.end();
      }
    };
    const connection = (name: string, extra: Record<string, unknown>) =>
      send('POST', '/connections', {
        name,
        kind: 'postgres',
        host: '127.0.0.1',
        port: server.port,
        database: 'postgres',
        username: 'postgres',
        password: server.password,
        tls: { mode: 'verify', ca: certs.ca },
        ...extra,
      });

    beforeAll(async () => {
      server = await startScramPostgres(certs);
    }, 60_000);
    afterAll(async () => {
      await server?.stop();
    });

    it('verify with the CA logs in; a wrong password, a missing CA and require without TLS say why in words', async () => {
      expect((await connection('scram', {})).status).toBe(201);
      expect(await testOf('scram')).toMatchObject({ ok: true });

      const wrong = `not-it-${randomBytes(6).toString('hex')}`;
      expect((await connection('wrong', { password: wrong })).status).toBe(201);
      const refused = await testOf('wrong');
      expect(refused.ok).toBe(false);
      expect(refused.message).toMatch(/password authentication failed/);
      expect(refused.message).not.toContain(wrong);

      expect((await connection('no-ca', { tls: { mode: 'verify' } })).status).toBe(201);
      const untrusted = await testOf('no-ca');
      expect(untrusted.ok).toBe(false);
      expect(untrusted.message).toMatch(/certificate/i);

      // `require` (the default) against the machine's PostgreSQL, which has no TLS: refused, never plain.
      const plain = await send('POST', '/connections', {
        name: 'plain',
        kind: 'postgres',
        host: '127.0.0.1',
        port: PG.port,
        database: PG.database,
        username: 'postgres',
        password: 'x',
      });
      expect(plain.status, plain.text).toBe(201);
      expect((plain.body as { tls: { mode: string } }).tls.mode).toBe('require');
      const noTls = await testOf('plain');
      expect(noTls.ok).toBe(false);
      expect(noTls.message).toMatch(/TLS|SSL/);
    });

    it("a lease's password is the one the database checks; after revocation it is refused", async () => {
      const decl = await send('PUT', '/envs/dev/dynamic/app', {
        connection: 'scram',
        create: [`CREATE ROLE "{{username}}" LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`],
      });
      expect(decl.status, decl.text).toBe(200);
      const res = await send('POST', '/envs/dev/dynamic/app/leases');
      expect(res.status, res.text).toBe(201);
      const lease = createdLease.parse(res.body);
      const user = lease.values.APP_USERNAME!;
      expect(await login(user, lease.values.APP_PASSWORD!)).toBe(true);
      expect(await login(user, `${lease.values.APP_PASSWORD!}x`)).toBe(false);
      // The create sent the password's SCRAM verifier in its place: the database's statement log holds the
      // statement, never the password (ADR 0029).
      await until('the CREATE ROLE logged', () => server.statementLog().includes(`CREATE ROLE "${user}"`));
      expect(server.statementLog()).toMatch(new RegExp(`CREATE ROLE "${user}" LOGIN PASSWORD 'SCRAM-SHA-256\\$4096:`));
      expect(server.statementLog()).not.toContain(lease.values.APP_PASSWORD!);
      expect((await send('DELETE', `/envs/dev/dynamic/app/leases/${lease.id}`)).status).toBe(204);
      expect(await login(user, lease.values.APP_PASSWORD!)).toBe(false);
    });

    it('many leases at once, past the stock of prepared passwords: each logs in with its own', async () => {
      const leases = await Promise.all(
        Array.from({ length: 8 }, async () => {
          const res = await send('POST', '/envs/dev/dynamic/app/leases');
          expect(res.status, res.text).toBe(201);
          return createdLease.parse(res.body);
        }),
      );
      for (const lease of leases) {
        expect(await login(lease.values.APP_USERNAME!, lease.values.APP_PASSWORD!)).toBe(true);
        expect(server.statementLog()).not.toContain(lease.values.APP_PASSWORD!);
        expect((await send('DELETE', `/envs/dev/dynamic/app/leases/${lease.id}`)).status).toBe(204);
      }
    });

    it('rotate-root: the first password stops working and svcenv still logs in (D70)', async () => {
      const first = `first-${randomBytes(6).toString('hex')}`;
      await asSuperuser(`CREATE ROLE tls_root LOGIN CREATEROLE PASSWORD '${first}'`);
      expect((await connection('root', { username: 'tls_root', password: first })).status).toBe(201);
      expect(await login('tls_root', first)).toBe(true);
      const rotated = await send('POST', '/connections/root/rotate-root');
      expect(rotated.status, rotated.text).toBe(200);
      expect(rotated.text).not.toContain(first);
      expect(await login('tls_root', first)).toBe(false);
      expect(await testOf('root')).toMatchObject({ ok: true });
    });

    it('a rotation writes the password the database now checks; the old one is refused (D72)', async () => {
      const old = `old-${randomBytes(6).toString('hex')}`;
      await asSuperuser(`CREATE ROLE tls_app LOGIN PASSWORD '${old}'`);
      await upsert(app, jwt, projectId, ['dev'], [{ key: 'APP_DB_PASSWORD', value: old, type: 'secret' }]);
      const bind = await send('PUT', '/envs/dev/rotations/APP_DB_PASSWORD', {
        connection: 'scram',
        username: 'tls_app',
        intervalSeconds: null,
      });
      expect(bind.status, bind.text).toBe(200);
      const done = await send('POST', '/envs/dev/rotations/APP_DB_PASSWORD/rotate');
      expect(done.status, done.text).toBe(200);
      const { token } = await createToken(app, jwt, { scope: 'read' });
      const pulled = await app.request('GET', path('/envs/dev/pull?format=json'), { token });
      const now = (JSON.parse(pulled.text) as Record<string, string>).APP_DB_PASSWORD!;
      expect(now).not.toBe(old);
      expect(await login('tls_app', now)).toBe(true);
      expect(await login('tls_app', old)).toBe(false);
    });
  });

  describe('Redis that speaks TLS only', () => {
    let server: Awaited<ReturnType<typeof startTlsRedis>>;
    const connection = (name: string, tls: Record<string, unknown>) =>
      send('POST', '/connections', {
        name,
        kind: 'redis',
        host: '127.0.0.1',
        port: server.port,
        username: server.username,
        password: server.password,
        tls,
      });
    beforeAll(async () => {
      server = await startTlsRedis(certs);
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('require and verify log in, disable is refused in bounded time; a lease logs in over TLS', async () => {
      expect((await connection('r-require', { mode: 'require' })).status).toBe(201);
      expect(await testOf('r-require')).toMatchObject({ ok: true });
      expect((await connection('r-verify', { mode: 'verify', ca: certs.ca })).status).toBe(201);
      expect(await testOf('r-verify')).toMatchObject({ ok: true });
      expect((await connection('r-plain', { mode: 'disable' })).status).toBe(201);
      const t0 = Date.now();
      const plain = await testOf('r-plain');
      expect(plain.ok).toBe(false);
      expect(plain.message).not.toContain(server.password);
      expect(Date.now() - t0).toBeLessThan(10_000);

      const decl = await send('PUT', '/envs/dev/dynamic/cache', {
        connection: 'r-verify',
        create: [['ACL', 'SETUSER', '{{username}}', 'on', '>{{password}}', '~cache:*', '+@read']],
      });
      expect(decl.status, decl.text).toBe(200);
      const res = await send('POST', '/envs/dev/dynamic/cache/leases');
      expect(res.status, res.text).toBe(201);
      const lease = createdLease.parse(res.body);
      const auth = async (password: string) => {
        const r = new Redis({
          host: '127.0.0.1',
          port: server.port,
          tls: { ca: certs.ca },
          lazyConnect: true,
          enableReadyCheck: false,
          maxRetriesPerRequest: 0,
          retryStrategy: () => null,
        });
        try {
          await r.connect();
          return (await r.call('AUTH', lease.values.CACHE_USERNAME!, password)) === 'OK';
        } catch {
          return false;
        } finally {
          r.disconnect();
        }
      };
      expect(await auth(lease.values.CACHE_PASSWORD!)).toBe(true);
      expect((await send('DELETE', `/envs/dev/dynamic/cache/leases/${lease.id}`)).status).toBe(204);
      expect(await auth(lease.values.CACHE_PASSWORD!)).toBe(false);
    });
  });
});
