import mysql from 'mysql2';
import {
  cleaned,
  type EngineContext,
  errorMessage,
  networkFailure,
  Sockets,
  sqlStatementsProblem,
  statementLabel,
  targetAddress,
  withDeadline,
} from './common.js';
import { fillPlaceholders, passwordProblem } from './credentials.js';
import { type Engine, ManagedDbError, type ManagedTarget, type Statement, type StatementVars } from './engine.js';

/**
 * MySQL and MariaDB (D70-D72) through `mysql2`. DDL commits by itself, so create statements run one by one
 * and a failed create is undone by the engine (D71: no user left behind). Time: connect, TLS and login
 * within connectMs (connectTimeout); each statement within statementMs (the query's own timeout), after
 * which the statement's thread is killed from a second connection, so a CREATE USER queued behind a lock
 * cannot still run after the failure was reported, and the connection is destroyed.
 * The socket goes to the checked address (the `stream` factory) while `host` stays the name the
 * connection was made with, which mysql2 sends as SNI and checks the certificate against.
 */

type Phase = 'connect' | 'statement';

interface MysqlError {
  code?: string;
  errno?: number;
  sqlState?: string;
  sqlMessage?: string;
  message?: string;
}

/** ER_PARSE_ERROR quotes the statement (`near '...' at line 1`), and a statement may hold a password. */
const stripNear = (message: string): string =>
  message.replace(/\s*near '[\s\S]*' at line (\d+)/, ' at line $1').replace(/\s*near '[\s\S]*$/, '');

const AUTH_CODES = new Set([
  'ER_ACCESS_DENIED_ERROR',
  'ER_DBACCESS_DENIED_ERROR',
  'ER_ACCESS_DENIED_NO_PASSWORD_ERROR',
  'ER_NOT_SUPPORTED_AUTH_MODE',
  'ER_ACCOUNT_HAS_BEEN_LOCKED',
  'ER_MUST_CHANGE_PASSWORD_LOGIN',
]);
const TIMEOUT_CODES = new Set(['ER_STATEMENT_TIMEOUT', 'ER_QUERY_TIMEOUT', 'ER_LOCK_WAIT_TIMEOUT']);

function mysqlFailure(e: unknown, phase: Phase, label: string, ctx: EngineContext, where: string): ManagedDbError {
  if (e instanceof ManagedDbError) return e;
  const err = (typeof e === 'object' && e !== null ? e : {}) as MysqlError;
  const code = err.code ?? '';
  if (err.sqlState !== undefined) {
    const message = stripNear(err.sqlMessage ?? err.message ?? '');
    if (phase === 'connect' && AUTH_CODES.has(code)) return new ManagedDbError('auth', message);
    if (TIMEOUT_CODES.has(code)) return new ManagedDbError('timeout', `${label}: ${message}`);
    if (phase === 'connect') return new ManagedDbError('connect', message);
    return new ManagedDbError('statement', `${label} failed: ${message}`);
  }
  if (code === 'PROTOCOL_SEQUENCE_TIMEOUT') {
    return new ManagedDbError('timeout', `${label}: no answer within ${ctx.timeouts.statementMs} ms (${where})`);
  }
  if (code === 'HANDSHAKE_NO_SSL_SUPPORT') return new ManagedDbError('tls', `the server does not offer TLS (${where})`);
  // mysql2 replaces the TLS error's own code with its own.
  if (code === 'HANDSHAKE_SSL_ERROR') {
    const message = errorMessage(e);
    return new ManagedDbError(
      'tls',
      /altnames/.test(message)
        ? `certificate does not match the host name: ${message}`
        : `TLS failed: ${message} (${where})`,
    );
  }
  const net = networkFailure(e, where, ctx.timeouts);
  if (net) return net;
  if (code === 'PROTOCOL_CONNECTION_LOST' || code === 'ER_SERVER_SHUTDOWN') {
    return new ManagedDbError('connect', `the server closed the connection (${where})`);
  }
  return new ManagedDbError(phase === 'connect' ? 'connect' : 'statement', `${label}: ${stripNear(errorMessage(e))}`);
}

/** A MySQL string literal (user and host names). Quotes doubled, backslashes escaped: safe in both sql_modes. */
const literal = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** The connection a session runs on: a pooled one or one of its own. */
type Conn = mysql.Connection | mysql.PoolConnection;

interface Session {
  /** One statement; a failure comes back as ManagedDbError naming `label`, never the text. */
  run(sql: string, label: string, values?: unknown[]): Promise<unknown>;
  /** Set once a D71 statement ran: it may have changed the session (USE, SET ROLE, SET SESSION ...). */
  dirty: boolean;
}

export function createMysqlEngine(ctx: EngineContext): Engine {
  const { timeouts } = ctx;
  const lockWaitSeconds = Math.max(1, Math.ceil(timeouts.statementMs / 1000));

  const config = (target: ManagedTarget, address: string, user: string, password: string, sockets: Sockets) => {
    const tls = target.tls;
    return {
      host: target.host.replace(/^\[(.*)\]$/, '$1'),
      port: target.port,
      user,
      password,
      ...(target.database ? { database: target.database } : {}),
      connectTimeout: timeouts.connectMs,
      stream: () => sockets.connect(address, target.port),
      ...(tls.mode === 'disable'
        ? {}
        : {
            ssl:
              tls.mode === 'require'
                ? { rejectUnauthorized: false }
                : { rejectUnauthorized: true, verifyIdentity: true, ...(tls.ca ? { ca: tls.ca } : {}) },
          }),
      multipleStatements: false,
      supportBigNumbers: true,
    };
  };

  /** Opens a connection of its own; later errors of it (the server dropping it) fail the pending call only. */
  const connectAlone = (options: mysql.ConnectionOptions): Promise<mysql.Connection> =>
    new Promise((resolve, reject) => {
      const conn = mysql.createConnection(options);
      conn.on('error', reject);
      conn.once('connect', () => resolve(conn));
    });

  const query = (conn: Conn, sql: string, values: unknown[] | undefined) =>
    new Promise<unknown>((resolve, reject) =>
      conn.query({ sql, timeout: timeouts.statementMs, values }, (e, rows) => (e ? reject(e) : resolve(rows))),
    );

  /** Bounds the server's own waits (DDL queued behind a metadata lock) once per connection. */
  const bounded = new WeakSet<object>();

  /** Kills a thread whose statement we stopped waiting for (same user: no privilege needed). Best effort. */
  async function killThread(target: ManagedTarget, address: string, threadId: number | null): Promise<void> {
    if (threadId === null) return;
    await alone(target, address, target.username, target.password, (s) =>
      s.run(`KILL ${Number(threadId)}`, 'KILL'),
    ).catch(() => {});
  }

  /** A session on `conn`; a statement that times out kills its thread and marks the connection broken. */
  function session(conn: Conn, target: ManagedTarget, address: string, broken: () => void): Session {
    const where = `${target.host}:${target.port}`;
    return {
      dirty: false,
      async run(sql, label, values) {
        try {
          if (!bounded.has(conn)) {
            await query(conn, `SET SESSION lock_wait_timeout = ${lockWaitSeconds}`, undefined);
            bounded.add(conn);
          }
          return await query(conn, sql, values);
        } catch (e) {
          const failure = mysqlFailure(e, 'statement', label, ctx, where);
          if ((e as MysqlError).sqlState === undefined) {
            broken();
            if (failure.failure === 'timeout') await killThread(target, address, conn.threadId);
          }
          throw failure;
        }
      },
    };
  }

  /** Logs in as `user` on a connection of its own, runs `work`, logs out. */
  async function alone<T>(
    target: ManagedTarget,
    address: string,
    user: string,
    password: string,
    work: (s: Session) => Promise<T>,
  ): Promise<T> {
    const where = `${target.host}:${target.port}`;
    const sockets = new Sockets();
    let conn: mysql.Connection | undefined;
    try {
      try {
        conn = await connectAlone(config(target, address, user, password, sockets));
      } catch (e) {
        throw mysqlFailure(e, 'connect', 'login', ctx, where);
      }
      return await work(session(conn, target, address, () => {}));
    } finally {
      const c = conn;
      await sockets.close(
        () => (c ? new Promise<void>((resolve) => c.end(() => resolve())) : Promise.resolve()),
        timeouts.statementMs,
      );
    }
  }

  async function asAdmin<T>(target: ManagedTarget, work: (s: Session) => Promise<T>, secrets: string[]): Promise<T> {
    const where = `${target.host}:${target.port}`;
    try {
      const address = await targetAddress(ctx, target);
      const key = target.poolKey;
      if (!key) return await alone(target, address, target.username, target.password, work);
      const settings = ['mysql', address, target.host, target.port, target.database, target.username, target.password];
      return await ctx.pools.use(
        key,
        [...settings, target.tls],
        () => {
          const sockets = new Sockets();
          const pool = mysql.createPool({
            ...config(target, address, target.username, target.password, sockets),
            connectionLimit: 4,
            maxIdle: 4,
            idleTimeout: 30_000,
            queueLimit: 0,
          });
          return {
            pool,
            close: () => sockets.close(() => new Promise<void>((r) => pool.end(() => r())), timeouts.statementMs),
          };
        },
        async (pool) => {
          // The pool's queue waits without a bound of its own: the connect bound covers the wait and the login.
          const conn = await withDeadline(
            new Promise<mysql.PoolConnection>((resolve, reject) =>
              pool.getConnection((e, c) => (e ? reject(e) : resolve(c))),
            ),
            timeouts.connectMs,
            `login (${where})`,
            (late) => late.release(),
          ).catch((e) => {
            throw mysqlFailure(e, 'connect', 'login', ctx, where);
          });
          let isBroken = false;
          const s = session(conn, target, address, () => {
            isBroken = true;
          });
          try {
            return await work(s);
          } finally {
            // A statement of one environment's dynamic secret must not leave its session state (USE, SET
            // ROLE, SET SESSION) to the next lease of the connection, maybe another environment's:
            // COM_RESET_CONNECTION before the connection goes back to the pool, or it is not reused.
            if (s.dirty && !isBroken) {
              await withDeadline(
                new Promise<void>((resolve, reject) => conn.reset((e) => (e ? reject(e) : resolve()))),
                timeouts.statementMs,
                'resetting the session',
              ).then(
                () => bounded.delete(conn),
                () => {
                  isBroken = true;
                },
              );
            }
            if (isBroken) conn.destroy();
            else conn.release();
          }
        },
      );
    } catch (e) {
      throw cleaned(mysqlFailure(e, 'connect', 'login', ctx, where), secrets);
    }
  }

  /** The host rows of `username` in mysql.user (a user is `'name'@'host'`; one name may have several). */
  const hostsOf = async (s: Session, username: string): Promise<string[]> => {
    const rows = (await s.run('SELECT Host AS host FROM mysql.user WHERE User = ?', 'looking up the user', [
      username,
    ])) as { host: string }[];
    return rows.map((r) => r.host);
  };

  const runAll = async (s: Session, statements: readonly Statement[], vars: StatementVars) => {
    s.dirty = true;
    for (const [i, statement] of statements.entries()) {
      await s.run(fillPlaceholders(statement, vars) as string, statementLabel(i, statements.length));
    }
  };

  const defaultRevoke = ["DROP USER '{{username}}'@'%'"];

  /** After a failed create: the default revoke, then any host row of the name left. Best effort. */
  async function undoCreate(target: ManagedTarget, vars: StatementVars): Promise<void> {
    await asAdmin(
      target,
      async (s) => {
        await runAll(s, defaultRevoke, vars).catch(() => {});
        for (const host of await hostsOf(s, vars.username).catch(() => [])) {
          await s.run(`DROP USER IF EXISTS ${literal(vars.username)}@${literal(host)}`, 'DROP USER').catch(() => {});
        }
      },
      [target.password, vars.password],
    ).catch(() => {});
  }

  /**
   * The sessions of a revoked user, ended (MySQL's DROP USER leaves them open). Visible only with the
   * PROCESS privilege and killable only with CONNECTION_ADMIN (or SUPER): best effort, on top of D71.
   */
  async function endSessions(s: Session, username: string): Promise<void> {
    const rows = (await s
      .run('SELECT ID AS id FROM information_schema.PROCESSLIST WHERE USER = ?', 'listing sessions', [username])
      .catch(() => [])) as { id: number }[];
    for (const { id } of rows) await s.run(`KILL CONNECTION ${Number(id)}`, 'KILL').catch(() => {});
  }

  async function login(target: ManagedTarget, username: string, password: string): Promise<void> {
    const where = `${target.host}:${target.port}`;
    try {
      const address = await targetAddress(ctx, target);
      await alone(target, address, username, password, (s) => s.run('SELECT 1', 'SELECT 1'));
    } catch (e) {
      throw cleaned(mysqlFailure(e, 'connect', 'login', ctx, where), [password, target.password]);
    }
  }

  return {
    kind: 'mysql',
    defaultPort: 3306,
    maxUsernameLength: 32,
    // D71 details: MySQL's default revoke.
    defaultRevoke,
    checkStatements(statements) {
      const problem = sqlStatementsProblem(statements);
      if (problem) return problem;
      // COM_RESET_CONNECTION (after each call's statements) keeps the current database: a USE would stay.
      const use = statements.findIndex((s) => /^\s*USE\b/i.test(s as string));
      return use < 0 ? null : `statement ${use + 1}: USE is refused; name the database in the statement instead`;
    },
    test: (target) => login(target, target.username, target.password),

    async createUser(target, create, vars, { recorded }) {
      await recorded();
      try {
        await asAdmin(target, (s) => runAll(s, create, vars), [target.password, vars.password]);
      } catch (e) {
        // D71: DDL committed statement by statement, so the user may exist already: remove it before failing.
        await undoCreate(target, vars);
        throw e;
      }
    },

    revokeUser(target, revoke, vars) {
      return asAdmin(
        target,
        async (s) => {
          // D71 details: a user already gone (dropped by hand) counts as revoked.
          if ((await hostsOf(s, vars.username)).length === 0) return 'gone' as const;
          await runAll(s, revoke, vars);
          await endSessions(s, vars.username);
          return 'revoked' as const;
        },
        [target.password, vars.password],
      );
    },

    userExists(target, username) {
      return asAdmin(target, async (s) => (await hostsOf(s, username)).length > 0, [target.password]);
    },

    async setPassword(target, username, password) {
      const problem = passwordProblem(password);
      if (problem) throw new ManagedDbError('statement', problem);
      const own = username === target.username;
      await asAdmin(
        target,
        async (s) => {
          if (own) {
            // The connection's own user, by the host row it logged in through. Named, not
            // `ALTER USER CURRENT_USER()`, which MariaDB 10.11 accepts and silently ignores.
            const [row] = (await s.run('SELECT CURRENT_USER() AS me', 'looking up the user')) as { me: string }[];
            const me = row?.me ?? '';
            const at = me.lastIndexOf('@');
            await s.run(
              `ALTER USER ${literal(me.slice(0, at))}@${literal(me.slice(at + 1))} IDENTIFIED BY ${literal(password)}`,
              'setting the password',
            );
            return;
          }
          const hosts = await hostsOf(s, username);
          if (hosts.length === 0) throw new ManagedDbError('statement', `user "${username}" does not exist`);
          for (const host of hosts) {
            await s.run(
              `ALTER USER ${literal(username)}@${literal(host)} IDENTIFIED BY ${literal(password)}`,
              'setting the password',
            );
          }
        },
        [target.password, password],
      );
      if (own && target.poolKey) await ctx.pools.drop(target.poolKey);
    },

    login,
  };
}
