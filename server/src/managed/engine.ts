/**
 * The managed databases of D70-D72: the databases whose users svcenv makes, removes and re-passwords. One
 * small interface, one file per engine (postgres.ts, mysql.ts, redis.ts), in the manner of Kysely's dialects:
 * the connections, leases, rotations and the job speak only to `Engine`, and nothing outside this folder
 * knows which database runs. Every engine bounds its time (connect and each statement), so an unreachable
 * or silent database costs a request seconds, never the server; and no error it throws holds a password
 * or a statement (statements carry passwords once their placeholders are filled).
 */

export type ManagedKind = 'postgres' | 'mysql' | 'redis';

/** D70: `disable` (plain; loopback or CONNECTIONS_ALLOW_PLAIN only), `require` (TLS, any certificate), `verify`. */
export interface TlsSettings {
  mode: 'disable' | 'require' | 'verify';
  /** PEM of the certificate authority that `verify` checks against; null: the system's roots. */
  ca: string | null;
}

/** Where a managed database is and who svcenv logs in as (a D70 connection, its password opened). */
export interface ManagedTarget {
  host: string;
  port: number;
  /** PostgreSQL and MySQL; null: the engine's default (PostgreSQL: `postgres`; MySQL: none). */
  database: string | null;
  username: string;
  password: string;
  tls: TlsSettings;
  /**
   * The pool this target's admin connections are kept in (the connection's id and version); absent: a
   * connection of its own, closed after the call (a connection test, a new password tried).
   */
  poolKey?: string;
}

/** One statement: SQL text (postgres, mysql) or one Redis command as its argument list (redis). */
export type Statement = string | readonly string[];

/**
 * The placeholders of D71's statements. svcenv makes every value (the username from [a-z0-9_], the password
 * from letters and digits, the expiration an ISO 8601 time), so substituting them into statement text lets
 * nothing a client sends reach a statement.
 */
export interface StatementVars {
  username: string;
  password: string;
  expiration: string;
}

/** Why a managed database refused or failed; the message names what failed and never holds a credential. */
export type ManagedFailure =
  | 'address' // the host resolves to a refused address (link-local, metadata, outside CONNECTIONS_ALLOWED_CIDRS)
  | 'connect' // refused, unreachable, DNS
  | 'timeout' // no answer within the bound (connect or statement)
  | 'tls' // TLS required and not offered, or the certificate did not verify
  | 'auth' // the user or password was not accepted
  | 'statement'; // a statement failed (syntax, permission, ...)

export class ManagedDbError extends Error {
  constructor(
    readonly failure: ManagedFailure,
    message: string,
  ) {
    super(message);
    this.name = 'ManagedDbError';
  }
}

/** The time bounds of every engine call (ms). */
export interface EngineTimeouts {
  /** TCP connect, TLS and login. */
  connectMs: number;
  /** Each statement or command. */
  statementMs: number;
}

export const DEFAULT_TIMEOUTS: EngineTimeouts = { connectMs: 5_000, statementMs: 10_000 };

export interface Engine {
  readonly kind: ManagedKind;
  readonly defaultPort: number;
  /** The longest username the database accepts (PostgreSQL 63, MySQL 32, Redis: ours, 64). */
  readonly maxUsernameLength: number;
  /** D71: the default revoke statements (end the user's sessions, then remove it). */
  readonly defaultRevoke: readonly Statement[];
  /** A statement list's shape for this kind (SQL strings, or Redis argument lists): a message, or null when fine. */
  checkStatements(statements: readonly unknown[]): string | null;
  /** D70 `test`: logs in as the connection's user and out again. */
  test(target: ManagedTarget): Promise<void>;
  /**
   * A new lease's password (`makePassword`'s kind); PostgreSQL hands out one whose SCRAM verifier it made
   * ahead, which its create sends in the password's place. Absent: the caller makes one.
   */
  newPassword?(): string;
  /**
   * D71: runs the create statements with their placeholders filled (SQL: in one transaction), then what the
   * engine adds (PostgreSQL grants the new role to the connection user, so that the default revoke's
   * REASSIGN OWNED / DROP OWNED work for a user with only CREATEROLE). A failure leaves no user behind:
   * the engine runs the default revoke itself before it throws when a statement outside a transaction
   * (MySQL DDL, Redis) may already have made the user.
   *
   * `recorded` makes the lease's record durable (services/credentials/leases.ts): the engine calls it, and
   * waits for it, before anything it sends can outlive the call (a COMMIT, a statement outside a
   * transaction), so that a process killed at any point leaves either no user or a record of it. PostgreSQL
   * calls it while its first statement runs in the still open transaction, which a process that dies rolls
   * back; the others call it first. A failure of it (a full maxLeases) is the call's, and leaves no user.
   *
   * `activate` (optional for an engine) marks the lease given and audits it: PostgreSQL runs it beside its
   * COMMIT once every statement ran, so the two durable writes overlap; the caller runs it after the call
   * when the engine did not. A failure of either is the call's.
   */
  createUser(
    target: ManagedTarget,
    create: readonly Statement[],
    vars: StatementVars,
    hooks: { recorded: () => Promise<void>; activate: () => Promise<void> },
  ): Promise<void>;
  /**
   * D71: runs the revoke statements for `username`; a user that no longer exists counts as revoked
   * (`'gone'`), whatever the statements would say about it.
   */
  revokeUser(target: ManagedTarget, revoke: readonly Statement[], vars: StatementVars): Promise<'revoked' | 'gone'>;
  /** Whether `username` exists in the database. */
  userExists(target: ManagedTarget, username: string): Promise<boolean>;
  /**
   * D70 rotate-root and D72 rotation: sets `password` for `username` (which may be the connection's own
   * user), through the connection's login.
   */
  setPassword(target: ManagedTarget, username: string, password: string): Promise<void>;
  /** Logs in as `username` with `password` at the target's address (a new password is tried before it is kept). */
  login(target: ManagedTarget, username: string, password: string): Promise<void>;
}

/**
 * The engines of one process, with their connection pools: a lease costs the create statements, not a new
 * login (bench/leases.bench.ts). `pool` is keyed by the caller (a connection's id and its version), so a
 * changed connection never reuses a pool of its old settings; `close` ends every pool (server shutdown).
 */
export interface Engines {
  engine(kind: ManagedKind): Engine;
  /**
   * D70's address rule at the moment of use: the addresses `host` resolves to, refused (ManagedDbError
   * 'address') when one is link-local or cloud metadata, or outside CONNECTIONS_ALLOWED_CIDRS when set.
   * The engines connect only to an address this returned (DNS rebinding cannot steer them elsewhere).
   */
  checkHost(host: string): Promise<string>;
  /** Forgets the pools of one connection (after PATCH, rotate-root, DELETE). */
  forget(connectionId: string): Promise<void>;
  close(): Promise<void>;
}
