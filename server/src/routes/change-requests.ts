import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ifMatch, REVISION_HEADER } from '../http/revisions.js';
import * as requests from '../services/variables/change-requests.js';

/** D47: change requests of one environment. */
export async function changeRequestRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const config = { auth: 'any' as const };
  const tags = ['change requests'];
  const base = '/projects/:id/envs/:env/change-requests';

  app.post(
    base,
    {
      config,
      schema: {
        tags,
        params: c.envParams,
        querystring: c.changeRequestQuery,
        body: c.createChangeRequestBody,
        response: { 201: c.changeRequest },
      },
    },
    async (req, reply) => {
      const { revision, ...opened } = await requests.openChangeRequest(req.ctx, {
        projectId: req.params.id,
        env: req.params.env,
        ...req.body,
        reveal: req.query.reveal ?? false,
        ...ifMatch(req),
        validate: req.query.validate,
      });
      return reply.header(REVISION_HEADER, String(revision)).status(201).send(opened);
    },
  );

  app.get(
    base,
    {
      config,
      schema: {
        tags,
        params: c.envParams,
        querystring: c.listChangeRequestsQuery,
        response: { 200: c.changeRequestsResponse },
      },
    },
    async (req) => ({
      changeRequests: await requests.listChangeRequests(req.ctx, {
        projectId: req.params.id,
        env: req.params.env,
        status: req.query.status,
        reveal: req.query.reveal ?? false,
      }),
    }),
  );

  app.get(
    `${base}/:requestId`,
    {
      config,
      schema: {
        tags,
        params: c.changeRequestParams,
        querystring: c.changeRequestQuery,
        response: { 200: c.changeRequest },
      },
    },
    async (req) => requests.getChangeRequest(req.ctx, { ...target(req.params), reveal: req.query.reveal ?? false }),
  );

  app.post(
    `${base}/:requestId/approve`,
    { config, schema: { tags, params: c.changeRequestParams, body: c.emptyBody, response: { 200: c.changeRequest } } },
    async (req, reply) => {
      const { revision, ...applied } = await requests.approveChangeRequest(req.ctx, target(req.params));
      reply.header(REVISION_HEADER, String(revision));
      return applied;
    },
  );

  app.post(
    `${base}/:requestId/reject`,
    {
      config,
      schema: {
        tags,
        params: c.changeRequestParams,
        body: c.rejectChangeRequestBody,
        response: { 200: c.changeRequest },
      },
    },
    async (req) => requests.rejectChangeRequest(req.ctx, { ...target(req.params), reason: req.body?.reason }),
  );

  app.delete(
    `${base}/:requestId`,
    { config, schema: { tags, params: c.changeRequestParams, response: { 204: c.noContent } } },
    async (req, reply) => {
      await requests.withdrawChangeRequest(req.ctx, target(req.params));
      return reply.status(204).send(null);
    },
  );
}

const target = (p: { id: string; env: string; requestId: string }) => ({
  projectId: p.id,
  env: p.env,
  requestId: p.requestId,
});
