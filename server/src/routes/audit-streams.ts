import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import * as streams from '../services/workspace/audit-streams.js';

/** Audit streams (D65): Owner only, dashboard session only (D10). */
export async function auditStreamRoutes(app: FastifyInstance) {
  route(app, ops.listAuditStreams, async (req) => ({ streams: await streams.listAuditStreams(req.ctx) }));

  route(app, ops.createAuditStream, async (req, reply) =>
    reply.status(201).send(await streams.createAuditStream(req.ctx, req.body)),
  );

  route(app, ops.deleteAuditStream, async (req, reply) => {
    await streams.deleteAuditStream(req.ctx, req.params);
    return reply.status(204).send(null);
  });
}
