import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ifMatch, REVISION_HEADER, withRevision } from '../http/revisions.js';
import type { EnvTarget } from '../services/core/authz.js';
import * as revisions from '../services/variables/revisions.js';
import * as vars from '../services/variables/variables.js';

export async function variableRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const config = { auth: 'any' as const };
  const tags = ['variables'];

  app.get(
    '/projects/:id/envs/:env/vars',
    {
      config,
      schema: { tags, params: c.envParams, querystring: c.listVarsAtQuery, response: { 200: c.listVarsResponse } },
    },
    async (req, reply) => {
      const { vars: listed, revision } = await vars.listVars(req.ctx, {
        ...target(req.params),
        reveal: req.query.reveal ?? false,
        revision: req.query.revision,
      });
      reply.header(REVISION_HEADER, String(revision));
      return { vars: listed };
    },
  );

  app.post(
    '/projects/:id/vars',
    {
      config,
      schema: {
        tags,
        params: c.projectParams,
        querystring: c.varWriteQuery,
        body: c.bulkUpsertBody,
        response: { 200: c.bulkUpsertResponse },
      },
    },
    async (req, reply) =>
      withRevision(
        reply,
        await vars.bulkUpsert(req.ctx, {
          projectId: req.params.id,
          ...req.body,
          ...ifMatch(req),
          validate: req.query.validate,
        }),
      ),
  );

  app.put(
    '/projects/:id/envs/:env/vars/:key',
    {
      config,
      schema: {
        tags,
        params: c.varParams,
        querystring: c.varWriteQuery,
        body: c.updateVarBody,
        response: { 200: c.updateVarResponse },
      },
    },
    async (req, reply) =>
      withRevision(
        reply,
        await vars.updateVar(req.ctx, {
          ...target(req.params),
          key: req.params.key,
          ...req.body,
          ...ifMatch(req),
          validate: req.query.validate,
        }),
      ),
  );

  app.delete(
    '/projects/:id/envs/:env/vars/:key',
    { config, schema: { tags, params: c.varParams, response: { 204: c.noContent } } },
    async (req, reply) => {
      withRevision(
        reply,
        await vars.deleteVar(req.ctx, { ...target(req.params), key: req.params.key, ...ifMatch(req) }),
      );
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/projects/:id/envs/:env/vars::bulkDelete',
    { config, schema: { tags, params: c.envParams, body: c.bulkDeleteBody, response: { 200: c.bulkDeleteResponse } } },
    async (req, reply) =>
      withRevision(
        reply,
        await vars.bulkDelete(req.ctx, { ...target(req.params), keys: req.body.keys, ...ifMatch(req) }),
      ),
  );

  app.get(
    '/projects/:id/envs/:env/vars/:key/history',
    {
      config,
      schema: { tags, params: c.varParams, querystring: c.listVarsQuery, response: { 200: c.historyResponse } },
    },
    async (req) => ({
      history: await vars.history(req.ctx, {
        ...target(req.params),
        key: req.params.key,
        reveal: req.query.reveal ?? false,
      }),
    }),
  );

  app.post(
    '/projects/:id/envs/:env/vars/:key/restore',
    { config, schema: { tags, params: c.varParams, body: c.restoreBody, response: { 200: c.restoreResponse } } },
    async (req, reply) =>
      withRevision(
        reply,
        await vars.restore(req.ctx, {
          ...target(req.params),
          key: req.params.key,
          versionId: req.body.versionId,
          ...ifMatch(req),
        }),
      ),
  );

  app.get(
    '/projects/:id/envs/:env/revisions',
    {
      config,
      schema: { tags, params: c.envParams, querystring: c.revisionsQuery, response: { 200: c.revisionsResponse } },
    },
    async (req) => revisions.listRevisions(req.ctx, { ...target(req.params), ...req.query }),
  );

  app.post(
    '/projects/:id/envs/:env/rollback',
    { config, schema: { tags, params: c.envParams, body: c.rollbackBody, response: { 200: c.rollbackResponse } } },
    async (req, reply) =>
      withRevision(
        reply,
        await revisions.rollback(req.ctx, { ...target(req.params), revision: req.body.revision, ...ifMatch(req) }),
      ),
  );
}

/** The environment a route's `:id` and `:env` name. */
const target = (p: { id: string; env: string }): EnvTarget => ({ projectId: p.id, env: p.env });
