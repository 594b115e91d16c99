import fastifySwagger from '@fastify/swagger';
import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';

/**
 * The OpenAPI view of a route: its own schemas, plus what every route shares but does not declare at run
 * time (declaring them would put error bodies through the response serializer): the error body on 4XX and
 * 5XX, the pull's flat 422, and no credential on the public routes.
 */
const documentRoute: typeof jsonSchemaTransform = (input) => {
  const { schema, route } = input;
  const response: Record<string, unknown> = {
    ...(schema.response as Record<string, unknown> | undefined),
    '4XX': c.errorBody.describe('Error: `field` names the offending field, or is empty'),
    '5XX': c.errorBody.describe('Server error, with the request id in the message'),
  };
  if (route.url.endsWith('/pull')) response['422'] = c.flatReferenceErrorBody.describe('A reference cannot resolve');
  // D67: every write that takes `validate` may refuse with the list of what does not resolve.
  const query = schema.querystring as { shape?: Record<string, unknown> } | undefined;
  if (route.method !== 'GET' && query?.shape && 'validate' in query.shape) {
    response['422'] = c.unresolvedReferencesBody.describe(
      'validate=true and a written value has references that do not resolve for the writer; nothing was written',
    );
  }
  const auth = route.config?.auth;
  const security = !auth || auth === 'none' ? { security: [] } : {};
  const out = jsonSchemaTransform({ ...input, schema: { ...schema, ...security, response } });
  // zod renders null for OpenAPI 3.0 as a nullable string; @fastify/swagger documents a 204 without content
  // only for `type: 'null'`.
  const documented = (out.schema as { response?: Record<string, unknown> }).response;
  if (documented?.['204']) documented['204'] = { type: 'null', description: 'No Content' };
  return out;
};

/** Collects the routes registered after it into the OpenAPI document (served by routes/openapi.ts). */
export async function documentRoutes(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'svcenv API', version: '1.0.0', description: 'Configuration variables and secrets.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: documentRoute,
  });
}
