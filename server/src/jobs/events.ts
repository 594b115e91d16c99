import { performance } from 'node:perf_hooks';
import type { Config } from '../config.js';
import type { Db } from '../db/index.js';
import type { Clock } from '../lib/clock.js';
import { deriveKey } from '../lib/crypto.js';
import { type Resolver, systemResolver } from '../lib/net-guard.js';
import { EXPIRY_SCAN_EVERY_MS, scanExpiringVariables } from './expiry-reminders.js';
import type { JobQueue } from './queue.js';
import { pruneDeliveries, WEBHOOK_JOB, webhookJob } from './webhook.js';

/**
 * Which webhooks of a workspace subscribe to which event (services/core/events.ts asks on every event).
 *
 * Pull is the hot path, so which webhooks of a workspace subscribe to what is cached per process: a
 * workspace without webhooks costs one map lookup per event. Webhook writes on this instance invalidate
 * the cache at once; other instances see them within SUBSCRIPTION_TTL_MS (5 s). That lag only delays a
 * new or re-activated subscription on other instances: a deactivated, unsubscribed or deleted webhook is
 * checked again when its delivery is sent (jobs/webhook.ts), so it stops receiving at once everywhere.
 */
export const SUBSCRIPTION_TTL_MS = 5_000;

interface Subscriber {
  id: string;
  events: ReadonlySet<string>;
  /** Null: every project of the workspace. */
  projectId: string | null;
}

export class WebhookSubscriptions {
  private readonly map = new Map<string, { loadedAt: number; hooks: Subscriber[] }>();
  constructor(
    private readonly ttlMs = SUBSCRIPTION_TTL_MS,
    private readonly max = 10_000,
  ) {}

  /**
   * Active webhooks of the workspace that subscribe to `event` of `projectId` (those limited to another project
   * are left out). Freshness is measured on the monotonic
   * clock, not the injected one: this is a cache lifetime, not a time rule of the product.
   */
  async subscribers(db: Db, workspaceId: string, event: string, projectId: string): Promise<string[]> {
    const now = performance.now();
    let entry = this.map.get(workspaceId);
    if (!entry || now - entry.loadedAt > this.ttlMs) {
      const rows = await db
        .selectFrom('webhooks')
        .select(['id', 'events', 'project_id'])
        .where('workspace_id', '=', workspaceId)
        .where('active', '=', 1)
        .execute();
      entry = {
        loadedAt: now,
        hooks: rows.map((r) => ({ id: r.id, events: new Set(JSON.parse(r.events)), projectId: r.project_id })),
      };
      this.map.delete(workspaceId);
      if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value as string);
      this.map.set(workspaceId, entry);
    }
    if (entry.hooks.length === 0) return [];
    return entry.hooks
      .filter((h) => h.events.has(event) && (h.projectId === null || h.projectId === projectId))
      .map((h) => h.id);
  }

  invalidate(workspaceId: string): void {
    this.map.delete(workspaceId);
  }
}

/** What the webhook services and the delivery job need, wired in wiring.ts (Deps.webhooks). */
export interface WebhookDeps {
  subscriptions: WebhookSubscriptions;
  /** Seals the `whsec_` secrets; derived from the master key. */
  secretKey: Buffer;
  /** D5: WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  resolve: Resolver;
}

/**
 * Wires events into the job queue: the webhook delivery job, the expiry reminder scan (D37) and the
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
