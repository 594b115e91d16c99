import { z } from 'zod';
import { projectRef, timestamp, uuid } from './common.js';
import { WEBHOOK_EVENTS } from './constants.js';

export const webhookEvent = z.enum(WEBHOOK_EVENTS);
export type WebhookEvent = z.infer<typeof webhookEvent>;
/** Sent only by `POST /v1/workspace/webhooks/:id/test` (D35); not subscribable. */
export const PING_EVENT = 'ping';

const webhookName = z.string().trim().min(1).max(100);
/** Shape only; the scheme and the target address are checked by the server (D5, D35). */
const webhookUrl = z.string().trim().min(1).max(2048);
const webhookEvents = z
  .array(webhookEvent)
  .min(1)
  .max(WEBHOOK_EVENTS.length * 2);

export const createWebhookBody = z.strictObject({
  name: webhookName,
  url: webhookUrl,
  /** Omitted: every change event (DEFAULT_WEBHOOK_EVENTS: every event but `vars.pull`; ADR 0004). */
  events: webhookEvents.optional(),
  /** D34: true unless the request says otherwise. */
  active: z.boolean().optional(),
  /** Only this project's events (an id or a slug, D58); omitted or null: every project. */
  projectId: projectRef.nullable().optional(),
});
export const updateWebhookBody = z.strictObject({
  name: webhookName.optional(),
  url: webhookUrl.optional(),
  events: webhookEvents.optional(),
  active: z.boolean().optional(),
  /** null: every project again. */
  projectId: projectRef.nullable().optional(),
});
export const webhookParams = z.strictObject({ id: uuid });

/** Spec "Webhook" without the secret, which is shown once, on create. */
export const webhook = z.object({
  id: uuid,
  name: z.string(),
  url: z.string(),
  events: z.array(webhookEvent),
  active: z.boolean(),
  /** The one project whose events it hears; null: every project of the workspace. */
  projectId: uuid.nullable(),
  lastFiredAt: timestamp.nullable(),
  /** HTTP status of the last delivery attempt; 0 when no response came (D35); null before the first. */
  lastStatus: z.number().int().nullable(),
  createdAt: timestamp,
});
export const listWebhooksResponse = z.object({ webhooks: z.array(webhook) });
export const createWebhookResponse = z.object({
  id: uuid,
  name: z.string(),
  url: z.string(),
  events: z.array(webhookEvent),
  active: z.boolean(),
  projectId: uuid.nullable(),
  /** `whsec_...`: the signing secret, returned only here. */
  secret: z.string(),
});

/** D35: one delivery attempt. `id` is the X-Svcenv-Delivery id, the same on every attempt. */
export const webhookDelivery = z.object({
  id: uuid,
  event: z.string(),
  attempt: z.number().int(),
  /** HTTP status, or 0 when no response came (timeout, network error, refused target). */
  status: z.number().int(),
  durationMs: z.number().int(),
  /** Why an attempt failed without a status (e.g. `timeout`); null otherwise. */
  error: z.string().nullable(),
  createdAt: timestamp,
});
export const listDeliveriesResponse = z.object({ deliveries: z.array(webhookDelivery) });
export const testWebhookResponse = z.object({ deliveryId: uuid, event: z.literal(PING_EVENT) });

/**
 * The signed JSON body of every delivery (D34): all eight fields, arrays possibly empty. For `ping`,
 * projectId and env are null.
 */
export const webhookPayload = z.object({
  event: z.string(),
  projectId: uuid.nullable(),
  env: z.string().nullable(),
  actor: z.string(),
  keys: z.array(z.string()),
  created: z.array(z.string()),
  updated: z.array(z.string()),
  timestamp,
  /** D74, access.* events only: the request (who asked, for what, why, its state; when a grant ends). */
  access: z
    .object({
      requestId: uuid.optional(),
      status: z.string().optional(),
      userId: uuid,
      userName: z.string().optional(),
      permission: z.string().optional(),
      durationSeconds: z.number().int().optional(),
      reason: z.string().optional(),
      expiresAt: timestamp.optional(),
    })
    .optional(),
});

export type Webhook = z.infer<typeof webhook>;
export type WebhookDelivery = z.infer<typeof webhookDelivery>;
export type WebhookPayload = z.infer<typeof webhookPayload>;
