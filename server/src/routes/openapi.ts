import { endpoints } from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';

/** The OpenAPI document of every route registered after http/openapi.ts's documentRoutes. */
export async function openApiRoutes(app: FastifyInstance) {
  app.get(endpoints.openapi.path, { schema: { hide: true } }, async () => app.swagger());
}
