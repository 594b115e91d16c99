import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import * as tokens from '../services/identity/tokens.js';

/** D31/D10: token management requires a dashboard session (JWT); `GET /auth/token` is a token's own (D58). */
export async function tokenRoutes(app: FastifyInstance) {
  // D58: an access token describes itself (`svcenv whoami`); a session gets 401 like pull (the one
  // exception to this file's JWT rule: a token cannot manage tokens, only read its own description).
  route(app, ops.describeOwnToken, async (req) => tokens.describeOwnToken(req.ctx));

  route(app, ops.listTokens, async (req) => ({ tokens: await tokens.listTokens(req.ctx) }));

  route(app, ops.createToken, async (req, reply) =>
    reply.status(201).send(await tokens.createToken(req.ctx, req.body)),
  );

  route(app, ops.rotateToken, async (req) => tokens.rotateToken(req.ctx, req.params));

  route(app, ops.revokeToken, async (req, reply) => {
    await tokens.revokeToken(req.ctx, req.params);
    return reply.status(204).send(null);
  });
}
