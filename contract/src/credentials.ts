import { z } from 'zod';
import { envName, projectRef, timestamp, uuid, varKey } from './common.js';

/**
 * D70-D72: connections to the databases whose users svcenv manages, the dynamic secrets an environment
 * declares on them and their leases, and the rotation of a stored credential.
 */

/** D70: a connection's name, unique in its project. */
export const connectionName = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,62}$/,
    'must be 1-63 lower-case letters, digits or "-", starting with a letter or digit',
  );
export const CONNECTION_KINDS = ['postgres', 'mysql', 'redis'] as const;
export const connectionKind = z.enum(CONNECTION_KINDS);
export const TLS_MODES = ['disable', 'require', 'verify'] as const;
/** The port each kind listens on unless told otherwise. */
export const DEFAULT_PORTS = { postgres: 5432, mysql: 3306, redis: 6379 } as const;

const host = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[^\s/@?#]+$/, 'must be a host name or an IP address (no scheme, path or credentials)');
const port = z.number().int().min(1).max(65_535);
const database = z.string().min(1).max(128);
const username = z.string().min(1).max(128);
/** Never answered, logged or audited (D70). */
const password = z.string().min(1).max(1024);
const pem = z.string().min(1).max(65_536);

export const tlsSettings = z.strictObject({
  mode: z.enum(TLS_MODES).default('require'),
  /** PEM of the authority `verify` checks the server's certificate against (default: the system's roots). */
  ca: pem.nullish(),
});

export const connectionParams = z.strictObject({ id: projectRef, name: connectionName });

export const createConnectionBody = z.strictObject({
  name: connectionName,
  kind: connectionKind,
  host,
  /** Default: the kind's usual port. */
  port: port.optional(),
  /** PostgreSQL and MySQL only; PostgreSQL's default is `postgres`. */
  database: database.nullish(),
  username,
  password,
  /** Default `{mode: "require"}`. */
  tls: tlsSettings.optional(),
});

/** A PATCH without `password` keeps it (D70); `name` and `kind` do not change. */
export const updateConnectionBody = z.strictObject({
  host: host.optional(),
  port: port.optional(),
  database: database.nullish(),
  username: username.optional(),
  password: password.optional(),
  tls: tlsSettings.optional(),
});

/** A connection as every answer shows it: never its password. */
export const connection = z.object({
  name: z.string(),
  kind: connectionKind,
  host: z.string(),
  port: z.number().int(),
  database: z.string().nullable(),
  username: z.string(),
  tls: z.object({ mode: z.enum(TLS_MODES), ca: z.string().nullable() }),
  createdAt: timestamp,
  updatedAt: timestamp,
  /** D70 rotate-root: when svcenv last set the connection user's password (then only svcenv knows it). */
  rootRotatedAt: timestamp.nullable(),
  /** How many dynamic secrets and rotations use it (it cannot be deleted while any does). */
  usedBy: z.number().int(),
});
export const listConnectionsResponse = z.object({ connections: z.array(connection) });
export const testConnectionResponse = z.object({
  ok: z.boolean(),
  /** What happened, in words; names what failed, never a credential. */
  message: z.string(),
});

/**
 * D71: one statement. SQL text for `postgres` and `mysql`; for `redis` one command as its argument list. The
 * placeholders `{{username}}`, `{{password}}` and `{{expiration}}` are filled by svcenv.
 */
export const statement = z.union([z.string().trim().min(1).max(16_384), z.array(z.string().max(4096)).min(1).max(64)]);
const statements = z.array(statement).max(32);

/** D71: a dynamic secret's name: it becomes part of the database usernames and of the default key names. */
export const dynamicSecretName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,62}$/, 'must be 1-63 lower-case letters, digits, "-" or "_", starting with a letter');
export const dynamicParams = z.strictObject({ id: projectRef, env: envName, name: dynamicSecretName });
export const leaseParams = z.strictObject({ id: projectRef, env: envName, name: dynamicSecretName, leaseId: uuid });

/** What a lease's values are called: `username` and `password` always, the connection's address if asked. */
export const LEASE_FIELDS = ['username', 'password', 'host', 'port', 'database'] as const;
export const leaseKeys = z.strictObject({
  username: varKey.optional(),
  password: varKey.optional(),
  host: varKey.optional(),
  port: varKey.optional(),
  database: varKey.optional(),
});

/** D71 defaults and bounds. */
export const LEASE_TTL = { min: 30, default: 3_600, maxDefault: 86_400, ceiling: 31 * 86_400 } as const;
export const MAX_LEASES = { default: 100, max: 10_000 } as const;
const ttl = z.number().int().min(LEASE_TTL.min).max(LEASE_TTL.ceiling);

export const putDynamicSecretBody = z.strictObject({
  /** A connection of the same project, by name. */
  connection: connectionName,
  create: statements.min(1),
  /** Omitted or empty: the kind's default revoke statements. */
  revoke: statements.optional(),
  /** Default `<NAME>_USERNAME` and `<NAME>_PASSWORD`. */
  keys: leaseKeys.optional(),
  defaultTtlSeconds: ttl.optional(),
  maxTtlSeconds: ttl.optional(),
  maxLeases: z.number().int().min(1).max(MAX_LEASES.max).optional(),
});

export const dynamicSecret = z.object({
  name: z.string(),
  env: z.string(),
  connection: z.string(),
  kind: connectionKind,
  create: z.array(statement),
  /** The statements a revocation runs: the declared ones, or the kind's default (`revokeIsDefault`). */
  revoke: z.array(statement),
  revokeIsDefault: z.boolean(),
  /** Value name → variable name, for every value a lease gives. */
  keys: z.record(z.string(), z.string()),
  defaultTtlSeconds: z.number().int(),
  maxTtlSeconds: z.number().int(),
  maxLeases: z.number().int(),
  /** Leases not yet ended (active, being revoked, or whose revocation failed). */
  openLeases: z.number().int(),
  /** Leases whose revocation failed and is being retried: the database may still hold their users. */
  revokeFailed: z.number().int(),
  createdAt: timestamp,
  updatedAt: timestamp,
});
export const listDynamicSecretsResponse = z.object({ dynamicSecrets: z.array(dynamicSecret) });

export const LEASE_STATES = [
  'creating',
  'active',
  'revoking',
  'revoke_failed',
  'revoked',
  'expired',
  'failed',
] as const;
export const leaseState = z.enum(LEASE_STATES);

export const createLeaseBody = z.strictObject({ ttlSeconds: ttl.optional() }).nullish();
export const renewLeaseBody = createLeaseBody;

/** D71: a new lease, its values shown this once. */
export const createdLease = z.object({
  id: uuid,
  username: z.string(),
  expiresAt: timestamp,
  /** Renewals stop here: creation + maxTtlSeconds (and never past the expiry of the credential that leased). */
  maxExpiresAt: timestamp,
  /** Variable name → value (the password among them). */
  values: z.record(z.string(), z.string()),
});
export const renewedLease = z.object({ id: uuid, expiresAt: timestamp, maxExpiresAt: timestamp });
export const lease = z.object({
  id: uuid,
  username: z.string(),
  createdAt: timestamp,
  expiresAt: timestamp,
  state: leaseState,
  /** Who leased: the user's name, or `token:<name>` / `identity:<name>` (D34's actor). */
  createdBy: z.string(),
  /** When it ended (revoked, expired or failed). */
  endedAt: timestamp.nullable(),
  /** The database's answer to the last failed attempt (credentials removed). */
  lastError: z.string().nullable(),
  /** Whether the caller may renew and revoke it (D71: its creator, or write permission on the environment). */
  mayRevoke: z.boolean(),
});
export const listLeasesResponse = z.object({ leases: z.array(lease) });
export const listLeasesQuery = z.strictObject({
  /** `open` (default): not yet ended; `all`: the ended ones too (newest first, at most 200). */
  state: z.enum(['open', 'all']).optional(),
});

/** D72. */
export const ROTATION_STRATEGIES = ['single', 'alternate'] as const;
export const ROTATION_MIN_INTERVAL = 300;
export const rotationParams = z.strictObject({ id: projectRef, env: envName, key: varKey });
export const putRotationBody = z
  .strictObject({
    connection: connectionName,
    /** `single`: the database user whose password the variable holds. */
    username: username.optional(),
    /** `alternate`: the two users taken in turn; the first is in use before the first rotation. */
    usernames: z.tuple([username, username]).optional(),
    /** At least 300 seconds; null: rotate only when asked. */
    intervalSeconds: z
      .number()
      .int()
      .min(ROTATION_MIN_INTERVAL)
      .max(366 * 86_400)
      .nullable(),
    strategy: z.enum(ROTATION_STRATEGIES).default('single'),
  })
  .superRefine((b, ctx) => {
    if (b.strategy === 'single' && (b.username === undefined || b.usernames !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: 'strategy "single" takes username (and not usernames)',
        path: ['username'],
      });
    }
    if (b.strategy === 'alternate') {
      if (b.usernames === undefined || b.username !== undefined) {
        ctx.addIssue({
          code: 'custom',
          message: 'strategy "alternate" takes usernames: [a, b] (and not username)',
          path: ['usernames'],
        });
      } else if (b.usernames[0] === b.usernames[1]) {
        ctx.addIssue({ code: 'custom', message: 'the two usernames must differ', path: ['usernames'] });
      }
    }
  });
export const rotation = z.object({
  key: z.string(),
  connection: z.string(),
  /** The user the variable holds the password of now. */
  username: z.string(),
  /** `alternate`: both users, in order. */
  usernames: z.array(z.string()),
  strategy: z.enum(ROTATION_STRATEGIES),
  intervalSeconds: z.number().int().nullable(),
  lastRotatedAt: timestamp.nullable(),
  nextRotationAt: timestamp.nullable(),
  /** The last failed attempt's reason (credentials removed); null after a success. */
  lastError: z.string().nullable(),
});
export const listRotationsResponse = z.object({ rotations: z.array(rotation) });

export type Connection = z.infer<typeof connection>;
export type DynamicSecret = z.infer<typeof dynamicSecret>;
export type CreatedLease = z.infer<typeof createdLease>;
export type Lease = z.infer<typeof lease>;
export type LeaseState = z.infer<typeof leaseState>;
export type Rotation = z.infer<typeof rotation>;
