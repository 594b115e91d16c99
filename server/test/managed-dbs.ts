/**
 * The machine's own managed databases as the D70-D72 suites use them: PostgreSQL on 127.0.0.1:5432 (trust
 * auth: a role that exists logs in whatever its password, one that was dropped cannot), MariaDB on
 * 127.0.0.1:3306 (real passwords) and Redis on 127.0.0.1:6379 (ACL users with passwords). Each suite makes
 * an admin user of its own (never the machine's root or `default` user) and removes it, and the users its
 * leases made, at the end: only those, named by the suite (leasedUsernames reads them from its store), never
 * every `v_` user of the machine, which would take those of a suite running at the same time. A TCP relay
 * stands in for a database that goes away and comes back.
 */
import { randomBytes } from 'node:crypto';
import { type AddressInfo, createServer, type Server, Socket } from 'node:net';
import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { Database } from '../src/db/schema.js';

export const PG = { host: '127.0.0.1', port: 5432, database: 'test' };
export const MARIADB = { host: '127.0.0.1', port: 3306 };
export const REDIS = { host: '127.0.0.1', port: 6379 };

/** A D70 connection (its request body) to the machine's PostgreSQL as `postgres`: trust auth, the password unchecked. */
export const machinePgConnection = (name = 'pg') => ({
  name,
  kind: 'postgres',
  host: PG.host,
  port: PG.port,
  database: PG.database,
  username: 'postgres',
  password: 'pw-trust-ignores-it',
  tls: { mode: 'disable' },
});

const rand = () => randomBytes(4).toString('hex');

/**
 * The database users a suite's svcenv store has leases for, ended or not (read before the app stops): what
 * the suite's clean-up may remove, and nothing else.
 */
export async function leasedUsernames(db: Kysely<Database>): Promise<string[]> {
  const rows = await db.selectFrom('leases').select('username').execute();
  return rows.map((r) => r.username);
}

/** Removes these PostgreSQL roles (and what they own) where they still exist; no other role is touched. */
export async function pgDropRoles(names: Iterable<string>): Promise<void> {
  const list = [...names];
  if (list.length === 0) return;
  await pgAdmin(async (c) => {
    const { rows } = await c.query('select rolname from pg_roles where rolname = any($1)', [list]);
    for (const r of rows as { rolname: string }[]) {
      await c.query(`drop owned by "${r.rolname}"`).catch(() => undefined);
      await c.query(`drop role if exists "${r.rolname}"`).catch(() => undefined);
    }
  });
}

/** Whether `user` can log in to the machine's PostgreSQL (trust auth: whether the role exists and may log in). */
export async function pgCanLogin(user: string, password: string): Promise<boolean> {
  const c = new pg.Client({ ...PG, user, password, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** The machine's PostgreSQL as its superuser, for setting up and looking. */
export async function pgAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ ...PG, user: 'postgres' });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export async function pgRoleExists(name: string): Promise<boolean> {
  return pgAdmin(async (c) => (await c.query('select 1 from pg_roles where rolname = $1', [name])).rowCount === 1);
}

/** MariaDB as root (no password), for setting up and looking. */
export async function mariadbRoot<T>(fn: (c: mysql.Connection) => Promise<T>): Promise<T> {
  const c = await mysql.createConnection({ ...MARIADB, user: 'root' });
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export async function mariadbCanLogin(user: string, password: string): Promise<boolean> {
  try {
    const c = await mysql.createConnection({ ...MARIADB, user, password, connectTimeout: 3000 });
    await c.query('select 1');
    await c.end();
    return true;
  } catch {
    return false;
  }
}

export async function mariadbUserExists(user: string): Promise<boolean> {
  return mariadbRoot(async (c) => {
    const [rows] = await c.query('select 1 from mysql.user where User = ?', [user]);
    return (rows as unknown[]).length > 0;
  });
}

/**
 * A MariaDB admin of the suite's own, with what its leases' and rotations' statements need. `drop` removes it,
 * the users named after it (the suite's rotations), and the `leased` users the suite names.
 */
export async function mariadbAdmin(): Promise<{
  username: string;
  password: string;
  drop(leased?: Iterable<string>): Promise<void>;
}> {
  const username = `svcenv_t_${rand()}`;
  const password = `pw${randomBytes(12).toString('hex')}`;
  await mariadbRoot(async (c) => {
    await c.query(`CREATE USER '${username}'@'%' IDENTIFIED BY '${password}'`);
    await c.query(`GRANT ALL PRIVILEGES ON *.* TO '${username}'@'%' WITH GRANT OPTION`);
  });
  return {
    username,
    password,
    drop: (leased: Iterable<string> = []) =>
      mariadbRoot(async (c) => {
        const named = [...leased];
        const [rows] = await c.query(
          `select User, Host from mysql.user where User like ?${named.length ? ' or User in (?)' : ''}`,
          named.length ? [`${username}%`, named] : [`${username}%`],
        );
        for (const r of rows as { User: string; Host: string }[]) await c.query(`DROP USER '${r.User}'@'${r.Host}'`);
      }),
  };
}

/** A Redis ACL admin of the suite's own (never the `default` user); `drop` removes it and the `leased` users. */
export async function redisAdmin(): Promise<{
  username: string;
  password: string;
  drop(leased?: Iterable<string>): Promise<void>;
}> {
  const username = `svcenv_t_${rand()}`;
  const password = `pw${randomBytes(12).toString('hex')}`;
  const r = new Redis({ ...REDIS, lazyConnect: true });
  await r.connect();
  await r.call('ACL', 'SETUSER', username, 'on', `>${password}`, '~*', '&*', '+@all');
  await r.quit();
  return {
    username,
    password,
    async drop(leased: Iterable<string> = []) {
      const mine = new Set([username, ...leased]);
      const c = new Redis({ ...REDIS, lazyConnect: true });
      await c.connect();
      const users = (await c.call('ACL', 'USERS')) as string[];
      for (const u of users) if (mine.has(u)) await c.call('ACL', 'DELUSER', u);
      await c.quit();
    },
  };
}

export async function redisCanLogin(user: string, password: string): Promise<boolean> {
  // AUTH as its own command, answered OK or WRONGPASS: the user may be allowed nothing else (not even PING).
  const r = new Redis({ ...REDIS, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await r.connect();
    return (await r.call('AUTH', user, password)) === 'OK';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

/**
 * A TCP relay in front of a database: `down()` closes it and every connection through it (the database went
 * away), `up()` listens again on the same port (it came back). `silent()` accepts connections and never
 * answers (a database that hangs).
 */
export async function startRelay(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let mode: 'relay' | 'silent' = 'relay';
  let server: Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        sockets.add(client);
        client.on('close', () => sockets.delete(client));
        client.on('error', () => undefined);
        if (mode === 'silent') return;
        const upstream = new Socket();
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        upstream.connect(target.port, target.host, () => {
          client.pipe(upstream);
          upstream.pipe(client);
        });
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();
  const close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = null;
  };
  return {
    get port() {
      return port;
    },
    down: close,
    up: async () => {
      mode = 'relay';
      await listen();
    },
    silent: async () => {
      await close();
      mode = 'silent';
      await listen();
    },
    stop: close,
  };
}
