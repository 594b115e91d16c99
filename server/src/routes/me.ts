import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import * as me from '../services/identity/me.js';
import * as mfa from '../services/identity/mfa.js';

/** D12: the signed-in user's account and two-factor settings; JWT only (D10). */
export async function meRoutes(app: FastifyInstance) {
  route(app, ops.getMe, async (req) => me.getMe(req.ctx));

  route(app, ops.updateMe, async (req) => me.updateMe(req.ctx, req.body));

  route(app, ops.changePassword, async (req, reply) => {
    await me.changePassword(req.ctx, req.body);
    return reply.status(204).send(null);
  });

  route(app, ops.listMyWorkspaces, async (req) => me.myWorkspaces(req.ctx));

  route(app, ops.findProjectWorkspace, async (req) => me.findProjectWorkspace(req.ctx, req.query));

  route(app, ops.setupMfa, async (req) => mfa.setupMfa(req.ctx));

  route(app, ops.enableMfa, async (req) => mfa.enableMfa(req.ctx, req.body));

  route(app, ops.disableMfa, async (req, reply) => {
    await mfa.disableMfa(req.ctx, req.body);
    return reply.status(204).send(null);
  });

  route(app, ops.regenerateBackupCodes, async (req) => mfa.regenerateBackupCodes(req.ctx, req.body));
}
