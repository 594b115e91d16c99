import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../services/deps.js';
import * as tokens from '../services/tokens.js';

/** D31/D10: token management requires a dashboard session (JWT). */
export async function tokenRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const config = { auth: 'jwt' as const };
  const tags = ['tokens'];

  app.get('/tokens', { config, schema: { tags, response: { 200: c.listTokensResponse } } }, async (req) => ({
    tokens: await tokens.listTokens(deps, req.principal),
  }));

  app.post(
    '/tokens',
    { config, schema: { tags, body: c.createTokenBody, response: { 201: c.createTokenResponse } } },
    async (req, reply) => reply.status(201).send(await tokens.createToken(deps, req.principal, req.body)),
  );

  app.post(
    '/tokens/:id/rotate',
    { config, schema: { tags, params: c.tokenParams, body: c.emptyBody, response: { 200: c.rotateTokenResponse } } },
    async (req) => tokens.rotateToken(deps, req.principal, req.params.id),
  );

  app.delete(
    '/tokens/:id',
    { config, schema: { tags, params: c.tokenParams, response: { 204: c.noContent } } },
    async (req, reply) => {
      await tokens.revokeToken(deps, req.principal, req.params.id);
      return reply.status(204).send(null);
    },
  );
}
