import { createHash } from 'node:crypto';
import { isIP, Socket } from 'node:net';
import { type ConnectionOptions, checkServerIdentity } from 'node:tls';
import { type EngineTimeouts, ManagedDbError, type ManagedTarget } from './engine.js';

/**
 * What the three engines share, and nothing outside this folder needs: the context createEngines gives
 * them (time bounds, the D70 address check, the pools), the bounded wait, the TLS options of a mode, the
 * mapping of socket and TLS errors to a ManagedFailure, and the last line of defence that takes every
 * known secret out of a message.
 */

export interface EngineContext {
  readonly timeouts: EngineTimeouts;
  /** Engines.checkHost: the one address to connect to (D70, checked at every use). */
  checkHost(host: string): Promise<string>;
  readonly pools: PoolRegistry;
}

/** The address of a target, the name resolved and checked within the connect bound. */
export function targetAddress(ctx: EngineContext, target: ManagedTarget): Promise<string> {
  return withDeadline(ctx.checkHost(target.host), ctx.timeouts.connectMs, `resolving ${target.host}`);
}

/**
 * `work`, or ManagedDbError 'timeout' after `ms`. The work goes on (a socket the driver bounds itself); what
 * it yields after the deadline is handed to `late`, so a connection that arrives too late is closed.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, what: string, late?: (v: T) => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new ManagedDbError('timeout', `${what}: no answer within ${ms} ms`));
    }, ms);
  });
  work.then(
    (v) => {
      if (timedOut) late?.(v);
    },
    () => {},
  );
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Node's TLS options for a D70 mode, or null for `disable`. The socket goes to the checked address, while
 * the certificate is checked against the host name the connection was made with (and SNI names it), so
 * resolving the name ourselves (DNS rebinding, CONNECTIONS_ALLOWED_CIDRS) changes nothing of `verify`.
 */
export function tlsOptions(target: ManagedTarget): ConnectionOptions | null {
  const { mode, ca } = target.tls;
  if (mode === 'disable') return null;
  const host = bareHost(target.host);
  const sni = isIP(host) === 0 ? { servername: host } : {};
  if (mode === 'require') return { ...sni, rejectUnauthorized: false };
  return {
    ...sni,
    rejectUnauthorized: true,
    ...(ca ? { ca } : {}),
    checkServerIdentity: (_name, cert) => checkServerIdentity(host, cert),
  };
}

/** A host as written, without the brackets of an IPv6 literal. */
export const bareHost = (host: string): string => host.replace(/^\[(.*)\]$/, '$1');

const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'HOSTNAME_MISMATCH',
  'EPROTO',
]);

const errorCode = (e: unknown): string =>
  typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string'
    ? (e as { code: string }).code
    : '';

export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** True for an error of the TLS handshake or of the certificate's verification. */
export function isTlsError(e: unknown): boolean {
  const code = errorCode(e);
  return TLS_CODES.has(code) || /^ERR_(SSL|TLS)_/.test(code) || /CERT/.test(code);
}

/**
 * A socket, DNS or TLS error as a ManagedFailure with a message naming what failed (`where`: host:port),
 * or null when `e` is not one (a database's own error, for the engine to map).
 */
export function networkFailure(e: unknown, where: string, timeouts: EngineTimeouts): ManagedDbError | null {
  const code = errorCode(e);
  switch (code) {
    case 'ECONNREFUSED':
      return new ManagedDbError('connect', `connection refused (${where})`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'EAI_NONAME':
      return new ManagedDbError('connect', `host not found (${where})`);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EADDRNOTAVAIL':
      return new ManagedDbError('connect', `host unreachable (${where})`);
    case 'ECONNRESET':
    case 'EPIPE':
      return new ManagedDbError('connect', `connection reset by the server (${where})`);
    case 'ETIMEDOUT':
      return new ManagedDbError('timeout', `no answer within ${timeouts.connectMs} ms (${where})`);
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return new ManagedDbError('tls', `certificate does not match the host name: ${errorMessage(e)}`);
  }
  if (isTlsError(e)) return new ManagedDbError('tls', `TLS failed: ${errorMessage(e)} (${where})`);
  return null;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Every known secret taken out of a message, in any letter case (PostgreSQL folds an unquoted identifier
 * to lower case, so a password misused as one comes back folded). The last line of defence: the engines
 * already never quote a statement.
 */
export function redact(message: string, secrets: readonly (string | undefined)[]): string {
  let out = message;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.replace(new RegExp(escapeRegExp(secret), 'gi'), '[redacted]');
  }
  return out;
}

/** The error an engine throws: the failure, the message with every secret taken out. */
export function cleaned(e: ManagedDbError, secrets: readonly (string | undefined)[]): ManagedDbError {
  const message = redact(e.message, secrets);
  return message === e.message ? e : new ManagedDbError(e.failure, message);
}

/** The `n`th of `count` statements, as a message names it (the text itself may hold a password). */
export const statementLabel = (i: number, count: number): string =>
  count === 1 ? 'the statement' : `statement ${i + 1} of ${count}`;

/**
 * SQL statement lists (PostgreSQL, MySQL): 1 to 50 non-empty strings of at most 10,000 characters. A
 * message for the caller's 400, or null.
 */
export function sqlStatementsProblem(statements: readonly unknown[]): string | null {
  if (statements.length === 0) return 'at least one statement is required';
  if (statements.length > MAX_STATEMENTS) return `at most ${MAX_STATEMENTS} statements`;
  for (const [i, s] of statements.entries()) {
    if (typeof s !== 'string') return `statement ${i + 1} must be SQL text (a string)`;
    if (s.trim() === '') return `statement ${i + 1} is empty`;
    if (s.length > MAX_STATEMENT_LENGTH) return `statement ${i + 1} is longer than ${MAX_STATEMENT_LENGTH} characters`;
  }
  return null;
}

export const MAX_STATEMENTS = 50;
export const MAX_STATEMENT_LENGTH = 10_000;

/**
 * The sockets a driver opens through a stream factory (pg's and mysql2's `stream` option), so that closing
 * never waits on a server that stopped answering: whatever a graceful end leaves open is destroyed.
 */
export class Sockets {
  private readonly open = new Set<Socket>();

  /** A new socket, not yet connected (pg connects it itself). */
  socket = (): Socket => {
    const s = new Socket();
    this.open.add(s);
    s.once('close', () => this.open.delete(s));
    return s;
  };

  /** A socket connecting to `address` (mysql2 waits for the server's greeting on it). */
  connect(address: string, port: number): Socket {
    const s = this.socket();
    s.setNoDelay(true);
    s.setKeepAlive(true, 30_000);
    return s.connect({ host: address, port });
  }

  /** Ends gracefully within `ms` (`end`), then destroys every socket still open. */
  async close(end: () => Promise<unknown>, ms: number): Promise<void> {
    try {
      await withDeadline(end(), ms, 'closing');
    } catch {}
    for (const s of this.open) s.destroy();
    this.open.clear();
  }
}

/** One pool, as the registry keeps it. */
export interface PoolHandle<P> {
  pool: P;
  /** Ends every connection; resolves when they are closed. */
  close(): Promise<void>;
}

interface Entry {
  fingerprint: string;
  handle: PoolHandle<unknown>;
  users: number;
  retired: boolean;
  closed?: Promise<void>;
}

/**
 * The admin connections of pooled targets (ManagedTarget.poolKey), so a lease costs its statements rather
 * than a login. An entry is made for one address and one set of settings: a call with the same key but
 * another address (the name re-resolved) or other settings gets a new pool, and the old one is closed once
 * its last call ends. A pool is never closed under a call that uses it.
 */
export class PoolRegistry {
  private readonly entries = new Map<string, Entry>();

  /** Runs `work` with the pool of `key` for these settings, made by `make` when there is none. */
  async use<P, T>(key: string, settings: unknown[], make: () => PoolHandle<P>, work: (pool: P) => Promise<T>) {
    const fingerprint = createHash('sha256').update(JSON.stringify(settings)).digest('base64');
    let entry = this.entries.get(key);
    if (entry && entry.fingerprint !== fingerprint) {
      this.retire(key, entry);
      entry = undefined;
    }
    if (!entry) {
      entry = { fingerprint, handle: make() as PoolHandle<unknown>, users: 0, retired: false };
      this.entries.set(key, entry);
    }
    const used = entry;
    used.users++;
    try {
      return await work(used.handle.pool as P);
    } finally {
      used.users--;
      if (used.retired && used.users === 0) this.finish(used);
    }
  }

  /** Closes the pool of `key` when `pool` is still the one kept there (a pool that found itself dead). */
  evict(key: string, pool: unknown): void {
    const entry = this.entries.get(key);
    if (entry && entry.handle.pool === pool) this.retire(key, entry);
  }

  /** Closes the pool of `key` (its connection user's password changed). */
  drop(key: string): Promise<void> {
    const entry = this.entries.get(key);
    return entry ? this.retire(key, entry) : Promise.resolve();
  }

  /**
   * Closes every pool whose key starts with `prefix` (a connection's id). Resolves once the idle ones are
   * closed; one in use closes when its last call ends.
   */
  async forget(prefix: string): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const [key, entry] of [...this.entries]) if (key.startsWith(prefix)) closing.push(this.retire(key, entry));
    await Promise.all(closing);
  }

  /** Closes every pool (shutdown): the idle ones at once, the others when their calls end. */
  close(): Promise<void> {
    return this.forget('');
  }

  /** The number of pools kept (tests). */
  get size(): number {
    return this.entries.size;
  }

  private retire(key: string, entry: Entry): Promise<void> {
    if (this.entries.get(key) === entry) this.entries.delete(key);
    entry.retired = true;
    if (entry.users === 0) return this.finish(entry);
    return Promise.resolve();
  }

  private finish(entry: Entry): Promise<void> {
    entry.closed ??= entry.handle.close().catch(() => {});
    return entry.closed;
  }
}
