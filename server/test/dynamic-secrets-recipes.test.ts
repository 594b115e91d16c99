/**
 * docs/dynamic-secrets.md, run as written (D70, D71): each `<!-- recipe: name -->` block of the page is taken
 * from the page itself, its setup statements run against the machine's PostgreSQL, MariaDB and Redis as their
 * administrators would run them, and its `curl` calls are sent to the real server. Only what a reader would
 * change is changed: names get a suffix of this run (roles and users are the database server's, shared by
 * every suite), hosts become 127.0.0.1, and TLS is `disable` (the machine's databases have none). A lease
 * then logs in with exactly the privileges the page promises, and is gone after its revocation.
 */

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connection as connectionSchema, createdLease, testConnectionResponse } from '@svcenv/contract';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, dialectName, signupUser, startApp, type TestApp } from './harness.js';
import { MARIADB, mariadbRoot, PG, pgAdmin, REDIS } from './managed-dbs.js';

const page = readFileSync(new URL('../../docs/dynamic-secrets.md', import.meta.url), 'utf8');

/** The fenced block under `<!-- recipe: name -->`. */
function recipe(name: string): string {
  const m = new RegExp(`<!-- recipe: ${name} -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``).exec(page);
  if (!m) throw new Error(`docs/dynamic-secrets.md has no recipe "${name}"`);
  return m[1]!;
}

/** SQL statements of a block: comments dropped, split at a `;` that ends a line. */
const statements = (sql: string) =>
  sql
    .split('\n')
    .filter((l) => !l.trim().startsWith('--'))
    .join('\n')
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);

/** The requests of a block of `curl` calls: method, path after `$SVCENV`, JSON body of its heredoc. */
function curls(block: string): { method: string; path: string; body?: unknown }[] {
  const out: { method: string; path: string; body?: unknown }[] = [];
  const re = /curl -s -X (\w+) "\$SVCENV([^"]+)"[^\n]*(?:\n[^\n]*?-d @- <<'EOF'\n([\s\S]*?)\nEOF)?/g;
  for (const m of block.matchAll(re)) {
    out.push({ method: m[1]!, path: m[2]!, ...(m[3] ? { body: JSON.parse(m[3]) } : {}) });
  }
  if (out.length === 0) throw new Error(`no curl call in:\n${block}`);
  return out;
}

/** The arguments of one `redis-cli` line, with the shell's single quotes. */
const shellWords = (line: string) => [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);

describe(`docs/dynamic-secrets.md recipes, as written (${dialectName})`, () => {
  const run = randomBytes(3).toString('hex');
  /** The page's names, with this run's suffix (longest first: `shop_owner` before `shop`). */
  const names: [RegExp, string][] = ['svcenv_admin', 'app_readwrite', 'app_readonly', 'shop_owner', 'shop'].map((n) => [
    new RegExp(`(?<![-\\w])${n}(?![-\\w])`, 'g'),
    `${n}_${run}`,
  ]);
  const renamed = (text: string) => names.reduce((t, [re, to]) => t.replace(re, to), text);
  let app: TestApp;
  let jwt: string;
  let projectId: string;

  /** Sends the block's calls as the page gives them (the project and host are this test's). */
  async function send(block: string, patch: (body: Record<string, unknown>) => void = () => {}) {
    const answers = [];
    for (const call of curls(renamed(block))) {
      const body = call.body as Record<string, unknown> | undefined;
      if (body) patch(body);
      const path = call.path.replace('/v1/projects/shop-api/', `/v1/projects/${projectId}/`);
      const res = await app.request(call.method, path, {
        token: jwt,
        body: body ?? (call.method === 'POST' ? {} : undefined),
      });
      expect(res.status, `${call.method} ${path}: ${res.text}`).toBeLessThan(300);
      answers.push(res);
    }
    return answers;
  }
  const onLoopback = (body: Record<string, unknown>) => {
    if ('host' in body) body.host = '127.0.0.1';
    if ('tls' in body) body.tls = { mode: 'disable' };
  };
  const lease = async (name: string) => {
    const res = await app.request('POST', `/v1/projects/${projectId}/envs/dev/dynamic/${name}/leases`, {
      token: jwt,
      body: {},
    });
    expect(res.status, res.text).toBe(201);
    return createdLease.parse(res.body);
  };
  const revoke = async (name: string, id: string) => {
    const res = await app.request('DELETE', `/v1/projects/${projectId}/envs/dev/dynamic/${name}/leases/${id}`, {
      token: jwt,
    });
    expect(res.status, res.text).toBe(204);
  };

  beforeAll(async () => {
    app = await startApp({ env: { CONNECTIONS_TIMEOUT_MS: '3000' } });
    jwt = (await signupUser(app, 'Recipes')).jwt;
    projectId = (await createProject(app, jwt, { name: 'shop-api' })).id;
  });
  afterAll(async () => {
    await app?.stop();
  });

  describe('PostgreSQL', () => {
    const db = `shop_${run}`;
    const inShop = async <T>(user: string, password: string, fn: (c: pg.Client) => Promise<T>) => {
      const c = new pg.Client({ ...PG, database: db, user, password });
      await c.connect();
      try {
        return await fn(c);
      } finally {
        await c.end();
      }
    };
    beforeAll(async () => {
      // What the page takes as given: a database whose tables belong to the migrations' role.
      await pgAdmin(async (c) => {
        await c.query(`CREATE ROLE shop_owner_${run} NOLOGIN`);
        await c.query(`CREATE DATABASE ${db} OWNER shop_owner_${run}`);
      });
      await inShop('postgres', '', async (c) => {
        for (const s of statements(renamed(recipe('pg-setup')))) await c.query(s);
        // A table made after the setup, by the owner: the default privileges must reach it.
        await c.query(`SET ROLE shop_owner_${run}`);
        await c.query('CREATE TABLE orders (id serial PRIMARY KEY, item text)');
        await c.query("INSERT INTO orders (item) VALUES ('tea')");
      });
    });
    afterAll(async () => {
      await pgAdmin(async (c) => {
        await c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
        for (const r of ['svcenv_admin', 'app_readonly', 'app_readwrite', 'shop_owner']) {
          await c.query(`DROP ROLE IF EXISTS ${r}_${run}`);
        }
      });
    });

    it('the connection user of the page makes read-only and read-write users, and drops them', async () => {
      const [created, tested, rotated] = await send(recipe('pg-connection'), (b) => {
        onLoopback(b);
        b.port = PG.port;
      });
      expect(connectionSchema.parse(created!.body)).toMatchObject({ username: `svcenv_admin_${run}` });
      expect(testConnectionResponse.parse(tested!.body)).toMatchObject({ ok: true });
      expect(connectionSchema.parse(rotated!.body).rootRotatedAt).not.toBeNull();
      await send(recipe('pg-readonly'));
      await send(recipe('pg-readwrite'));

      const ro = await lease('app-db-ro');
      expect(ro.values).toMatchObject({ PGHOST: '127.0.0.1', PGPORT: '5432', PGDATABASE: db });
      await inShop(ro.values.PGUSER!, ro.values.PGPASSWORD!, async (c) => {
        expect((await c.query('SELECT item FROM orders')).rows).toEqual([{ item: 'tea' }]);
        await expect(c.query("INSERT INTO orders (item) VALUES ('no')")).rejects.toThrow(/permission denied/);
      });
      const rw = await lease('app-db');
      await inShop(rw.values.DB_USER!, rw.values.DB_PASSWORD!, async (c) => {
        await c.query("INSERT INTO orders (item) VALUES ('coffee')");
        expect((await c.query('SHOW statement_timeout')).rows[0]).toEqual({ statement_timeout: '30s' });
      });

      await revoke('app-db-ro', ro.id);
      await revoke('app-db', rw.id);
      const left = await pgAdmin((c) =>
        c.query('SELECT rolname FROM pg_roles WHERE rolname = ANY($1)', [[ro.values.PGUSER, rw.values.DB_USER]]),
      );
      expect(left.rows).toEqual([]);
    });
  });

  describe('MySQL and MariaDB', () => {
    const db = `shop_${run}`;
    beforeAll(async () => {
      await mariadbRoot(async (c) => {
        await c.query(`CREATE DATABASE ${db}`);
        await c.query(`CREATE TABLE ${db}.orders (id int AUTO_INCREMENT PRIMARY KEY, item text)`);
        await c.query(`INSERT INTO ${db}.orders (item) VALUES ('tea')`);
        for (const s of statements(renamed(recipe('mysql-setup')))) await c.query(s);
      });
    });
    afterAll(async () => {
      await mariadbRoot(async (c) => {
        await c.query(`DROP DATABASE IF EXISTS ${db}`);
        await c.query(`DROP USER IF EXISTS 'svcenv_admin_${run}'@'%'`);
      });
    });

    it('the connection user of the page makes a read-only user, and drops it', async () => {
      const [created, rotated] = await send(recipe('mysql-connection'), (b) => {
        onLoopback(b);
        b.port = MARIADB.port;
      });
      expect(connectionSchema.parse(created!.body).kind).toBe('mysql');
      expect(connectionSchema.parse(rotated!.body).rootRotatedAt).not.toBeNull();
      await send(recipe('mysql-readonly'));
      const reports = await lease('reports');
      const user = reports.values.MYSQL_USER!;
      expect(user.length).toBeLessThanOrEqual(32);
      const c = await mysql.createConnection({ ...MARIADB, user, password: reports.values.MYSQL_PASSWORD! });
      try {
        const [rows] = await c.query(`SELECT item FROM ${db}.orders`);
        expect(rows).toEqual([{ item: 'tea' }]);
        await expect(c.query(`INSERT INTO ${db}.orders (item) VALUES ('no')`)).rejects.toThrow(/denied/);
      } finally {
        await c.end();
      }
      await revoke('reports', reports.id);
      const left = await mariadbRoot(
        async (r) => (await r.query('SELECT 1 FROM mysql.user WHERE User = ?', [user]))[0],
      );
      expect(left).toEqual([]);
    });
  });

  describe('Redis', () => {
    const admin = `svcenv_admin_${run}`;
    const redis = async <T>(fn: (r: Redis) => Promise<T>, auth?: { username: string; password: string }) => {
      const r = new Redis({
        ...REDIS,
        ...auth,
        lazyConnect: true,
        enableReadyCheck: false,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      await r.connect();
      try {
        return await fn(r);
      } finally {
        r.disconnect();
      }
    };
    beforeAll(async () => {
      const line = renamed(recipe('redis-setup')).trim();
      const [cli, ...args] = shellWords(line);
      expect(cli).toBe('redis-cli');
      await redis((r) => r.call(args[0]!, ...args.slice(1)));
    });
    afterAll(async () => {
      await redis((r) => r.call('ACL', 'DELUSER', admin));
    });

    it('the connection user of the page (nothing but its ACL commands) makes a cache user, and deletes it', async () => {
      const [created] = await send(recipe('redis-connection'), (b) => {
        onLoopback(b);
        b.port = REDIS.port;
      });
      expect(connectionSchema.parse(created!.body).kind).toBe('redis');
      const [tested, rotated] = await send(
        [
          `curl -s -X POST "$SVCENV/v1/projects/shop-api/connections/cache/test" -H x`,
          `curl -s -X POST "$SVCENV/v1/projects/shop-api/connections/cache/rotate-root" -H x`,
        ].join('\n'),
      );
      expect(testConnectionResponse.parse(tested!.body)).toMatchObject({ ok: true });
      expect(connectionSchema.parse(rotated!.body).rootRotatedAt).not.toBeNull();
      await send(recipe('redis-cache'));
      const cache = await lease('cache');
      const auth = { username: cache.values.REDIS_USERNAME!, password: cache.values.REDIS_PASSWORD! };
      await redis(async (r) => {
        expect(await r.set(`cache:${run}`, 'v')).toBe('OK');
        expect(await r.get(`cache:${run}`)).toBe('v');
        await expect(r.get(`other:${run}`)).rejects.toThrow(/NOPERM/);
        await expect(r.call('FLUSHALL')).rejects.toThrow(/NOPERM/);
        await r.del(`cache:${run}`);
      }, auth);
      await revoke('cache', cache.id);
      expect(await redis((r) => r.call('ACL', 'GETUSER', auth.username))).toBeNull();
    });
  });
});
