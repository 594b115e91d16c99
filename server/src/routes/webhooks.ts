import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import * as webhooks from '../services/workspace/webhooks.js';

/** Webhooks (spec "Workspace endpoints", D34-D35): Owner only, dashboard session only (D10). */
export async function webhookRoutes(app: FastifyInstance) {
  route(app, ops.listWebhooks, async (req) => ({ webhooks: await webhooks.listWebhooks(req.ctx) }));

  route(app, ops.createWebhook, async (req, reply) =>
    reply.status(201).send(await webhooks.createWebhook(req.ctx, req.body)),
  );

  route(app, ops.updateWebhook, async (req) => webhooks.updateWebhook(req.ctx, { ...req.params, ...req.body }));

  route(app, ops.deleteWebhook, async (req, reply) => {
    await webhooks.deleteWebhook(req.ctx, req.params);
    return reply.status(204).send(null);
  });

  route(app, ops.listDeliveries, async (req) => ({ deliveries: await webhooks.listDeliveries(req.ctx, req.params) }));

  route(app, ops.testWebhook, async (req, reply) =>
    reply.status(202).send(await webhooks.testWebhook(req.ctx, req.params)),
  );
}
