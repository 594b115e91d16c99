import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../services/deps.js';
import * as vars from '../services/variables.js';

export async function variableRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const config = { auth: 'any' as const };
  const tags = ['variables'];

  app.get(
    '/projects/:id/envs/:env/vars',
    {
      config,
      schema: { tags, params: c.envParams, querystring: c.listVarsQuery, response: { 200: c.listVarsResponse } },
    },
    async (req) => ({
      vars: await vars.listVars(deps, req.principal, req.params.id, req.params.env, req.query.reveal ?? false),
    }),
  );

  app.post(
    '/projects/:id/vars',
    {
      config,
      schema: { tags, params: c.projectParams, body: c.bulkUpsertBody, response: { 200: c.bulkUpsertResponse } },
    },
    async (req) => vars.bulkUpsert(deps, req.principal, req.params.id, req.body),
  );

  app.put(
    '/projects/:id/envs/:env/vars/:key',
    { config, schema: { tags, params: c.varParams, body: c.updateVarBody, response: { 200: c.updateVarResponse } } },
    async (req) => vars.updateVar(deps, req.principal, req.params.id, req.params.env, req.params.key, req.body),
  );

  app.delete(
    '/projects/:id/envs/:env/vars/:key',
    { config, schema: { tags, params: c.varParams, response: { 204: c.noContent } } },
    async (req, reply) => {
      await vars.deleteVar(deps, req.principal, req.params.id, req.params.env, req.params.key);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/projects/:id/envs/:env/vars::bulkDelete',
    { config, schema: { tags, params: c.envParams, body: c.bulkDeleteBody, response: { 200: c.bulkDeleteResponse } } },
    async (req) => vars.bulkDelete(deps, req.principal, req.params.id, req.params.env, req.body.keys),
  );

  app.get(
    '/projects/:id/envs/:env/vars/:key/history',
    {
      config,
      schema: { tags, params: c.varParams, querystring: c.listVarsQuery, response: { 200: c.historyResponse } },
    },
    async (req) => ({
      history: await vars.history(
        deps,
        req.principal,
        req.params.id,
        req.params.env,
        req.params.key,
        req.query.reveal ?? false,
      ),
    }),
  );

  app.post(
    '/projects/:id/envs/:env/vars/:key/restore',
    { config, schema: { tags, params: c.varParams, body: c.restoreBody, response: { 200: c.restoreResponse } } },
    async (req) => vars.restore(deps, req.principal, req.params.id, req.params.env, req.params.key, req.body.versionId),
  );
}
