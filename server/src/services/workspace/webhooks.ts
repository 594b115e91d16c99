import { randomUUID } from 'node:crypto';
import { DEFAULT_WEBHOOK_EVENTS, type Webhook, type WebhookDelivery, type WebhookEvent } from '@svcenv/contract';
import type { Selectable } from 'kysely';
import type { WebhooksTable } from '../../db/schema.js';
import { type DeliveryPayload, WEBHOOK_JOB } from '../../jobs/webhook.js';
import { notFound, validation } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { checkTargetUrl } from '../../lib/net-guard.js';
import { newWebhookSecret, sealWebhookSecret } from '../../lib/webhook-signing.js';
import { requireOwner, requireUser } from '../core/authz.js';
import { recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import type { Deps } from '../core/deps.js';
import type { Principal } from '../core/principal.js';
import { projectIdOf } from '../projects/project-ref.js';

/** Attempts listed by the deliveries endpoint (newest first). */
const DELIVERIES_SHOWN = 100;

function present(row: Selectable<WebhooksTable>): Webhook {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    events: JSON.parse(row.events) as WebhookEvent[],
    active: row.active === 1,
    projectId: row.project_id,
    lastFiredAt: row.last_fired_at,
    lastStatus: row.last_status,
    createdAt: row.created_at,
  };
}

/** D10 + spec "Owner-only operations": webhooks are managed by Owners, with a dashboard session. */
function requireWebhookAdmin(principal: Principal): void {
  requireUser(principal);
  requireOwner(principal);
}

/**
 * D35: https:// only unless WEBHOOK_ALLOW_PRIVATE=true; D5: the host must resolve to public addresses
 * only. A user name or password in the URL is refused: it would be stored and shown like any other part.
 */
export async function checkUrl(deps: Pick<Deps, 'webhooks'>, raw: string): Promise<string> {
  return (await checkTargetUrl(raw, 'url', deps.webhooks)).toString();
}

/**
 * The project a webhook is limited to, by id or slug (D58), in the caller's workspace; null (or omitted)
 * keeps every project. A name that matches no project is the field's error, not a 404 of the webhook.
 */
async function checkProject(ctx: Ctx, ref: string | null): Promise<string | null> {
  if (ref === null) return null;
  const { db } = ctx.deps;
  const id = await projectIdOf(ctx, ref).catch(() => null);
  const row =
    id &&
    (await db
      .selectFrom('projects')
      .select('id')
      .where('id', '=', id)
      .where('workspace_id', '=', ctx.principal.workspaceId)
      .executeTakeFirst());
  if (!row) throw validation('projectId', 'projectId names no project of this workspace');
  return row.id;
}

/** Audit detail: never the secret, and of the URL only its host (a path or query may hold a credential). */
const auditDetail = (row: {
  id: string;
  name: string;
  url: string;
  events: string;
  active: number;
  project_id: string | null;
}) => ({
  webhookId: row.id,
  name: row.name,
  host: new URL(row.url).host,
  events: JSON.parse(row.events) as string[],
  active: row.active === 1,
  // Only when limited, so the detail of a webhook that hears every project keeps its earlier shape.
  ...(row.project_id ? { projectId: row.project_id } : {}),
});

/** A webhook of the caller's workspace; `manage` (create, update, delete, test) needs an Owner. */
async function ownWebhook(deps: Deps, principal: Principal, id: string, manage = true) {
  if (manage) requireWebhookAdmin(principal);
  else requireUser(principal);
  const row = await deps.db
    .selectFrom('webhooks')
    .selectAll()
    .where('id', '=', id)
    .where('workspace_id', '=', principal.workspaceId)
    .executeTakeFirst();
  if (!row) throw notFound('webhook');
  return row;
}

/**
 * Spec: listing is not among the Owner-only operations, so every member (with a dashboard session) sees the
 * webhooks, without secrets, and their deliveries; creating, changing, deleting and testing stay Owner-only.
 */
export async function listWebhooks(ctx: Ctx): Promise<Webhook[]> {
  const { deps, principal } = ctx;
  requireUser(principal);
  const rows = await deps.db
    .selectFrom('webhooks')
    .selectAll()
    .where('workspace_id', '=', principal.workspaceId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(present);
}

export async function createWebhook(
  ctx: Ctx,
  input: {
    name: string;
    url: string;
    /** Omitted: every change event (ADR 0004). */
    events?: WebhookEvent[] | undefined;
    active?: boolean | undefined;
    projectId?: string | null | undefined;
  },
) {
  const { deps, principal } = ctx;
  requireWebhookAdmin(principal);
  const events = input.events ?? DEFAULT_WEBHOOK_EVENTS;
  const url = await checkUrl(deps, input.url);
  const projectId = await checkProject(ctx, input.projectId ?? null);
  const id = newId();
  const secret = newWebhookSecret();
  const now = deps.clock.now().toISOString();
  const row = {
    id,
    workspace_id: principal.workspaceId,
    name: input.name,
    url,
    events: JSON.stringify([...new Set(events)]),
    // D34: active unless the request says otherwise.
    active: input.active === false ? 0 : 1,
    project_id: projectId,
    secret_sealed: sealWebhookSecret(deps.webhooks.secretKey, id, secret),
    last_status: null,
    last_fired_at: null,
    created_at: now,
    updated_at: now,
  };
  await deps.db.transaction().execute(async (trx) => {
    await trx.insertInto('webhooks').values(row).execute();
    await recordChange(trx, ctx, { action: 'webhook.create', detail: auditDetail(row) });
  });
  deps.webhooks.subscriptions.invalidate(principal.workspaceId);
  const p = present(row);
  return { id, name: p.name, url: p.url, events: p.events, active: p.active, projectId: p.projectId, secret };
}

export async function updateWebhook(
  ctx: Ctx,
  req: {
    id: string;
    name?: string | undefined;
    url?: string | undefined;
    events?: WebhookEvent[] | undefined;
    active?: boolean | undefined;
    projectId?: string | null | undefined;
  },
): Promise<Webhook> {
  const { deps, principal } = ctx;
  const { id, ...input } = req;
  const old = await ownWebhook(deps, principal, id);
  const set: Partial<Selectable<WebhooksTable>> = {};
  if (input.name !== undefined) set.name = input.name;
  if (input.url !== undefined) set.url = await checkUrl(deps, input.url);
  if (input.events !== undefined) set.events = JSON.stringify([...new Set(input.events)]);
  if (input.active !== undefined) set.active = input.active ? 1 : 0;
  if (input.projectId !== undefined) set.project_id = await checkProject(ctx, input.projectId);
  const fields = Object.keys(input).filter((f) => input[f as keyof typeof input] !== undefined);
  if (fields.length === 0) return present(old);
  const next = { ...old, ...set, updated_at: deps.clock.now().toISOString() };
  await deps.db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('webhooks')
      .set({ ...set, updated_at: next.updated_at })
      .where('id', '=', id)
      .where('workspace_id', '=', principal.workspaceId)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) throw notFound('webhook');
    await recordChange(trx, ctx, { action: 'webhook.update', detail: { ...auditDetail(next), fields } });
  });
  deps.webhooks.subscriptions.invalidate(principal.workspaceId);
  return present(next);
}

export async function deleteWebhook(ctx: Ctx, input: { id: string }): Promise<void> {
  const { deps, principal } = ctx;
  const { id } = input;
  const row = await ownWebhook(deps, principal, id);
  await deps.db.transaction().execute(async (trx) => {
    // Its attempts go with it (cascade); queued deliveries find no webhook and end quietly.
    await trx.deleteFrom('webhooks').where('id', '=', id).execute();
    await recordChange(trx, ctx, { action: 'webhook.delete', detail: auditDetail(row) });
  });
  deps.webhooks.subscriptions.invalidate(principal.workspaceId);
}

/** D35: recent attempts, newest first. */
export async function listDeliveries(ctx: Ctx, input: { id: string }): Promise<WebhookDelivery[]> {
  const { deps, principal } = ctx;
  const { id } = input;
  await ownWebhook(deps, principal, id, false);
  const rows = await deps.db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('webhook_id', '=', id)
    .orderBy('id', 'desc')
    .limit(DELIVERIES_SHOWN)
    .execute();
  return rows.map((r) => ({
    id: r.delivery_id,
    event: r.event,
    attempt: r.attempt,
    status: r.status,
    durationMs: r.duration_ms,
    error: r.error,
    createdAt: r.created_at,
  }));
}

/**
 * D35: sends a `ping` through the same durable, signed, retried path as every event, also to an
 * inactive webhook (the Owner asked for it explicitly). Answers at once with the delivery id; the
 * outcome appears in the deliveries list.
 */
export async function testWebhook(ctx: Ctx, input: { id: string }) {
  const { deps, principal } = ctx;
  const { id } = input;
  await ownWebhook(deps, principal, id);
  const deliveryId = randomUUID();
  const payload: DeliveryPayload = {
    webhookId: id,
    deliveryId,
    event: 'ping',
    projectId: null,
    env: null,
    actor: principal.actorName,
    keys: [],
    created: [],
    updated: [],
  };
  await deps.jobs.enqueue(deps.db, { kind: WEBHOOK_JOB, payload });
  deps.jobs.kick();
  return { deliveryId, event: 'ping' as const };
}
