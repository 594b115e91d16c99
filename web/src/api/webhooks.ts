/** Workspace webhooks and their deliveries (D34, D35); the signing secret is in the create answer only. */
import type {
  createWebhookBody,
  createWebhookResponse,
  listDeliveriesResponse,
  listWebhooksResponse,
  testWebhookResponse,
  updateWebhookBody,
  Webhook,
} from '@svcenv/contract';
import type { z } from 'zod';
import { api, path } from '../api.js';

export type CreatedWebhook = z.infer<typeof createWebhookResponse>;

const hookPath = (id: string) => path`/workspace/webhooks/${id}`;

export const listWebhooks = () => api.get<z.infer<typeof listWebhooksResponse>>('/workspace/webhooks');

export const createWebhook = (body: z.input<typeof createWebhookBody>) =>
  api.post<CreatedWebhook>('/workspace/webhooks', body);

export const updateWebhook = (id: string, body: z.input<typeof updateWebhookBody>) =>
  api.patch<Webhook>(hookPath(id), body);

export const deleteWebhook = (id: string) => api.del(hookPath(id));

/** Queues a `ping` delivery. */
export const testWebhook = (id: string) => api.post<z.infer<typeof testWebhookResponse>>(`${hookPath(id)}/test`);

export const listDeliveries = (id: string) =>
  api.get<z.infer<typeof listDeliveriesResponse>>(`${hookPath(id)}/deliveries`);
