import type * as c from '@svcenv/contract';
import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import { REVISION_HEADER } from '../http/revisions.js';
import { authenticate } from '../services/identity/authn.js';
import { exportVars, pullWaiting } from '../services/pull/pull.js';

/** Both read one environment and write nothing the authorization reads: one read for both (ADR 0007). */
const oneEnv = { config: { readsOneEnv: true } };

export async function pullRoutes(app: FastifyInstance) {
  // Spec variables rule 8: pull takes access tokens only; a JWT is 401.
  route(
    app,
    ops.pull,
    async (req, reply) => {
      const ifNoneMatch = req.headers['if-none-match'];
      // D43: `wait` holds the answer while If-None-Match still matches; the credential is checked again
      // before a held pull answers.
      const result = await pullWaiting(
        req.ctx,
        {
          ...what(req.params, req.query),
          operator: req.headers['x-svcenv-client'] === 'operator',
          wait: req.query.wait,
          revision: req.query.revision,
          keys: req.query.keys,
          ifNoneMatch: (etag) => notModified(ifNoneMatch, etag),
        },
        async () => ({
          deps: req.ctx.deps,
          ...(await authenticate(req.ctx.deps.authn, req.headers.authorization, 'token', req.ip)),
        }),
      );
      reply.header('etag', result.etag);
      reply.header(REVISION_HEADER, String(result.revision));
      // Which variables of the body are the server's context variables rather than the user's (ADR 0002):
      // `svcenv run` scrubs every value but those, so a user variable that overrides one is scrubbed too.
      if (result.context) reply.header('x-svcenv-context', result.context);
      // D29: a matching If-None-Match gets 304 with no body.
      if (notModified(ifNoneMatch, result.etag)) return reply.status(304).send();
      return reply.type(result.contentType).send(result.body);
    },
    oneEnv,
  );

  route(
    app,
    ops.exportVars,
    async (req, reply) => {
      const result = await exportVars(req.ctx, { ...what(req.params, req.query), reveal: req.query.reveal ?? false });
      reply.header('content-disposition', `attachment; filename="${result.filename}"`);
      return reply.type(result.contentType).send(result.body);
    },
    oneEnv,
  );
}

/**
 * The environment and rendering a pull or export asks for, with the defaults of D28 and spec variables rule 5.
 * The content type of each format (D28, D55) is the service's, from lib/formats.ts.
 */
function what(
  params: { id: string; env: string },
  query: { metadata?: boolean | undefined; format?: c.OutputFormat | undefined },
) {
  return {
    projectId: params.id,
    env: params.env,
    metadata: query.metadata ?? true,
    format: query.format ?? 'dotenv',
  };
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
