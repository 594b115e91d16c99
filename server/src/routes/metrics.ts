import type { FastifyInstance } from 'fastify';
import { body } from '../http/errors.js';
import { safeEqual } from '../lib/crypto.js';
import type { Metrics } from '../lib/metrics.js';
import { bearer } from '../services/identity/authn.js';

/**
 * D52: an operator's scrape endpoint, outside the API (not in the OpenAPI document, no user credential).
 * Without METRICS_TOKEN it answers 404 itself, so the dashboard's catch-all route does not serve it a page.
 */
export async function metricsRoutes(
  app: FastifyInstance,
  { metrics, token }: { metrics: Metrics | null; token: string | undefined },
) {
  app.get('/metrics', { schema: { hide: true } }, async (req, reply) => {
    if (!metrics || !token) return reply.status(404).send(body('NOT_FOUND', 'no route for GET /metrics'));
    const given = bearer(req.headers.authorization);
    if (!given || !safeEqual(given, token)) {
      return reply.status(401).send(body('UNAUTHORIZED', 'metrics need Authorization: Bearer <METRICS_TOKEN>'));
    }
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}
