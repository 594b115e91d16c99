import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import * as webhooks from '../services/workspace/webhooks.js';

/** Webhooks (spec "Workspace endpoints", D34-D35): Owner only, dashboard session only (D10). */
export async function webhookRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const config = { auth: 'jwt' as const };
  const tags = ['webhooks'];
  const params = c.webhookParams;

  app.get(
    '/workspace/webhooks',
    { config, schema: { tags, response: { 200: c.listWebhooksResponse } } },
    async (req) => ({
      webhooks: await webhooks.listWebhooks(req.ctx),
    }),
  );

  app.post(
    '/workspace/webhooks',
    { config, schema: { tags, body: c.createWebhookBody, response: { 201: c.createWebhookResponse } } },
    async (req, reply) => reply.status(201).send(await webhooks.createWebhook(req.ctx, req.body)),
  );

  app.patch(
    '/workspace/webhooks/:id',
    { config, schema: { tags, params, body: c.updateWebhookBody, response: { 200: c.webhook } } },
    async (req) => webhooks.updateWebhook(req.ctx, { ...req.params, ...req.body }),
  );

  app.delete(
    '/workspace/webhooks/:id',
    { config, schema: { tags, params, response: { 204: c.noContent } } },
    async (req, reply) => {
      await webhooks.deleteWebhook(req.ctx, req.params);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/workspace/webhooks/:id/deliveries',
    { config, schema: { tags, params, response: { 200: c.listDeliveriesResponse } } },
    async (req) => ({ deliveries: await webhooks.listDeliveries(req.ctx, req.params) }),
  );

  app.post(
    '/workspace/webhooks/:id/test',
    { config, schema: { tags, params, body: c.emptyBody, response: { 202: c.testWebhookResponse } } },
    async (req, reply) => reply.status(202).send(await webhooks.testWebhook(req.ctx, req.params)),
  );
}
