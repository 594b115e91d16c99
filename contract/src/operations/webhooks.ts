import { emptyBody, noContent } from '../common.js';
import { endpoints as e } from '../endpoints.js';
import * as w from '../webhooks.js';
import { defineOperation } from './define.js';

/** Webhooks (spec "Workspace endpoints", D34-D35): Owner only, dashboard session only (D10). */
const tags = ['webhooks'];
const params = w.webhookParams;

export const listWebhooks = defineOperation(e.listWebhooks, { tags, responses: { 200: w.listWebhooksResponse } });
export const createWebhook = defineOperation(e.createWebhook, {
  tags,
  body: w.createWebhookBody,
  responses: { 201: w.createWebhookResponse },
});
export const updateWebhook = defineOperation(e.updateWebhook, {
  tags,
  params,
  body: w.updateWebhookBody,
  responses: { 200: w.webhook },
});
export const deleteWebhook = defineOperation(e.deleteWebhook, { tags, params, responses: { 204: noContent } });
export const listDeliveries = defineOperation(e.listDeliveries, {
  tags,
  params,
  responses: { 200: w.listDeliveriesResponse },
});
export const testWebhook = defineOperation(e.testWebhook, {
  tags,
  params,
  body: emptyBody,
  responses: { 202: w.testWebhookResponse },
});
