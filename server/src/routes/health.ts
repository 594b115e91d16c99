import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { z } from 'zod';
import { body } from '../http/errors.js';
import type { Deps } from '../services/core/deps.js';

const healthResponse = z.object({ ok: z.literal(true) });
const readyResponse = z.object({ ready: z.literal(true) });

/** D6: 200 {ok:true} when the database answers; no credential. */
export async function healthRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  app.get(
    '/healthz',
    { schema: { tags: ['health'], response: { 200: healthResponse, 503: c.errorBody } } },
    async (_req, reply) => {
      try {
        await sql`select 1`.execute(deps.db);
        return { ok: true };
      } catch {
        // Every non-2xx body has the spec's error shape; D6 defines only the healthy answer.
        return reply.status(503).send(body('SERVER', 'the database does not answer'));
      }
    },
  );

  // D52: ready once it is routed at all. The server listens only after its migrations ran (main.ts), and
  // while it drains the onRequest hook (app.ts) answers every request, this one included, 503.
  app.get(
    '/readyz',
    { schema: { tags: ['health'], response: { 200: readyResponse, 503: c.errorBody } } },
    async () => ({ ready: true as const }),
  );
}
