import type { Config } from '../config.js';
import type { Db } from '../db/index.js';
import type { Clock } from '../lib/clock.js';
import { deriveKey } from '../lib/crypto.js';
import { type Resolver, systemResolver } from '../lib/net-guard.js';
import { WebhookSubscriptions } from '../services/events.js';
import type { WebhookDeps } from '../services/webhooks.js';
import { EXPIRY_SCAN_EVERY_MS, scanExpiringVariables } from './expiry-reminders.js';
import type { JobQueue } from './queue.js';
import { pruneDeliveries, WEBHOOK_JOB, webhookJob } from './webhook.js';

/**
 * Wires issue 5 into the job queue: the webhook delivery job, the expiry reminder scan (D37) and the
 * pruning of old delivery attempts. Returns what the webhook services need (Deps.webhooks).
 */
export function registerEventJobs(opts: {
  db: Db;
  clock: Clock;
  jobs: JobQueue;
  config: Config;
  masterKey: Buffer;
  /** Tests replace DNS (e.g. a name that re-resolves to a private address); production uses the system's. */
  resolve?: Resolver | undefined;
}): WebhookDeps {
  const { db, clock, jobs } = opts;
  const webhooks: WebhookDeps = {
    subscriptions: new WebhookSubscriptions(),
    secretKey: deriveKey(opts.masterKey, 'webhook-secret'),
    allowPrivate: opts.config.WEBHOOK_ALLOW_PRIVATE,
    resolve: opts.resolve ?? systemResolver,
  };
  jobs.register({ [WEBHOOK_JOB]: webhookJob({ db, clock, ...webhooks }) });
  jobs.every('expiry-reminders', EXPIRY_SCAN_EVERY_MS, async () => {
    await scanExpiringVariables({ db, clock, jobs, publicUrl: opts.config.publicUrl });
  });
  jobs.every('webhook-deliveries-prune', 60 * 60 * 1000, () => pruneDeliveries({ db, clock }));
  return webhooks;
}
