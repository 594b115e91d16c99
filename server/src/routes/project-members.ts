import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import * as pm from '../services/projects/project-members.js';

/** D22: project members and per-environment overrides (Owner or project Admin). */
export async function projectMemberRoutes(app: FastifyInstance) {
  route(app, ops.listProjectMembers, async (req) => ({
    members: await pm.listProjectMembers(req.ctx, { projectId: req.params.id }),
  }));
  route(app, ops.setProjectRole, async (req) =>
    pm.setProjectRole(req.ctx, {
      projectId: req.params.id,
      userId: req.params.userId,
      role: req.body.role,
      expiresAt: req.body.expiresAt,
    }),
  );
  route(app, ops.removeProjectMember, async (req, reply) => {
    await pm.removeProjectMember(req.ctx, { projectId: req.params.id, userId: req.params.userId });
    return reply.status(204).send(null);
  });
  route(app, ops.setEnvPermission, async (req) =>
    pm.setEnvPermission(req.ctx, {
      ...memberEnv(req.params),
      permission: req.body.permission,
      expiresAt: req.body.expiresAt,
    }),
  );
  route(app, ops.clearEnvPermission, async (req, reply) => {
    await pm.setEnvPermission(req.ctx, { ...memberEnv(req.params), permission: null });
    return reply.status(204).send(null);
  });
}

const memberEnv = (p: { id: string; userId: string; env: string }) => ({
  projectId: p.id,
  userId: p.userId,
  env: p.env,
});
