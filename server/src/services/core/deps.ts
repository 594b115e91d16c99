import type { Config } from '../../config.js';
import type { Db, Dialect } from '../../db/index.js';
import type { WebhookDeps } from '../../jobs/events.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { Clock } from '../../lib/clock.js';
import type { ProjectKeyring } from '../../lib/crypto.js';
import type { RateLimiter } from '../../lib/rate-limit.js';
import type { AuthnDeps } from '../identity/authn.js';
import type { AccountKeys } from '../identity/mfa.js';
import type { RenderCache } from '../pull/pull.js';
import type { EnvWatch } from '../pull/watch.js';
import type { AuditBatcher } from './audit.js';

/** Everything services may use, wired once in app.ts. Services take the narrowest slice they need. */
export interface Deps {
  config: Config;
  db: Db;
  dialect: Dialect;
  clock: Clock;
  keyring: ProjectKeyring;
  auditBatcher: AuditBatcher;
  renderCache: RenderCache;
  authn: AuthnDeps;
  /** Durable background work (email, webhooks); enqueue inside the transaction, kick() after it. */
  jobs: JobQueue;
  /** Webhook secrets key, subscription cache and target checks (issue 5, services/workspace/webhooks.ts). */
  webhooks: WebhookDeps;
  /** D43: held pulls waiting for their environment to change. */
  watch: EnvWatch;
  /** Rate limits (D14, D11), shared by all instances through Redis when REDIS_URL is set (D2). */
  limiter: RateLimiter;
  /** Master-key-derived keys for TOTP secrets and backup code digests (services/identity/mfa.ts). */
  accountKeys: AccountKeys;
}
