import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../services/deps.js';
import * as projects from '../services/projects.js';

export async function projectRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const config = { auth: 'any' as const };
  const tags = ['projects'];

  app.get(
    '/projects',
    { config, schema: { tags, response: { 200: z.object({ projects: z.array(c.project) }) } } },
    async (req) => ({
      projects: await projects.listProjects(deps, req.principal),
    }),
  );

  app.post(
    '/projects',
    { config, schema: { tags, body: c.createProjectBody, response: { 201: c.project } } },
    async (req, reply) => reply.status(201).send(await projects.createProject(deps, req.principal, req.body)),
  );

  app.get(
    '/projects/:id',
    { config, schema: { tags, params: c.projectParams, response: { 200: c.project } } },
    async (req) => projects.getProject(deps, req.principal, req.params.id),
  );

  app.patch(
    '/projects/:id',
    { config, schema: { tags, params: c.projectParams, body: c.updateProjectBody, response: { 200: c.project } } },
    async (req) => projects.updateProject(deps, req.principal, req.params.id, req.body),
  );

  app.delete(
    '/projects/:id',
    { config, schema: { tags, params: c.projectParams, response: { 204: c.noContent } } },
    async (req, reply) => {
      await projects.deleteProject(deps, req.principal, req.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/projects/:id/envs',
    {
      config,
      schema: { tags, params: c.projectParams, response: { 200: z.object({ envs: z.array(c.environment) }) } },
    },
    async (req) => ({ envs: await projects.listEnvs(deps, req.principal, req.params.id) }),
  );

  app.post(
    '/projects/:id/envs',
    { config, schema: { tags, params: c.projectParams, body: c.createEnvBody, response: { 201: c.project } } },
    async (req, reply) =>
      reply.status(201).send(await projects.createEnv(deps, req.principal, req.params.id, req.body.name)),
  );

  app.patch(
    '/projects/:id/envs/:env',
    { config, schema: { tags, params: c.envParams, body: c.updateEnvBody, response: { 200: c.environment } } },
    async (req) => projects.updateEnv(deps, req.principal, req.params.id, req.params.env, req.body),
  );

  app.delete(
    '/projects/:id/envs/:env',
    { config, schema: { tags, params: c.envParams, response: { 204: c.noContent } } },
    async (req, reply) => {
      await projects.deleteEnv(deps, req.principal, req.params.id, req.params.env);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/projects/:id/diff',
    { config, schema: { tags, params: c.projectParams, querystring: c.diffQuery, response: { 200: c.diffResponse } } },
    async (req) => {
      const [a, b] = req.query.env as [string, string];
      return projects.diffEnvs(deps, req.principal, req.params.id, a, b);
    },
  );

  app.get(
    '/projects/:id/audit',
    { config, schema: { tags, params: c.projectParams, querystring: c.auditQuery, response: { 200: c.auditPage } } },
    async (req) => projects.projectAudit(deps, req.principal, req.params.id, req.query.limit, req.query.cursor),
  );
}
