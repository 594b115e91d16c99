import type { Config } from '../../config.js';
import type { Db, Dialect } from '../../db/index.js';
import type { WebhookDeps } from '../../jobs/events.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { Clock } from '../../lib/clock.js';
import type { ProjectKeyring } from '../../lib/crypto.js';
import type { RateLimiter } from '../../lib/rate-limit.js';
import type { Resolution } from '../../lib/references.js';
import type { Engines } from '../../managed/engine.js';
import type { AuditBatcher } from '../../runtime/audit-batcher.js';
import type { AuthnQueries, JwtCodec, VerifiedTokenCache } from '../../runtime/credentials.js';
import type { EnvWatch } from '../../runtime/env-watch.js';
import type { IssuerKeyCache } from '../../runtime/issuer-keys.js';
import type { OidcDiscovery } from '../../runtime/oidc-discovery.js';
import type { RenderCache } from '../../runtime/render-cache.js';
import type { UnchangedPullAudits } from '../../runtime/unchanged-pulls.js';
import type { WriteGroup } from '../../runtime/write-group.js';
import type { PlainVar } from './values.js';

/**
 * Everything services may use, wired once at start-up (wiring.ts). Services take the narrowest slice they
 * need. The per-process pieces are runtime/'s; the shapes they are given are declared here, so this module
 * imports no service that takes a Ctx (context.ts imports this one).
 */
export interface Deps {
  config: Config;
  db: Db;
  dialect: Dialect;
  clock: Clock;
  keyring: ProjectKeyring;
  /** Group commit of the audit rows of reads (services/core/changes.ts recordRead). */
  auditBatcher: AuditBatcher;
  /** Group commit of short write transactions made by many requests at once (D71 leases; runtime/write-group.ts). */
  writeGroup: WriteGroup;
  /** Awaited before reading `audit_logs`, outside a transaction (DbHandle.flushAuditInbox: the audit inbox). */
  flushAuditInbox: () => Promise<void>;
  /** Resolved environments by revision (services/pull/pull.ts). */
  renderCache: RenderCache<ResolvedEnv>;
  /** D66: which unchanged pulls were audited this hour (services/pull/pull.ts). */
  unchangedPulls: UnchangedPullAudits;
  authn: AuthnDeps;
  /** Durable background work (email, webhooks); enqueue inside the transaction, kick() after it. */
  jobs: JobQueue;
  /**
   * Made by jobs/events.ts with the delivery job: the subscription cache (core/events.ts asks it on every
   * event), the key that seals webhook secrets and the target checks (D5, workspace/webhooks.ts).
   */
  webhooks: WebhookDeps;
  /** D43: held pulls waiting for their environment to change. */
  watch: EnvWatch;
  /** Rate limits (D14, D11), shared by all instances through Redis when REDIS_URL is set (D2). */
  limiter: RateLimiter;
  /** D60, D63: the signing keys of workload-identity and single sign-on issuers (services/identity/oidc.ts, sso.ts). */
  issuerKeys: IssuerKeyCache;
  /** D63: single sign-on issuers' discovery documents, and their token requests (services/identity/sso.ts). */
  oidcDiscovery: OidcDiscovery;
  /** D70-D72: the managed databases' engines and their pools (services/credentials/). */
  engines: Engines;
  /** Master-key-derived keys for TOTP secrets and backup code digests (services/identity/mfa.ts). */
  accountKeys: AccountKeys;
}

/** What authentication reads with (services/identity/authn.ts). */
export interface AuthnDeps {
  db: Db;
  clock: Clock;
  jwt: JwtCodec;
  queries: AuthnQueries;
  tokenCache: VerifiedTokenCache;
  /** D33: when this process last wrote each access token's lastUsedAt (ms), so that it writes once a minute. */
  lastTouch: Map<string, number>;
}

/** Keys derived from the master key for the account secrets of services/identity/mfa.ts. */
export interface AccountKeys {
  /** Seals TOTP secrets. */
  mfaSecret: Buffer;
  /** HMAC key of backup code digests. */
  backupCode: Buffer;
  /** D63: seals single sign-on client secrets and the PKCE verifiers of flows in progress. */
  sso: Buffer;
}

/** A pull's environment, decrypted and resolved for one reader, as the render cache keeps it. */
export interface ResolvedEnv {
  revision: number;
  /** The other environments the resolution asked for, and what it found (services/variables/references.ts). */
  dependencies: Dependency[];
  vars: Map<string, PlainVar>;
  resolved: Map<string, Resolution>;
  /** Rendered pull bodies by variant (format, metadata, project name). */
  bodies: Map<string, { body: string; etag: string; context: string }>;
}

/** An environment a resolution asked for, and what its reader found there. */
export interface Dependency {
  /** The project slug as written; null: relative to `projectId`, the referring environment's project. */
  slug: string | null;
  projectId: string | null;
  env: string;
  /** The environment read, or null: refused (missing, or not readable by the reader who resolved). */
  envId: string | null;
  /** Its revision when its variables were read (0 when refused). */
  revision: number;
}
