import type { Operation, ParsedBody, ParsedParams, ParsedQuery, ReplyOf } from '@svcenv/contract/operations';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  onRequestHookHandler,
  RouteShorthandOptions,
} from 'fastify';
import { validation } from '../lib/errors.js';
import { fieldNameLike } from '../lib/redact.js';
import { NUL_MESSAGE } from './body.js';

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

export const ENCODING_MESSAGE = 'text must be percent-encoded UTF-8';

/** A query parameter's name as `field` may carry it: never a pasted value (lib/redact.ts). */
const queryField = (name: string) => (fieldNameLike(name) ? name : '(unknown)');

/**
 * The first query parameter whose raw text does not decode (a `%` not followed by two hex digits, or bytes
 * that are not UTF-8: `%ff`, the surrogate `%ed%a0%80`), or null. Fastify's query parser keeps such a value
 * as its literal text, so the route would answer about a string the client never meant; refused instead, as
 * the router refuses such a path (400 `path`, http/errors.ts).
 */
function undecodableQueryParameter(url: string): string | null {
  const q = url.indexOf('?');
  if (q === -1 || !url.includes('%', q)) return null;
  for (const pair of url.slice(q + 1).split('&')) {
    if (!pair.includes('%')) continue;
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    let name: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      return '(unknown)';
    }
    try {
      if (eq !== -1) decodeURIComponent(pair.slice(eq + 1).replace(/\+/g, ' '));
    } catch {
      return queryField(name);
    }
  }
  return null;
}

/**
 * Spec "Errors": every path parameter and query value of every operation is refused with 400 VALIDATION
 * naming it when it holds a NUL character (which PostgreSQL refuses in any text, so the request would end in
 * a 500 wherever it reached a query) or does not decode as UTF-8; http/body.ts refuses the same in bodies.
 * The first hook of every route `route` registers, before its own: after authentication (which reads only a
 * well-formed project and environment name, http/hooks.ts), before the body is read, the project slug looked
 * up or the schema run, so no operation added later can miss it. Other control characters are valid text in
 * both databases, and are the routes' schemas' to judge.
 */
export const refuseUnsafeText: onRequestHookHandler = (request, _reply, done: HookHandlerDoneFunction) => {
  const params = request.params as Record<string, unknown> | undefined;
  for (const [name, value] of Object.entries(params ?? {})) {
    if (typeof value === 'string' && value.includes('\0')) return done(validation(name, NUL_MESSAGE));
  }
  const query = request.query as Record<string, unknown> | undefined;
  for (const [name, value] of Object.entries(query ?? {})) {
    if (name.includes('\0')) return done(validation('(unknown)', NUL_MESSAGE));
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'string' && v.includes('\0'))) {
      return done(validation(queryField(name), NUL_MESSAGE));
    }
  }
  const undecodable = undecodableQueryParameter(request.url);
  if (undecodable !== null) return done(validation(undecodable, ENCODING_MESSAGE));
  done();
};

/**
 * Registers the route of an operation (contract/src/operations): its method and path, the credential its
 * `auth` names (`config.auth`, read by the onRequest hook in http/hooks.ts), and its schemas for validation,
 * serialization and the OpenAPI document. The operation's path is the full URL path; the part the plugin's
 * prefix (`/v1`) already supplies is left out, so the prefix stays where app.ts puts it. Every route refuses
 * unsafe text in its params and query first (`refuseUnsafeText`).
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
  const own = extras.onRequest;
  app.route({
    ...extras,
    method: op.method,
    url,
    onRequest: [refuseUnsafeText, ...(own === undefined ? [] : Array.isArray(own) ? own : [own])],
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
