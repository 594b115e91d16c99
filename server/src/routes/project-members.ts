import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import * as pm from '../services/projects/project-members.js';

/** D22: project members and per-environment overrides (Owner or project Admin). */
export async function projectMemberRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const config = { auth: 'any' as const };
  const tags = ['project members'];

  app.get(
    '/projects/:id/members',
    { config, schema: { tags, params: c.projectParams, response: { 200: c.projectMembersResponse } } },
    async (req) => ({ members: await pm.listProjectMembers(req.ctx, { projectId: req.params.id }) }),
  );
  app.put(
    '/projects/:id/members/:userId',
    {
      config,
      schema: { tags, params: c.projectMemberParams, body: c.setProjectRoleBody, response: { 200: c.projectMember } },
    },
    async (req) =>
      pm.setProjectRole(req.ctx, { projectId: req.params.id, userId: req.params.userId, role: req.body.role }),
  );
  app.delete(
    '/projects/:id/members/:userId',
    { config, schema: { tags, params: c.projectMemberParams, response: { 204: c.noContent } } },
    async (req, reply) => {
      await pm.removeProjectMember(req.ctx, { projectId: req.params.id, userId: req.params.userId });
      return reply.status(204).send(null);
    },
  );
  app.put(
    '/projects/:id/members/:userId/envs/:env',
    {
      config,
      schema: {
        tags,
        params: c.projectMemberEnvParams,
        body: c.setEnvPermissionBody,
        response: { 200: c.projectMember },
      },
    },
    async (req) => pm.setEnvPermission(req.ctx, { ...memberEnv(req.params), permission: req.body.permission }),
  );
  app.delete(
    '/projects/:id/members/:userId/envs/:env',
    { config, schema: { tags, params: c.projectMemberEnvParams, response: { 204: c.noContent } } },
    async (req, reply) => {
      await pm.setEnvPermission(req.ctx, { ...memberEnv(req.params), permission: null });
      return reply.status(204).send(null);
    },
  );
}

const memberEnv = (p: { id: string; userId: string; env: string }) => ({
  projectId: p.id,
  userId: p.userId,
  env: p.env,
});
