import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { body } from '../http/errors.js';
import { route } from '../http/operation.js';
import type { Deps } from '../services/core/deps.js';

/** D6: 200 {ok:true} when the database answers; no credential. */
export async function healthRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  route(app, ops.healthz, async (_req, reply) => {
    try {
      await sql`select 1`.execute(deps.db);
      return { ok: true as const };
    } catch {
      // Every non-2xx body has the spec's error shape; D6 defines only the healthy answer.
      return reply.status(503).send(body('SERVER', 'the database does not answer'));
    }
  });

  // D52: ready once it is routed at all. The server listens only after its migrations ran (main.ts), and
  // while it drains the onRequest hook (http/hooks.ts) answers every request, this one included, 503.
  route(app, ops.readyz, async () => ({ ready: true as const }));
}
