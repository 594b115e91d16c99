import { BlockList, isIP } from 'node:net';
import { z } from 'zod';

/**
 * Server configuration: one schema over the environment, validated once at start-up with every problem
 * listed (guide convention 6). Each variable's doc comment is the reference for operators.
 */
const booleanFlag = z
  .enum(['true', 'false', '1', '0', ''])
  .optional()
  .transform((v) => v === 'true' || v === '1');

const configSchema = z.object({
  /** D1: directory of the embedded SQLite database and the generated master key file. */
  DATA_DIR: z.string().min(1).default('./data'),
  /** D1: address to bind. A non-loopback address needs TLS or TRUST_PROXY=true (D4). */
  HOST: z.string().min(1).default('127.0.0.1'),
  /** D1: port to listen on; 0 picks a free port. */
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** D2: postgres://... switches storage to PostgreSQL. */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  /** D2: redis://... shares rate-limit counters across instances. */
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .optional(),
  /** D2: prefix of every Redis key, so several deployments (or test runs) can share one Redis. */
  REDIS_KEY_PREFIX: z.string().min(1).max(100).default('svcenv:'),
  /** D1: base64 of 32 random bytes. Without it, embedded mode generates DATA_DIR/master.key. */
  MASTER_KEY: z.string().optional(),
  /** D3: smtp://host:port; without it email is written to the log as one structured line. */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// URL')
    .optional(),
  /** D3: sender address of outgoing email. */
  MAIL_FROM: z.string().default('svcenv <no-reply@svcenv.local>'),
  /** D3: base of links in emails; default http://HOST:PORT. */
  PUBLIC_URL: z.url().optional(),
  /** D4: PEM certificate and key; with both, the server serves HTTPS only (TLS 1.2+). */
  TLS_CERT_FILE: z.string().optional(),
  TLS_KEY_FILE: z.string().optional(),
  /**
   * D4: a TLS-terminating proxy is in front; the client address is then the last X-Forwarded-For entry
   * (the one that proxy appended), which the login rate limit counts (D14).
   */
  TRUST_PROXY: booleanFlag,
  /**
   * With TRUST_PROXY: the addresses (or CIDR ranges) of the proxies, comma-separated, e.g.
   * `127.0.0.1,10.0.0.0/8`. X-Forwarded-For is then believed only from them, so a client that reaches the
   * server's port directly cannot name another address (D14). Unset: any peer is taken for the proxy, which
   * is safe only when the port is reachable from the proxy alone (docs/deploy/README.md).
   */
  TRUSTED_PROXIES: z.string().optional(),
  /** D5: allow webhooks to loopback and private addresses. */
  WEBHOOK_ALLOW_PRIVATE: booleanFlag,
  /** D15: plan of new workspaces. */
  DEFAULT_PLAN: z.enum(['free', 'team', 'enterprise']).default('free'),
  /** Benchmarks only: serves GET /bench/floor, a constant 2 KB text, as the floor to compare routes with. */
  BENCH_FLOOR_ROUTE: booleanFlag,
  /**
   * After SIGTERM, how long the server keeps its open connections, answering each request on them 503 with
   * `Connection: close`, before it closes the idle ones: a keep-alive client then learns of the stop from
   * an answer, not from a reset. In-flight requests always finish.
   */
  DRAIN_GRACE_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  /**
   * D52: enables `GET /metrics` (Prometheus text) for requests presenting `Authorization: Bearer <token>`;
   * unset, the route does not exist (404). At least 16 characters: it guards operational data.
   */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** D43: at most this many pulls held (long-poll) per instance, and per access token; beyond, they answer at once. */
  LONGPOLL_MAX_HELD: z.coerce.number().int().min(0).max(1_000_000).default(20_000),
  LONGPOLL_MAX_PER_TOKEN: z.coerce.number().int().min(0).max(100_000).default(100),
  /**
   * D64: audit entries older than this many days (fractions allowed, e.g. 0.5) are deleted by a job that runs
   * every minute, each run recorded as an `audit.prune` entry in the workspaces it touched. Unset: every entry
   * is kept.
   */
  AUDIT_RETENTION_DAYS: z.coerce.number().positive('must be a positive number of days').max(365_000).optional(),
  /**
   * D70: the addresses (or CIDR ranges) connections to managed databases may reach, comma-separated, e.g.
   * `10.0.0.0/8,fd00::/8`. Unset: any address but the link-local and cloud-metadata ranges, which are refused
   * in every configuration. Checked when a connection is saved and again on the addresses DNS gives at each use.
   */
  CONNECTIONS_ALLOWED_CIDRS: z.string().optional(),
  /** D70: allow `tls: {mode: "disable"}` for managed databases that are not on a loopback address. */
  CONNECTIONS_ALLOW_PLAIN: booleanFlag,
  /**
   * D70-D72: how long a managed database may take to accept a connection and log in (ms); each statement may
   * take twice that. A silent database costs a request this long, never the server.
   */
  CONNECTIONS_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  /** Log level of the structured JSON log. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** Cross-variable rules, checked on the raw values so they are listed even when a field fails too. */
function crossChecks(c: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  if (Boolean(c.TLS_CERT_FILE) !== Boolean(c.TLS_KEY_FILE)) {
    problems.push('TLS_KEY_FILE: TLS_CERT_FILE and TLS_KEY_FILE go together');
  }
  if (c.MASTER_KEY !== undefined && Buffer.from(c.MASTER_KEY, 'base64').length !== 32) {
    problems.push('MASTER_KEY: must be base64 of exactly 32 bytes');
  }
  const trustProxy = c.TRUST_PROXY === 'true' || c.TRUST_PROXY === '1';
  if (c.TRUSTED_PROXIES !== undefined) {
    if (!trustProxy) problems.push('TRUSTED_PROXIES: only with TRUST_PROXY=true');
    try {
      proxyList(c.TRUSTED_PROXIES);
    } catch (e) {
      problems.push(`TRUSTED_PROXIES: ${(e as Error).message}`);
    }
  }
  if (c.CONNECTIONS_ALLOWED_CIDRS !== undefined) {
    try {
      proxyList(c.CONNECTIONS_ALLOWED_CIDRS);
    } catch (e) {
      problems.push(`CONNECTIONS_ALLOWED_CIDRS: ${(e as Error).message}`);
    }
  }
  if (!c.TLS_CERT_FILE && !trustProxy && !isLoopback(c.HOST ?? '127.0.0.1')) {
    problems.push(
      'HOST: plain HTTP is only served on a loopback address; set TLS_CERT_FILE/TLS_KEY_FILE or TRUST_PROXY=true (D4)',
    );
  }
  return problems;
}

export type Config = z.infer<typeof configSchema> & { publicUrl: string };

/** TRUSTED_PROXIES as a BlockList of addresses and CIDR ranges; throws on an entry that is neither. */
export function proxyList(raw: string): BlockList {
  const list = new BlockList();
  for (const entry of raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [address, bits] = entry.split('/') as [string, string | undefined];
    const family = isIP(address);
    if (family === 0) throw new Error(`"${entry}" is not an IP address or CIDR range`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, type);
    else {
      const prefix = Number(bits);
      if (!/^\d{1,3}$/.test(bits) || prefix > (family === 4 ? 32 : 128)) throw new Error(`"${entry}" has a bad prefix`);
      list.addSubnet(address, prefix, type);
    }
  }
  return list;
}

/** Whether a socket's peer address is in the list (an IPv4-mapped IPv6 address counts as its IPv4 form). */
export function isTrustedProxy(list: BlockList, peer: string): boolean {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(peer)?.[1];
  if (v4) return list.check(v4, 'ipv4');
  return isIP(peer) === 6 ? list.check(peer, 'ipv6') : list.check(peer, 'ipv4');
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export class ConfigError extends Error {}

/** Parses the environment; throws one ConfigError listing every problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const picked = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = configSchema.safeParse(picked);
  const problems = [
    ...(result.success ? [] : result.error.issues.map((i) => `${i.path.join('.') || '(config)'}: ${i.message}`)),
    ...crossChecks(picked),
  ];
  if (!result.success || problems.length > 0) {
    throw new ConfigError(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
  const c = result.data;
  const scheme = c.TLS_CERT_FILE ? 'https' : 'http';
  const host = c.HOST.includes(':') && !c.HOST.startsWith('[') ? `[${c.HOST}]` : c.HOST;
  return { ...c, publicUrl: (c.PUBLIC_URL ?? `${scheme}://${host}:${c.PORT}`).replace(/\/$/, '') };
}
