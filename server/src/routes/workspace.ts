import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import * as team from '../services/workspace/team.js';
import * as ws from '../services/workspace/workspace.js';

/** Workspace endpoints: JWT required (spec, D10). */
export async function workspaceRoutes(app: FastifyInstance) {
  route(app, ops.getWorkspace, async (req) => ws.getWorkspace(req.ctx));
  route(app, ops.renameWorkspace, async (req) => ws.renameWorkspace(req.ctx, req.body));
  route(app, ops.getBilling, async (req) => ws.billing(req.ctx));
  route(app, ops.getConnections, async (req) => ws.connections(req.ctx));
  route(app, ops.getStats, async (req) => ws.stats(req.ctx));
  route(app, ops.workspaceAudit, async (req) => ws.workspaceAudit(req.ctx, req.query));

  route(app, ops.listMembers, async (req) => ({ members: await team.listMembers(req.ctx) }));
  route(app, ops.updateMember, async (req) => team.changeRole(req.ctx, { ...req.params, ...req.body }));
  route(app, ops.removeMember, async (req, reply) => {
    await team.removeMember(req.ctx, req.params);
    return reply.status(204).send(null);
  });

  route(app, ops.invite, async (req, reply) => {
    const result = await team.invite(req.ctx, req.body);
    return reply.status(result.status).send(result.body);
  });
  route(app, ops.listInvites, async (req) => ({ invites: await team.listInvites(req.ctx) }));
  route(app, ops.revokeInvite, async (req, reply) => {
    await team.revokeInvite(req.ctx, req.params);
    return reply.status(204).send(null);
  });

  route(app, ops.acceptInvite, async (req) => team.acceptInvite(req.ctx, req.body), {
    config: { issuesSession: true },
  });
}
