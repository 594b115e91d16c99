import type { Operation, ParsedBody, ParsedParams, ParsedQuery, ReplyOf } from '@svcenv/contract/operations';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';

/** The request a route of `O` handles: params, query and body as its schemas parsed them. */
export type OperationRequest<O> = FastifyRequest<{
  Params: ParsedParams<O>;
  Querystring: ParsedQuery<O>;
  Body: ParsedBody<O>;
}>;

/** A route's handler: answers one of the operation's declared bodies, or sends through `reply` itself. */
export type OperationHandler<O> = (
  req: OperationRequest<O>,
  reply: FastifyReply,
) => Promise<ReplyOf<O> | FastifyReply | undefined>;

/** What a route adds to its operation: hooks such as the login limit, `config.issuesSession`, a body limit. */
export type RouteExtras = Omit<RouteShorthandOptions, 'schema'>;

/**
 * Registers the route of an operation (contract/src/operations): its method and path, the credential its
 * `auth` names (`config.auth`, read by the onRequest hook in http/hooks.ts), and its schemas for validation,
 * serialization and the OpenAPI document. The operation's path is the full URL path; the part the plugin's
 * prefix (`/v1`) already supplies is left out, so the prefix stays where app.ts puts it.
 */
export function route<const O extends Operation>(
  app: FastifyInstance,
  op: O,
  handler: OperationHandler<O>,
  extras: RouteExtras = {},
): void {
  if (!op.path.startsWith(app.prefix)) throw new Error(`${op.name}: ${op.path} is not under ${app.prefix}`);
  // find-my-way reads a colon as a parameter unless it is doubled; ours mark parameters only after a slash.
  const url = op.path.slice(app.prefix.length).replace(/([^/]):/g, '$1::');
  app.route({
    ...extras,
    method: op.method,
    url,
    config: { ...(op.auth === 'none' ? {} : { auth: op.auth }), ...extras.config },
    schema: {
      operationId: op.name,
      ...(op.summary ? { summary: op.summary } : {}),
      tags: [...op.tags],
      ...(op.params ? { params: op.params } : {}),
      ...(op.query ? { querystring: op.query } : {}),
      ...(op.body ? { body: op.body } : {}),
      ...(op.responses ? { response: op.responses } : {}),
    },
    handler: handler as (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
  });
}
