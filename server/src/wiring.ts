import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import type { DbHandle } from './db/index.js';
import { registerAuditPrune } from './jobs/audit-prune.js';
import { AuditStreamer } from './jobs/audit-streams.js';
import { EMAIL_JOB, emailJob } from './jobs/email.js';
import { registerEventJobs } from './jobs/events.js';
import { JobQueue } from './jobs/queue.js';
import type { Clock } from './lib/clock.js';
import { deriveKey, ProjectKeyring } from './lib/crypto.js';
import { logMailer, smtpMailer } from './lib/mail.js';
import type { Metrics } from './lib/metrics.js';
import type { Resolver } from './lib/net-guard.js';
import { RateLimiter, RedisLimitStore } from './lib/rate-limit.js';
import { createEngines } from './managed/index.js';
import { AuditBatcher } from './runtime/audit-batcher.js';
import { authnQueries, JwtCodec, VerifiedTokenCache } from './runtime/credentials.js';
import { EnvWatch } from './runtime/env-watch.js';
import { IssuerKeyCache } from './runtime/issuer-keys.js';
import { OidcDiscovery } from './runtime/oidc-discovery.js';
import { RenderCache } from './runtime/render-cache.js';
import { UnchangedPullAudits } from './runtime/unchanged-pulls.js';
import { WriteGroup } from './runtime/write-group.js';
import { registerAccessJobs } from './services/access/expiry.js';
import type { Deps } from './services/core/deps.js';
import { registerCredentialJobs } from './services/credentials/jobs.js';
import { bindLegacyValues } from './services/variables/value-binding.js';

/** What the wiring is made from: the validated environment, the open database, the time and the master key. */
export interface WiringOptions {
  config: Config;
  db: DbHandle;
  clock: Clock;
  masterKey: Buffer;
  /** DNS for webhook targets (D5); tests may replace it, production uses the system resolver. */
  resolve?: Resolver;
}

/** The services' dependencies (services/core/deps.ts), made once per process: keys, queues, caches, limits. */
export function buildDeps(opts: WiringOptions, log: FastifyBaseLogger, metrics: Metrics | null = null): Deps {
  const { db } = opts.db;
  const flushAuditInbox = () => opts.db.flushAuditInbox();
  const jobs = new JobQueue({
    db,
    dialect: opts.db.dialect,
    clock: opts.clock,
    sealKey: deriveKey(opts.masterKey, 'job-payload'),
    log,
  });
  const mailer = opts.config.SMTP_URL ? smtpMailer(opts.config.SMTP_URL, opts.config.MAIL_FROM) : logMailer(log);
  jobs.register({ [EMAIL_JOB]: emailJob(mailer) });
  const webhooks = registerEventJobs({
    db,
    clock: opts.clock,
    jobs,
    config: opts.config,
    masterKey: opts.masterKey,
    resolve: opts.resolve,
  });
  if (opts.config.AUDIT_RETENTION_DAYS !== undefined) {
    registerAuditPrune({
      handle: opts.db,
      clock: opts.clock,
      jobs,
      retentionDays: opts.config.AUDIT_RETENTION_DAYS,
      log,
    });
  }
  // D65: the audit streams start and stop with the job runner, beside it (ADR 0024).
  jobs.alongside(
    new AuditStreamer({
      db,
      dialect: opts.db.dialect,
      flushAuditInbox,
      clock: opts.clock,
      withDb: (fn) => jobs.withDb(fn),
      secretKey: webhooks.secretKey,
      allowPrivate: webhooks.allowPrivate,
      resolve: webhooks.resolve,
      log,
    }),
  );
  return {
    config: opts.config,
    db,
    dialect: opts.db.dialect,
    clock: opts.clock,
    keyring: new ProjectKeyring(opts.masterKey),
    auditBatcher: new AuditBatcher(
      metrics ? metrics.timeAuditCommits(opts.db.insertAuditRows) : (rows) => opts.db.insertAuditRows(rows),
      opts.db.dialect === 'sqlite' ? 1 : 4,
    ),
    writeGroup: new WriteGroup(opts.db),
    flushAuditInbox,
    renderCache: new RenderCache(),
    unchangedPulls: new UnchangedPullAudits(),
    watch: new EnvWatch({
      db,
      dialect: opts.db.dialect,
      databaseUrl: opts.config.DATABASE_URL,
      log,
      maxHeld: opts.config.LONGPOLL_MAX_HELD,
      maxPerToken: opts.config.LONGPOLL_MAX_PER_TOKEN,
    }),
    jobs,
    webhooks,
    limiter: new RateLimiter(
      opts.clock,
      opts.config.REDIS_URL ? new RedisLimitStore(opts.config.REDIS_URL, opts.config.REDIS_KEY_PREFIX) : null,
      log,
    ),
    // D60: issuers are reached on the webhooks' address rules (D5), with the same DNS.
    issuerKeys: new IssuerKeyCache({
      clock: opts.clock,
      allowPrivate: opts.config.WEBHOOK_ALLOW_PRIVATE,
      resolve: webhooks.resolve,
    }),
    // D63: single sign-on issuers on the same rules.
    oidcDiscovery: new OidcDiscovery({
      clock: opts.clock,
      allowPrivate: opts.config.WEBHOOK_ALLOW_PRIVATE,
      resolve: webhooks.resolve,
    }),
    // D70: managed databases on their own address rule; each statement may take twice the connect bound.
    engines: createEngines({
      timeouts: { connectMs: opts.config.CONNECTIONS_TIMEOUT_MS, statementMs: 2 * opts.config.CONNECTIONS_TIMEOUT_MS },
      allowedCidrs: (opts.config.CONNECTIONS_ALLOWED_CIDRS ?? '')
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean),
      ...(opts.resolve ? { resolve: opts.resolve } : {}),
    }),
    accountKeys: {
      mfaSecret: deriveKey(opts.masterKey, 'mfa-totp-secret'),
      backupCode: deriveKey(opts.masterKey, 'mfa-backup-code'),
      sso: deriveKey(opts.masterKey, 'sso-secrets'),
    },
    authn: {
      db,
      clock: opts.clock,
      jwt: new JwtCodec(deriveKey(opts.masterKey, 'jwt-hs256')),
      queries: authnQueries(db),
      tokenCache: new VerifiedTokenCache(),
      lastTouch: new Map(),
    },
  };
}

/**
 * Brings the dependencies up before the first request: values written before their role was bound are
 * re-sealed (once), held pulls start listening, the rate-limit store is reached; closing the app stops them.
 */
export async function startDeps(app: FastifyInstance, deps: Deps, metrics: Metrics | null): Promise<void> {
  const rebound = await bindLegacyValues(deps);
  if (rebound > 0) app.log.info({ values: rebound }, 'values re-sealed with their role bound (one-time upgrade)');
  app.addHook('onClose', () => deps.limiter.close());
  await deps.watch.start();
  app.addHook('onClose', () => deps.watch.stop());
  metrics?.trackHeldPulls(() => deps.watch.size);
  await deps.limiter.ready();
  // D71, D72: the lease revocations and the rotations run with the job runner (main.ts closes the engines'
  // pools after the runner stopped, so no revocation in flight loses its connection).
  registerCredentialJobs(deps, app.log);
  // D73, D74: temporary grants and pending access requests that ended are removed and audited.
  registerAccessJobs(deps, app.log);
}
