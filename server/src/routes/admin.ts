import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import * as instance from '../services/workspace/instance.js';

/** /v1/admin/*: instance administration (D69); administrators only, through a session (JWT). */
export async function adminRoutes(app: FastifyInstance) {
  route(app, ops.adminListWorkspaces, async (req) => instance.listWorkspaces(req.ctx));
  route(app, ops.adminSetPlan, async (req) => instance.setWorkspacePlan(req.ctx, { ...req.params, ...req.body }));
  route(app, ops.adminListUsers, async (req) => instance.listUsers(req.ctx));
  route(app, ops.adminResetLink, async (req) => instance.resetLinkFor(req.ctx, req.params));
  route(app, ops.adminGetSettings, async (req) => instance.getSettings(req.ctx));
  route(app, ops.adminUpdateSettings, async (req) => instance.updateSettings(req.ctx, req.body));
}
