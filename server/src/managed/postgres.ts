import { createHash, createHmac, pbkdf2, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import {
  cleaned,
  type EngineContext,
  errorMessage,
  networkFailure,
  Sockets,
  sqlStatementsProblem,
  statementLabel,
  targetAddress,
  tlsOptions,
} from './common.js';
import { fillPlaceholders, makePassword, passwordProblem } from './credentials.js';
import { type Engine, ManagedDbError, type ManagedTarget, type Statement, type StatementVars } from './engine.js';

/**
 * PostgreSQL (D70-D72) through `pg`. Each call runs on a pooled admin connection (ManagedTarget.poolKey) or
 * on one of its own. Time: connect, TLS and login within connectMs (connectionTimeoutMillis); each statement
 * within statementMs, cancelled by the server (`SET LOCAL statement_timeout` in the call's transaction) and,
 * should the server not answer at all, given up by the client a moment later (query_timeout; a round trip
 * of several bounded statements, every bound and the moment), its connection then destroyed rather than
 * reused. The server's cancel matters: a statement the client merely stopped
 * waiting for (an ALTER ROLE queued behind a lock) could still commit after we reported a failure. The
 * timeout is set in the transaction rather than as a startup parameter, which PgBouncer refuses.
 */

/**
 * What DISCARD ALL does, in the statements PostgreSQL documents it as (DISCARD ALL itself cannot run in a
 * multi-statement text, which is a transaction block): sent after a create's or a revoke's COMMIT in the
 * same round trip, so a pooled session goes back to the pool clean without a round trip of its own.
 */
const RESET_SESSION = [
  'CLOSE ALL',
  'SET SESSION AUTHORIZATION DEFAULT',
  'RESET ALL',
  'DEALLOCATE ALL',
  'UNLISTEN *',
  'SELECT pg_advisory_unlock_all()',
  'DISCARD PLANS',
  'DISCARD TEMP',
  'DISCARD SEQUENCES',
];

/** How much longer the client waits than the server's statement_timeout, so the server's cancel comes first. */
const CLIENT_GRACE_MS = 250;

/**
 * How many times a create runs again after PostgreSQL refused it with "tuple concurrently updated" (XX000):
 * two grants at once that rewrite the same catalog row (`GRANT CONNECT ON DATABASE`, the database's ACL),
 * where the second fails instead of waiting. The whole transaction was rolled back, so nothing is left
 * behind, and running it again is safe; a short random pause first lets the other one commit.
 */
const CONCURRENT_UPDATE_RETRIES = 5;

/** PostgreSQL's "tuple concurrently updated": a catalog row another transaction changed meanwhile. */
const isConcurrentUpdate = (e: unknown): boolean =>
  e instanceof pg.DatabaseError && e.code === 'XX000' && /tuple concurrently updated/i.test(e.message);

/** A statement refused only because another transaction changed the same catalog row: worth running again. */
class ConcurrentUpdateError extends ManagedDbError {}

const { escapeIdentifier, escapeLiteral } = pg;

const pbkdf2Async = promisify(pbkdf2);

/**
 * A SCRAM-SHA-256 verifier of `password` (RFC 5803, PostgreSQL's stored form), so that `ALTER ROLE ...
 * PASSWORD` never carries the password itself: a server that logs statements (log_statement = 'ddl') logs
 * only the verifier. The password is printable ASCII (passwordProblem), for which SASLprep changes nothing.
 */
export async function scramVerifier(password: string): Promise<string> {
  const iterations = 4096;
  const salt = randomBytes(16);
  const salted = await pbkdf2Async(password, salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest('base64');
  const serverKey = createHmac('sha256', salted).update('Server Key').digest('base64');
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey}:${serverKey}`;
}

/**
 * `PASSWORD '{{password}}'` in a create statement (ENCRYPTED or not): where PostgreSQL takes the password's
 * SCRAM verifier in its place, with the same effect. The lease's create sends the verifier there, as
 * setPassword does, so the password itself never reaches the database (its statement log, pg_stat_activity).
 */
const PASSWORD_CLAUSE = /\bPASSWORD(\s+)'\{\{password\}\}'/gi;

/**
 * Lease passwords made ahead with their SCRAM verifiers: hashing one (PBKDF2, 4096 rounds) takes about 3 ms
 * of a core, which a lease then need not wait for (PostgreSQL itself still spends as long checking that the
 * verifier is not one of an empty password, as it spent hashing a password sent in the clear; so a lease is
 * as fast as before, bench/leases.bench.ts). Filled one at a time in the background, up to `size`,
 * from the first password asked for on (a server that never leases never hashes); a password handed out keeps
 * its verifier until its create takes it, and one whose create never came (the lease failed before it) is
 * forgotten past a bound. An empty stock (a burst) hashes in the create, off the event loop.
 */
function verifierStock(size: number) {
  const ready: { password: string; verifier: string }[] = [];
  const handedOut = new Map<string, string>();
  let filling = false;
  const fill = () => {
    if (filling || ready.length >= size) return;
    filling = true;
    const password = makePassword();
    scramVerifier(password).then(
      (verifier) => {
        ready.push({ password, verifier });
        filling = false;
        fill();
      },
      () => {
        filling = false;
      },
    );
  };
  return {
    newPassword(): string {
      const got = ready.shift();
      fill();
      if (!got) return makePassword();
      handedOut.set(got.password, got.verifier);
      if (handedOut.size > 64) handedOut.delete(handedOut.keys().next().value!);
      return got.password;
    },
    verifierOf(password: string): Promise<string> {
      const verifier = handedOut.get(password);
      handedOut.delete(password);
      return verifier !== undefined ? Promise.resolve(verifier) : scramVerifier(password);
    },
  };
}

interface Session {
  /**
   * One round trip; a failure comes back as ManagedDbError naming `label`, never the text. `bounded`: how
   * many statements of the text the server bounds (statement_timeout), so the client waits that many bounds
   * (and a grace) for the whole round trip before it gives up.
   */
  run(text: string, label: string, values?: unknown[], bounded?: number): Promise<pg.QueryResult>;
  /** Set while a D71 statement may have changed the session (SET ROLE, search_path, ...) not reset since. */
  dirty: boolean;
}

type Phase = 'connect' | 'statement';

/** A `pg` error as a ManagedFailure: the server's message (it names what failed), never the statement. */
function pgFailure(e: unknown, phase: Phase, label: string, ctx: EngineContext, where: string): ManagedDbError {
  if (e instanceof ManagedDbError) return e;
  if (e instanceof pg.DatabaseError) {
    const code = e.code ?? '';
    // 28P01 invalid_password, 28000 invalid_authorization_specification (no such role, no pg_hba entry).
    if (code === '28P01' || code === '28000') return new ManagedDbError('auth', e.message);
    // 57014 query_canceled: statement_timeout.
    if (code === '57014') {
      return new ManagedDbError('timeout', `${label}: no answer within ${ctx.timeouts.statementMs} ms`);
    }
    if (phase === 'connect') return new ManagedDbError('connect', e.message);
    return new ManagedDbError('statement', `${label} failed: ${e.message}`);
  }
  const net = networkFailure(e, where, ctx.timeouts);
  if (net) return net;
  const message = errorMessage(e);
  if (/does not support SSL/i.test(message))
    return new ManagedDbError('tls', `the server does not offer TLS (${where})`);
  if (/timeout/i.test(message)) {
    const ms = phase === 'connect' ? ctx.timeouts.connectMs : ctx.timeouts.statementMs;
    return new ManagedDbError(
      'timeout',
      `${phase === 'connect' ? 'login' : label}: no answer within ${ms} ms (${where})`,
    );
  }
  if (/terminated/i.test(message)) return new ManagedDbError('connect', `the server closed the connection (${where})`);
  return new ManagedDbError(phase === 'connect' ? 'connect' : 'statement', `${label}: ${message}`);
}

export function createPostgresEngine(ctx: EngineContext): Engine {
  const { timeouts } = ctx;

  const config = (target: ManagedTarget, address: string, user: string, password: string, sockets: Sockets) => ({
    host: address,
    port: target.port,
    user,
    password,
    database: target.database ?? 'postgres',
    ssl: tlsOptions(target) ?? false,
    connectionTimeoutMillis: timeouts.connectMs,
    query_timeout: timeouts.statementMs + CLIENT_GRACE_MS,
    application_name: 'svcenv',
    keepAlive: true,
    stream: sockets.socket,
  });

  /** A session over `client`; `broken` is told when the connection can no longer be trusted. */
  const session = (client: pg.ClientBase, where: string, broken: () => void): Session => ({
    dirty: false,
    async run(text, label, values, bounded = 1) {
      try {
        if (bounded === 1) return await client.query(text, values);
        // pg reads a query's own query_timeout (its types do not declare it).
        const query_timeout = bounded * timeouts.statementMs + CLIENT_GRACE_MS;
        return await client.query({ text, values, query_timeout } as pg.QueryConfig);
      } catch (e) {
        if (!(e instanceof pg.DatabaseError)) broken();
        const failure = pgFailure(e, 'statement', label, ctx, where);
        throw isConcurrentUpdate(e) ? new ConcurrentUpdateError(failure.failure, failure.message) : failure;
      }
    },
  });

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
    const client = new pg.Client(config(target, address, user, password, sockets));
    client.on('error', () => {}); // a connection the server drops: the pending call fails, nothing else
    try {
      try {
        await client.connect();
      } catch (e) {
        throw pgFailure(e, 'connect', 'login', ctx, where);
      }
      return await work(session(client, where, () => {}));
    } finally {
      await sockets.close(() => client.end(), timeouts.statementMs);
    }
  }

  /** Runs `work` as the connection's user: on its pool when the target has one, else alone. */
  async function asAdmin<T>(target: ManagedTarget, work: (s: Session) => Promise<T>, secrets: string[]): Promise<T> {
    const where = `${target.host}:${target.port}`;
    try {
      const address = await targetAddress(ctx, target);
      const key = target.poolKey;
      if (!key) return await alone(target, address, target.username, target.password, work);
      const settings = [
        'postgres',
        address,
        target.port,
        target.database,
        target.username,
        target.password,
        target.tls,
      ];
      return await ctx.pools.use(
        key,
        settings,
        () => {
          const sockets = new Sockets();
          const pool = new pg.Pool({
            ...config(target, address, target.username, target.password, sockets),
            max: 4,
            idleTimeoutMillis: 30_000,
            allowExitOnIdle: true,
          });
          pool.on('error', () => {}); // an idle connection the server dropped: the pool replaces it
          return { pool, close: () => sockets.close(() => pool.end(), timeouts.statementMs) };
        },
        async (pool) => {
          let client: pg.PoolClient;
          try {
            client = await pool.connect();
          } catch (e) {
            throw pgFailure(e, 'connect', 'login', ctx, where);
          }
          let isBroken = false;
          const s = session(client, where, () => {
            isBroken = true;
          });
          try {
            return await work(s);
          } finally {
            // A statement of one environment's dynamic secret must not leave its `SET ROLE` or `SET
            // search_path` to the next lease of the connection, maybe another environment's: the session
            // is reset before it goes back to the pool. A create or revoke that committed reset it in its
            // last round trip (RESET_SESSION); after one that failed, DISCARD ALL (outside the transaction,
            // where SET LOCAL ended), which the call's answer does not wait for: the connection goes back to
            // the pool only once it is done, and is destroyed instead when it fails.
            if (s.dirty && !isBroken) {
              client.query('DISCARD ALL').then(
                () => client.release(),
                () => client.release(true),
              );
            } else client.release(isBroken);
          }
        },
      );
    } catch (e) {
      throw cleaned(pgFailure(e, 'connect', 'login', ctx, where), secrets);
    }
  }

  const begin = ['BEGIN', `SET LOCAL statement_timeout = ${Math.max(1, Math.round(timeouts.statementMs))}`];

  /**
   * `statements` in one transaction, each bounded by the server: committed when they all ran, rolled back
   * when one fails. The transaction costs no round trip of its own: BEGIN and the bound go with the first
   * statement, and `last` (an engine statement without values), the COMMIT and, with `reset`, the session's
   * reset (RESET_SESSION) with the last one, each part after a newline and a semicolon of its own, so two
   * statements cost two round trips and one costs one. A statement runs to its end before anything of ours
   * after it: the simple query protocol parses the whole text before it runs any of it (a statement whose
   * quote or comment runs into ours is a syntax error, and nothing ran), then runs the statements in order
   * and stops at the first error. The command tags of our parts are checked all the same, so a statement
   * that swallowed them can never pass for a commit. A failure rolls back; a connection that broke rolls
   * back by itself when it closes (it is destroyed, never reused), and a session that ran a failed
   * statement stays dirty (asAdmin then resets it with DISCARD ALL). With `besideCommit` the COMMIT and the
   * reset take a round trip of their own once every statement ran, and `besideCommit` runs at the same time
   * (a lease's activation: its durable write overlaps the database's, ADR 0029).
   */
  async function inTransaction(
    s: Session,
    statements: readonly { text: string; label: string }[],
    opts: {
      last?: { text: string; label: string };
      reset?: boolean;
      beforeCommit?: () => Promise<void>;
      besideCommit?: () => Promise<void>;
    } = {},
  ): Promise<void> {
    const { last, reset = false, beforeCommit, besideCommit } = opts;
    const n = statements.length;
    const commit = ['COMMIT', ...(reset ? RESET_SESSION : [])];
    const tagOf = (ours: string) => ours.split(' ')[0]!;
    /** Our parts' command tags, where they must be: a statement that swallowed them never passes for them. */
    const check = (res: pg.QueryResult | pg.QueryResult[], head: string[], tail: string[], label: string) => {
      const tags = (Array.isArray(res) ? res : [res]).map((r) => r.command);
      const expected = [...head, ...tail].map(tagOf);
      const seen = [...tags.slice(0, head.length), ...tags.slice(Math.max(head.length, tags.length - tail.length))];
      if (seen.join() !== expected.join()) {
        throw new ManagedDbError('statement', `${label}: its text runs into what follows it (an unterminated quote?)`);
      }
    };
    try {
      for (let i = 0; i < Math.max(1, n); i++) {
        const final = i >= n - 1;
        const head = i === 0 ? begin : [];
        const tail = final ? [...(last ? [last.text] : []), ...(besideCommit ? [] : commit)] : [];
        const statement = statements[i];
        const label = !statement
          ? (last?.label ?? 'COMMIT')
          : final && last
            ? `${statement.label} (or ${last.label})`
            : statement.label;
        const text = [...head, ...(statement ? [statement.text] : []), ...tail].join('\n;');
        // Every statement of the round trip at the server's bound: the declaration's and `last`.
        const bounded = Math.max(1, (statement ? 1 : 0) + (final && last ? 1 : 0));
        // `beforeCommit` runs beside the first round trip when that one does not commit, else before it.
        const commits = final && !besideCommit;
        if (commits && beforeCommit) await beforeCommit();
        const [res] = await Promise.all([
          s.run(text, label, undefined, bounded),
          !commits && i === 0 && beforeCommit ? beforeCommit() : undefined,
        ]);
        check(res as pg.QueryResult | pg.QueryResult[], head, tail, label);
      }
      if (besideCommit) {
        // Every statement ran: the COMMIT (and reset) in a round trip of their own, `besideCommit` at the same
        // time, and the call fails when either does (both are waited for).
        const [committed, beside] = await Promise.allSettled([s.run(commit.join('\n;'), 'COMMIT'), besideCommit()]);
        if (committed.status === 'rejected') throw committed.reason;
        check(committed.value, [], commit, 'COMMIT');
        if (beside.status === 'rejected') throw beside.reason;
      }
    } catch (e) {
      await s.run('ROLLBACK', 'ROLLBACK').catch(() => {});
      throw e;
    }
  }

  const exists = async (s: Session, username: string) =>
    (await s.run('SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = $1', 'looking up the user', [username])).rowCount! >
    0;

  /** A declaration's statements, filled in, as inTransaction runs them. */
  const filled = (statements: readonly Statement[], vars: StatementVars) =>
    statements.map((statement, i) => ({
      text: fillPlaceholders(statement, vars) as string,
      label: statementLabel(i, statements.length),
    }));

  async function login(target: ManagedTarget, username: string, password: string): Promise<void> {
    const where = `${target.host}:${target.port}`;
    try {
      const address = await targetAddress(ctx, target);
      await alone(target, address, username, password, (s) => s.run('SELECT 1', 'SELECT 1'));
    } catch (e) {
      throw cleaned(pgFailure(e, 'connect', 'login', ctx, where), [password, target.password]);
    }
  }

  const verifiers = verifierStock(4);

  /** The create statements with the verifier of `password` in each `PASSWORD '{{password}}'`. */
  async function withVerifier(create: readonly Statement[], password: string): Promise<readonly Statement[]> {
    if (!create.some((c) => typeof c === 'string' && c.match(PASSWORD_CLAUSE))) return create;
    const literal = escapeLiteral(await verifiers.verifierOf(password));
    return create.map((c) =>
      typeof c === 'string' ? c.replace(PASSWORD_CLAUSE, (_, space) => `PASSWORD${space}${literal}`) : c,
    );
  }

  return {
    kind: 'postgres',
    defaultPort: 5432,
    maxUsernameLength: 63,
    // D71: end the user's sessions, hand what it owns to the connection user, then remove it. The engine
    // granted the role to the connection user at creation, which lets a user with only CREATEROLE do this.
    defaultRevoke: [
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{{username}}'",
      'REASSIGN OWNED BY "{{username}}" TO CURRENT_USER',
      'DROP OWNED BY "{{username}}"',
      'DROP ROLE IF EXISTS "{{username}}"',
    ],
    checkStatements: sqlStatementsProblem,

    test: (target) => login(target, target.username, target.password),

    newPassword: () => verifiers.newPassword(),

    async createUser(target, create, vars, { recorded, activate }) {
      const statements = filled(await withVerifier(create, vars.password), vars);
      // D71: one transaction; any failure rolls it back, so no user is left behind. A refusal only because
      // another create changed the same catalog row meanwhile runs the whole transaction again, a few times.
      const grant = {
        text: `GRANT ${escapeIdentifier(vars.username)} TO CURRENT_USER`,
        label: 'the grant of the new role to the connection user, or COMMIT',
      };
      await asAdmin(
        target,
        async (s) => {
          for (let attempt = 0; ; attempt++) {
            try {
              // A D71 statement may change the session (SET ROLE, search_path, ...): reset with the COMMIT.
              s.dirty = true;
              await inTransaction(s, statements, {
                last: grant,
                reset: true,
                beforeCommit: recorded,
                besideCommit: activate,
              });
              s.dirty = false;
              return;
            } catch (e) {
              if (!(e instanceof ConcurrentUpdateError) || attempt >= CONCURRENT_UPDATE_RETRIES) throw e;
              await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * (attempt + 1)));
            }
          }
        },
        [target.password, vars.password],
      );
    },

    async revokeUser(target, revoke, vars) {
      return asAdmin(
        target,
        async (s) => {
          // D71 details: a user already gone (dropped by hand) counts as revoked.
          if (!(await exists(s, vars.username))) return 'gone' as const;
          s.dirty = true;
          await inTransaction(s, filled(revoke, vars), { reset: true });
          s.dirty = false;
          return 'revoked' as const;
        },
        [target.password, vars.password],
      );
    },

    userExists(target, username) {
      return asAdmin(target, (s) => exists(s, username), [target.password]);
    },

    async setPassword(target, username, password) {
      const problem = passwordProblem(password);
      if (problem) throw new ManagedDbError('statement', problem);
      const verifier = await scramVerifier(password);
      const alter = `ALTER ROLE ${escapeIdentifier(username)} PASSWORD ${escapeLiteral(verifier)}`;
      await asAdmin(target, (s) => inTransaction(s, [{ text: alter, label: 'setting the password' }]), [
        target.password,
        password,
        verifier,
      ]);
      // The pool's future logins would use the old password: the next call logs in afresh.
      if (username === target.username && target.poolKey) await ctx.pools.drop(target.poolKey);
    },

    login,
  };
}
