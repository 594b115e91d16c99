import type { FastifyInstance } from 'fastify';

/** Benchmarks only (BENCH_FLOOR_ROUTE): GET /bench/floor, a constant 2 KB text, the floor bench/ compares routes with. */
export async function benchFloorRoutes(app: FastifyInstance) {
  const floor = `${'x'.repeat(2047)}\n`;
  app.get('/bench/floor', { schema: { hide: true } }, async (_req, reply) =>
    reply.type('text/plain; charset=utf-8').send(floor),
  );
}
