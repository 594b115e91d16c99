import { Redis } from 'ioredis';
import {
  cleaned,
  type EngineContext,
  errorMessage,
  MAX_STATEMENT_LENGTH,
  MAX_STATEMENTS,
  networkFailure,
  statementLabel,
  targetAddress,
  tlsOptions,
  withDeadline,
} from './common.js';
import { fillPlaceholders, passwordProblem } from './credentials.js';
import { type Engine, ManagedDbError, type ManagedTarget, type Statement, type StatementVars } from './engine.js';

/**
 * Redis 6+ ACL users (D70-D72) through `ioredis`. A statement is one command as its argument list (D71
 * details), sent as separate arguments, so a filled placeholder is always one argument whatever it holds.
 * The client never retries, never queues offline and never reconnects: a connection that fails or dies is
 * dropped and the next call opens a new one. Login is an explicit `AUTH user password` as the first command
 * (not ioredis's own, whose failure surfaces only on the next command). Time: connect and TLS within
 * connectMs (connectTimeout), the whole login too (a deadline of ours); each command within statementMs
 * (a deadline of ours), after which the connection is destroyed (a blocking command would hold it).
 */

type Phase = 'connect' | 'statement';

/**
 * Commands that change the state of the connection they run on (its user, database, protocol, reply mode):
 * refused in statements, since a pooled admin connection runs the next lease's statements too.
 */
const REFUSED_COMMANDS = new Set([
  'AUTH',
  'HELLO',
  'SELECT',
  'RESET',
  'QUIT',
  'MULTI',
  'EXEC',
  'DISCARD',
  'WATCH',
  'UNWATCH',
  'SUBSCRIBE',
  'PSUBSCRIBE',
  'SSUBSCRIBE',
  'UNSUBSCRIBE',
  'PUNSUBSCRIBE',
  'SUNSUBSCRIBE',
  'MONITOR',
  'SYNC',
  'PSYNC',
  'REPLCONF',
]);

const isReplyError = (e: unknown): e is Error => e instanceof Error && e.name === 'ReplyError';

function redisFailure(e: unknown, phase: Phase, label: string, ctx: EngineContext, where: string): ManagedDbError {
  if (e instanceof ManagedDbError) return e;
  if (isReplyError(e)) {
    // Redis's WRONGPASS does not say whose password it refused: the label does.
    if (phase === 'connect') {
      const failure = /^(WRONGPASS|NOAUTH|NOPERM)/.test(e.message) ? 'auth' : 'connect';
      return new ManagedDbError(failure, `${label} failed: ${e.message}`);
    }
    return new ManagedDbError('statement', `${label} failed: ${e.message}`);
  }
  const net = networkFailure(e, where, ctx.timeouts);
  if (net) return net;
  const message = errorMessage(e);
  if (/timed out/i.test(message)) {
    const ms = phase === 'connect' ? ctx.timeouts.connectMs : ctx.timeouts.statementMs;
    return new ManagedDbError('timeout', `${label}: no answer within ${ms} ms (${where})`);
  }
  if (/closed|writeable|not connected/i.test(message)) {
    return new ManagedDbError('connect', `the server closed the connection (${where})`);
  }
  return new ManagedDbError(phase === 'connect' ? 'connect' : 'statement', `${label}: ${message}`);
}

/** Closes a client: QUIT within `ms`, then its socket destroyed whatever the server did. */
async function closeClient(client: Redis, ms: number): Promise<void> {
  if (client.status === 'ready') {
    try {
      await withDeadline(client.quit(), ms, 'QUIT');
    } catch {}
  }
  client.disconnect();
  client.stream?.destroy();
}

/** A command's argument list as ioredis sends it: the name, then the arguments. */
const send = (client: Redis, args: readonly string[]) => client.call(args[0]!, ...args.slice(1));

interface Session {
  /** One command; a failure comes back as ManagedDbError naming `label`, never the arguments. */
  run(args: readonly string[], label: string): Promise<unknown>;
}

/** A pooled admin connection: the login under way or done. */
interface Pooled {
  ready: Promise<Redis>;
}

export function createRedisEngine(ctx: EngineContext): Engine {
  const { timeouts } = ctx;

  /** Connects to the checked address and logs in as `user`; the client is logged in when this resolves. */
  async function open(target: ManagedTarget, address: string, user: string, password: string): Promise<Redis> {
    const tls = tlsOptions(target);
    const client = new Redis({
      host: address,
      port: target.port,
      ...(tls ? { tls } : {}),
      lazyConnect: true,
      // No commandTimeout: it would bound AUTH by statementMs; every command has a deadline of ours instead.
      connectTimeout: timeouts.connectMs,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      reconnectOnError: () => false,
      enableOfflineQueue: false,
      enableReadyCheck: false,
      autoResubscribe: false,
      autoResendUnfulfilledCommands: false,
      disableClientInfo: true,
      keepAlive: 30_000,
    });
    // A connection that fails or dies: the pending call fails, nothing else. The socket's own error (refused,
    // TLS) arrives here, while connect() rejects with a bare "Connection is closed".
    let socketError: unknown;
    client.on('error', (e) => {
      socketError ??= e;
    });
    const login = async () => {
      try {
        await client.connect();
      } catch (e) {
        throw socketError ?? e;
      }
      await client.call('AUTH', user, password);
      return client;
    };
    try {
      return await withDeadline(login(), timeouts.connectMs, `login (${target.host}:${target.port})`);
    } catch (e) {
      client.disconnect();
      client.stream?.destroy();
      throw e;
    }
  }

  /** A session on `client`; a command that fails other than by the server's reply destroys the connection. */
  const session = (client: Redis, broken: () => void): Session => ({
    async run(args, label) {
      try {
        return await withDeadline(send(client, args), timeouts.statementMs, label);
      } catch (e) {
        if (!isReplyError(e)) {
          broken();
          // A command left waiting (a blocking one) would hold the connection: it is not reused.
          client.disconnect();
          client.stream?.destroy();
        }
        throw redisFailure(e, 'statement', label, ctx, '');
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
    let client: Redis;
    try {
      client = await open(target, address, user, password);
    } catch (e) {
      throw redisFailure(e, 'connect', `login as "${user}"`, ctx, where);
    }
    try {
      return await work(session(client, () => {}));
    } finally {
      await closeClient(client, timeouts.statementMs);
    }
  }

  async function asAdmin<T>(target: ManagedTarget, work: (s: Session) => Promise<T>, secrets: string[]): Promise<T> {
    const where = `${target.host}:${target.port}`;
    try {
      const address = await targetAddress(ctx, target);
      const key = target.poolKey;
      if (!key) return await alone(target, address, target.username, target.password, work);
      const settings = ['redis', address, target.port, target.username, target.password, target.tls];
      return await ctx.pools.use<Pooled, T>(
        key,
        settings,
        () => {
          const pooled: Pooled = { ready: open(target, address, target.username, target.password) };
          pooled.ready.then(
            // A connection that dies is dropped; the next call opens a new one.
            (client) => client.once('end', () => ctx.pools.evict(key, pooled)),
            () => ctx.pools.evict(key, pooled),
          );
          return {
            pool: pooled,
            close: async () => {
              const client = await pooled.ready.catch(() => null);
              if (client) await closeClient(client, timeouts.statementMs);
            },
          };
        },
        async (pooled) => {
          let client: Redis;
          try {
            client = await pooled.ready;
          } catch (e) {
            throw redisFailure(e, 'connect', `login as "${target.username}"`, ctx, where);
          }
          return work(session(client, () => ctx.pools.evict(key, pooled)));
        },
      );
    } catch (e) {
      throw cleaned(redisFailure(e, 'connect', 'login', ctx, where), secrets);
    }
  }

  const runAll = async (s: Session, statements: readonly Statement[], vars: StatementVars) => {
    for (const [i, statement] of statements.entries()) {
      await s.run(fillPlaceholders(statement, vars) as readonly string[], statementLabel(i, statements.length));
    }
  };

  const exists = async (s: Session, username: string) =>
    (await s.run(['ACL', 'GETUSER', username], 'looking up the user')) !== null;

  async function login(target: ManagedTarget, username: string, password: string): Promise<void> {
    const where = `${target.host}:${target.port}`;
    try {
      const address = await targetAddress(ctx, target);
      await alone(target, address, username, password, async () => {});
    } catch (e) {
      throw cleaned(redisFailure(e, 'connect', 'login', ctx, where), [password, target.password]);
    }
  }

  return {
    kind: 'redis',
    defaultPort: 6379,
    maxUsernameLength: 64,
    // D71: end the user's connections, then remove it.
    defaultRevoke: [
      ['CLIENT', 'KILL', 'USER', '{{username}}'],
      ['ACL', 'DELUSER', '{{username}}'],
    ],

    checkStatements(statements) {
      if (statements.length === 0) return 'at least one command is required';
      if (statements.length > MAX_STATEMENTS) return `at most ${MAX_STATEMENTS} commands`;
      for (const [i, s] of statements.entries()) {
        const shape = `command ${i + 1} must be an argument list of strings, as ["ACL", "SETUSER", "{{username}}", ...]`;
        if (!Array.isArray(s) || s.length === 0 || !s.every((a) => typeof a === 'string')) return shape;
        const args = s as string[];
        if (args.length > 100) return `command ${i + 1} has more than 100 arguments`;
        if (args.some((a) => a.length > MAX_STATEMENT_LENGTH)) {
          return `command ${i + 1} has an argument longer than ${MAX_STATEMENT_LENGTH} characters`;
        }
        const name = args[0]!.toUpperCase();
        if (REFUSED_COMMANDS.has(name) || (name === 'CLIENT' && args[1]?.toUpperCase() === 'REPLY')) {
          return `command ${i + 1}: ${args[0]} changes the connection svcenv runs it on, and is refused`;
        }
      }
      return null;
    },

    test: (target) => login(target, target.username, target.password),

    async createUser(target, create, vars, { recorded }) {
      await recorded();
      try {
        await asAdmin(target, (s) => runAll(s, create, vars), [target.password, vars.password]);
      } catch (e) {
        // D71: a command before the failing one may have made the user: remove it before failing.
        await asAdmin(target, (s) => s.run(['ACL', 'DELUSER', vars.username], 'ACL DELUSER'), []).catch(() => {});
        throw e;
      }
    },

    revokeUser(target, revoke, vars) {
      return asAdmin(
        target,
        async (s) => {
          // D71 details: a user already gone (deleted by hand) counts as revoked.
          if (!(await exists(s, vars.username))) return 'gone' as const;
          await runAll(s, revoke, vars);
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
      // `resetpass` then the one new password: the user's other rules (and its open connections, ours
      // included when it is the connection's own user) stay as they are.
      await asAdmin(
        target,
        async (s) => {
          if (!(await exists(s, username))) throw new ManagedDbError('statement', `user "${username}" does not exist`);
          await s.run(['ACL', 'SETUSER', username, 'resetpass', `>${password}`], 'setting the password');
        },
        [target.password, password],
      );
      if (username === target.username && target.poolKey) await ctx.pools.drop(target.poolKey);
    },

    login,
  };
}
