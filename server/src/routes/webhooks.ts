import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../services/deps.js';
import * as webhooks from '../services/webhooks.js';

/** Webhooks (spec "Workspace endpoints", D34-D35): Owner only, dashboard session only (D10). */
export async function webhookRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const config = { auth: 'jwt' as const };
  const tags = ['webhooks'];
  const params = c.webhookParams;

  app.get(
    '/workspace/webhooks',
    { config, schema: { tags, response: { 200: c.listWebhooksResponse } } },
    async (req) => ({
      webhooks: await webhooks.listWebhooks(deps, req.principal),
    }),
  );

  app.post(
    '/workspace/webhooks',
    { config, schema: { tags, body: c.createWebhookBody, response: { 201: c.createWebhookResponse } } },
    async (req, reply) => reply.status(201).send(await webhooks.createWebhook(deps, req.principal, req.body)),
  );

  app.patch(
    '/workspace/webhooks/:id',
    { config, schema: { tags, params, body: c.updateWebhookBody, response: { 200: c.webhook } } },
    async (req) => webhooks.updateWebhook(deps, req.principal, req.params.id, req.body),
  );

  app.delete(
    '/workspace/webhooks/:id',
    { config, schema: { tags, params, response: { 204: c.noContent } } },
    async (req, reply) => {
      await webhooks.deleteWebhook(deps, req.principal, req.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/workspace/webhooks/:id/deliveries',
    { config, schema: { tags, params, response: { 200: c.listDeliveriesResponse } } },
    async (req) => ({ deliveries: await webhooks.listDeliveries(deps, req.principal, req.params.id) }),
  );

  app.post(
    '/workspace/webhooks/:id/test',
    { config, schema: { tags, params, body: c.emptyBody, response: { 202: c.testWebhookResponse } } },
    async (req, reply) => reply.status(202).send(await webhooks.testWebhook(deps, req.principal, req.params.id)),
  );
}
