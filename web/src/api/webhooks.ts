/** Workspace webhooks and their deliveries (D34, D35); the signing secret is in the create answer only. */
import type { createWebhookBody, createWebhookResponse, updateWebhookBody } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

export type CreatedWebhook = z.infer<typeof createWebhookResponse>;

export const listWebhooks = () => api.call(e.listWebhooks);

export const createWebhook = (body: z.input<typeof createWebhookBody>) => api.call(e.createWebhook, { body });

export const updateWebhook = (id: string, body: z.input<typeof updateWebhookBody>) =>
  api.call(e.updateWebhook, { params: { id }, body });

export const deleteWebhook = (id: string) => api.call(e.deleteWebhook, { params: { id } });

/** Queues a `ping` delivery. */
export const testWebhook = (id: string) => api.call(e.testWebhook, { params: { id } });

export const listDeliveries = (id: string) => api.call(e.listDeliveries, { params: { id } });
