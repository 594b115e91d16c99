import { randomUUID } from 'node:crypto';
import type { WebhookEvent } from '@svcenv/contract';
import type { Db } from '../../db/index.js';
import { type DeliveryPayload, WEBHOOK_JOB } from '../../jobs/webhook.js';
import type { Deps } from './deps.js';
import type { Principal } from './principal.js';

/**
 * Events (spec "Events", D34): what webhooks may want to hear of. Writes reach `emitEvent` through
 * `recordChange` (services/core/changes.ts); pull calls it directly. It writes one delivery job per subscribed
 * active webhook in the caller's transaction, so a committed change always has its deliveries and a
 * rolled-back one never does. Which webhooks subscribe is cached per process (jobs/events.ts).
 */
export interface EventDetail {
  /** Keys concerned; default: created then updated. An iterable, so pull passes its keys without copying. */
  keys?: Iterable<string>;
  created?: string[];
  updated?: string[];
  /** D74, ADR 0027: what an access.* event is about (the request, who asked, for what, why); never a secret. */
  access?: Record<string, unknown>;
}

/**
 * Enqueues the event for every webhook subscribed to it (and to its project, when limited to one) in `trx` (the caller's transaction, or the database
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
  const ids = await deps.webhooks.subscriptions.subscribers(trx, principal.workspaceId, event, projectId);
  if (ids.length === 0) return;
  const created = detail.created ?? [];
  const updated = detail.updated ?? [];
  // D34: all eight fields on every payload (the timestamp is added when each attempt is signed).
  const base = {
    event,
    projectId,
    env,
    actor: principal.actorName,
    keys: [...(detail.keys ?? [...created, ...updated])],
    created,
    updated,
    ...(detail.access ? { access: detail.access } : {}),
  };
  for (const webhookId of ids) {
    const payload: DeliveryPayload = { webhookId, deliveryId: randomUUID(), ...base };
    await deps.jobs.enqueue(trx, { kind: WEBHOOK_JOB, payload });
  }
  deps.jobs.kick();
}
