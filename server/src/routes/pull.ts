import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../services/deps.js';
import { exportVars, pull } from '../services/pull.js';

export async function pullRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['pull'];

  // Rule 8: pull takes access tokens only; a JWT is 401.
  app.get(
    '/projects/:id/envs/:env/pull',
    { config: { auth: 'token' }, schema: { tags, params: c.envParams, querystring: c.pullQuery } },
    async (req, reply) => {
      const result = await pull(deps, req.principal, {
        projectId: req.params.id,
        env: req.params.env,
        metadata: req.query.metadata ?? true,
        format: req.query.format ?? 'dotenv',
        operator: req.headers['x-svcenv-client'] === 'operator',
      });
      reply.header('etag', result.etag);
      // Which variables of the body are the server's context variables rather than the user's (ADR 0002):
      // `svcenv run` scrubs every value but those, so a user variable that overrides one is scrubbed too.
      if (result.context) reply.header('x-svcenv-context', result.context);
      // D29: a matching If-None-Match gets 304 with no body.
      if (notModified(req.headers['if-none-match'], result.etag)) return reply.status(304).send();
      return reply.type(result.contentType).send(result.body);
    },
  );

  app.get(
    '/projects/:id/envs/:env/export',
    { config: { auth: 'any' }, schema: { tags, params: c.envParams, querystring: c.exportQuery } },
    async (req, reply) => {
      const result = await exportVars(deps, req.principal, {
        projectId: req.params.id,
        env: req.params.env,
        metadata: req.query.metadata ?? true,
        format: req.query.format ?? 'dotenv',
        reveal: req.query.reveal ?? false,
      });
      reply.header('content-disposition', `attachment; filename="${result.filename}"`);
      return reply.type(result.contentType).send(result.body);
    },
  );
}

/**
 * RFC 9110 13.1.2: If-None-Match compares weakly (a `W/` prefix on either side is ignored) and `*` matches
 * any current representation. Proxies and HTTP caches may send our strong ETag back marked weak.
 */
export function notModified(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((raw) => {
    const t = raw.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}
