import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import * as tokens from '../services/identity/tokens.js';

/** D31/D10: token management requires a dashboard session (JWT); `GET /auth/token` is a token's own (D58). */
export async function tokenRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const config = { auth: 'jwt' as const };
  const tags = ['tokens'];

  // D58: an access token describes itself (`svcenv whoami`); a session gets 401 like pull (the one
  // exception to this file's JWT rule: a token cannot manage tokens, only read its own description).
  app.get(
    '/auth/token',
    { config: { auth: 'token' as const }, schema: { tags, response: { 200: c.tokenSelfResponse } } },
    async (req) => tokens.describeOwnToken(req.ctx),
  );

  app.get('/tokens', { config, schema: { tags, response: { 200: c.listTokensResponse } } }, async (req) => ({
    tokens: await tokens.listTokens(req.ctx),
  }));

  app.post(
    '/tokens',
    { config, schema: { tags, body: c.createTokenBody, response: { 201: c.createTokenResponse } } },
    async (req, reply) => reply.status(201).send(await tokens.createToken(req.ctx, req.body)),
  );

  app.post(
    '/tokens/:id/rotate',
    { config, schema: { tags, params: c.tokenParams, body: c.emptyBody, response: { 200: c.rotateTokenResponse } } },
    async (req) => tokens.rotateToken(req.ctx, req.params),
  );

  app.delete(
    '/tokens/:id',
    { config, schema: { tags, params: c.tokenParams, response: { 204: c.noContent } } },
    async (req, reply) => {
      await tokens.revokeToken(req.ctx, req.params);
      return reply.status(204).send(null);
    },
  );
}
