import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import * as projects from '../services/projects/projects.js';

export async function projectRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const config = { auth: 'any' as const };
  const tags = ['projects'];

  app.get(
    '/projects',
    { config, schema: { tags, response: { 200: z.object({ projects: z.array(c.project) }) } } },
    async (req) => ({
      projects: await projects.listProjects(req.ctx),
    }),
  );

  app.post(
    '/projects',
    { config, schema: { tags, body: c.createProjectBody, response: { 201: c.project } } },
    async (req, reply) => reply.status(201).send(await projects.createProject(req.ctx, req.body)),
  );

  app.get(
    '/projects/:id',
    { config, schema: { tags, params: c.projectParams, response: { 200: c.project } } },
    async (req) => projects.getProject(req.ctx, { projectId: req.params.id }),
  );

  app.patch(
    '/projects/:id',
    { config, schema: { tags, params: c.projectParams, body: c.updateProjectBody, response: { 200: c.project } } },
    async (req) => projects.updateProject(req.ctx, { projectId: req.params.id, ...req.body }),
  );

  app.delete(
    '/projects/:id',
    { config, schema: { tags, params: c.projectParams, response: { 204: c.noContent } } },
    async (req, reply) => {
      await projects.deleteProject(req.ctx, { projectId: req.params.id });
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/projects/:id/envs',
    {
      config,
      schema: { tags, params: c.projectParams, response: { 200: z.object({ envs: z.array(c.environment) }) } },
    },
    async (req) => ({ envs: await projects.listEnvs(req.ctx, { projectId: req.params.id }) }),
  );

  app.post(
    '/projects/:id/envs',
    { config, schema: { tags, params: c.projectParams, body: c.createEnvBody, response: { 201: c.project } } },
    async (req, reply) =>
      reply.status(201).send(await projects.createEnv(req.ctx, { projectId: req.params.id, name: req.body.name })),
  );

  app.patch(
    '/projects/:id/envs/:env',
    { config, schema: { tags, params: c.envParams, body: c.updateEnvBody, response: { 200: c.environment } } },
    async (req) => projects.updateEnv(req.ctx, { projectId: req.params.id, env: req.params.env, ...req.body }),
  );

  app.delete(
    '/projects/:id/envs/:env',
    { config, schema: { tags, params: c.envParams, response: { 204: c.noContent } } },
    async (req, reply) => {
      await projects.deleteEnv(req.ctx, { projectId: req.params.id, env: req.params.env });
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/projects/:id/diff',
    { config, schema: { tags, params: c.projectParams, querystring: c.diffQuery, response: { 200: c.diffResponse } } },
    async (req) => {
      const [a, b] = req.query.env as [string, string];
      return projects.diffEnvs(req.ctx, { projectId: req.params.id, a, b });
    },
  );

  app.get(
    '/projects/:id/audit',
    { config, schema: { tags, params: c.projectParams, querystring: c.auditQuery, response: { 200: c.auditPage } } },
    async (req) => projects.projectAudit(req.ctx, { projectId: req.params.id, ...req.query }),
  );
}
