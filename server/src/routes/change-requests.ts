import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import { ifMatch, REVISION_HEADER } from '../http/revisions.js';
import * as requests from '../services/variables/change-requests.js';

/** D47: change requests of one environment. */
export async function changeRequestRoutes(app: FastifyInstance) {
  route(app, ops.openChangeRequest, async (req, reply) => {
    const { revision, ...opened } = await requests.openChangeRequest(req.ctx, {
      projectId: req.params.id,
      env: req.params.env,
      ...req.body,
      reveal: req.query.reveal ?? false,
      ...ifMatch(req),
      validate: req.query.validate,
    });
    return reply.header(REVISION_HEADER, String(revision)).status(201).send(opened);
  });

  route(app, ops.listChangeRequests, async (req) => ({
    changeRequests: await requests.listChangeRequests(req.ctx, {
      projectId: req.params.id,
      env: req.params.env,
      status: req.query.status,
      reveal: req.query.reveal ?? false,
    }),
  }));

  route(app, ops.getChangeRequest, async (req) =>
    requests.getChangeRequest(req.ctx, { ...target(req.params), reveal: req.query.reveal ?? false }),
  );

  route(app, ops.approveChangeRequest, async (req, reply) => {
    const { revision, ...applied } = await requests.approveChangeRequest(req.ctx, target(req.params));
    reply.header(REVISION_HEADER, String(revision));
    return applied;
  });

  route(app, ops.rejectChangeRequest, async (req) =>
    requests.rejectChangeRequest(req.ctx, { ...target(req.params), reason: req.body?.reason }),
  );

  route(app, ops.withdrawChangeRequest, async (req, reply) => {
    await requests.withdrawChangeRequest(req.ctx, target(req.params));
    return reply.status(204).send(null);
  });
}

const target = (p: { id: string; env: string; requestId: string }) => ({
  projectId: p.id,
  env: p.env,
  requestId: p.requestId,
});
