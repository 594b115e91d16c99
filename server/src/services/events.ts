import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { WebhookEvent } from '@svcenv/contract';
import type { Db } from '../db/index.js';
import { type DeliveryPayload, WEBHOOK_JOB } from '../jobs/webhook.js';
import type { Deps } from './deps.js';
import type { Principal } from './principal.js';

/**
 * Events (spec "Events", D34): the one call a service makes when something webhooks may want happened.
 * It writes one delivery job per subscribed active webhook in the caller's transaction, so a committed
 * change always has its deliveries and a rolled-back one never does.
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
}

export class WebhookSubscriptions {
  private readonly map = new Map<string, { loadedAt: number; hooks: Subscriber[] }>();
  constructor(
    private readonly ttlMs = SUBSCRIPTION_TTL_MS,
    private readonly max = 10_000,
  ) {}

  /**
   * Active webhooks of the workspace that subscribe to `event`. Freshness is measured on the monotonic
   * clock, not the injected one: this is a cache lifetime, not a time rule of the product.
   */
  async subscribers(db: Db, workspaceId: string, event: string): Promise<string[]> {
    const now = performance.now();
    let entry = this.map.get(workspaceId);
    if (!entry || now - entry.loadedAt > this.ttlMs) {
      const rows = await db
        .selectFrom('webhooks')
        .select(['id', 'events'])
        .where('workspace_id', '=', workspaceId)
        .where('active', '=', 1)
        .execute();
      entry = { loadedAt: now, hooks: rows.map((r) => ({ id: r.id, events: new Set(JSON.parse(r.events)) })) };
      this.map.delete(workspaceId);
      if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value as string);
      this.map.set(workspaceId, entry);
    }
    if (entry.hooks.length === 0) return [];
    return entry.hooks.filter((h) => h.events.has(event)).map((h) => h.id);
  }

  invalidate(workspaceId: string): void {
    this.map.delete(workspaceId);
  }
}

export interface EventDetail {
  /** Keys concerned; default: created then updated. An iterable, so pull passes its keys without copying. */
  keys?: Iterable<string>;
  created?: string[];
  updated?: string[];
  /** Computes created/updated only when some webhook listens (restore needs a query for it). */
  changes?: () => Promise<{ created: string[]; updated: string[] }>;
}

/**
 * Enqueues the event for every subscribed webhook in `trx` (the caller's transaction, or the database
 * for pull, which has none). The runner is kicked at once and looks again right after the commit.
 * The signature keeps each call site in the services to one line (merges stay easy).
 */
export async function emitEvent(
  deps: Pick<Deps, 'jobs' | 'webhooks'>,
  trx: Db,
  principal: Principal,
  event: WebhookEvent,
  projectId: string,
  env: string,
  detail: EventDetail = {},
): Promise<void> {
  const ids = await deps.webhooks.subscriptions.subscribers(trx, principal.workspaceId, event);
  if (ids.length === 0) return;
  const changes = detail.changes ? await detail.changes() : null;
  const created = changes?.created ?? detail.created ?? [];
  const updated = changes?.updated ?? detail.updated ?? [];
  // D34: all eight fields on every payload (the timestamp is added when each attempt is signed).
  const base = {
    event,
    projectId,
    env,
    actor: principal.actorName,
    keys: [...(detail.keys ?? [...created, ...updated])],
    created,
    updated,
  };
  for (const webhookId of ids) {
    const payload: DeliveryPayload = { webhookId, deliveryId: randomUUID(), ...base };
    await deps.jobs.enqueue(trx, { kind: WEBHOOK_JOB, payload });
  }
  deps.jobs.kick();
}

/** For restore: whether the key exists before the restore writes it (re-creating a deleted key, D27). */
export const keyChange = (trx: Db, environmentId: string, key: string) => async () => {
  const row = await trx
    .selectFrom('variables')
    .select('key')
    .where('environment_id', '=', environmentId)
    .where('key', '=', key)
    .executeTakeFirst();
  return row ? { created: [], updated: [key] } : { created: [key], updated: [] };
};
