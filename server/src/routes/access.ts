import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import * as requests from '../services/access/requests.js';
import { listEnvAccess } from '../services/access/who.js';

/** D74: access requests of a project; D76: who has access to an environment, and why. */
export async function accessRoutes(app: FastifyInstance) {
  route(app, ops.createAccessRequest, async (req, reply) => {
    const created = await requests.createAccessRequest(req.ctx, { projectId: req.params.id, ...req.body });
    return reply.status(201).send(created);
  });
  route(app, ops.listAccessRequests, async (req) => ({
    accessRequests: await requests.listAccessRequests(req.ctx, { projectId: req.params.id, status: req.query.status }),
  }));
  route(app, ops.approveAccessRequest, async (req) =>
    requests.approveAccessRequest(req.ctx, {
      projectId: req.params.id,
      requestId: req.params.requestId,
      durationSeconds: req.body?.durationSeconds,
    }),
  );
  route(app, ops.denyAccessRequest, async (req) =>
    requests.denyAccessRequest(req.ctx, {
      projectId: req.params.id,
      requestId: req.params.requestId,
      reason: req.body?.reason,
    }),
  );
  route(app, ops.withdrawAccessRequest, async (req) =>
    requests.withdrawAccessRequest(req.ctx, { projectId: req.params.id, requestId: req.params.requestId }),
  );
  route(app, ops.getEnvAccess, async (req) => ({
    access: await listEnvAccess(req.ctx, { projectId: req.params.id, env: req.params.env }),
  }));
}
