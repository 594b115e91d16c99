import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, ReferenceError422, UnresolvedReferencesError } from '../lib/errors.js';
import { fieldNameLike, loggablePath } from '../lib/redact.js';

// Fastify's parser reports both the same way: text that is not JSON, and JSON with a `__proto__` key or a
// `constructor.prototype` (refused against prototype poisoning).
const NOT_JSON = 'request body is not valid JSON, or has a forbidden key (__proto__, constructor)';

/**
 * The one error handler (guide convention 5): AppError → its status and `{error:{code,message,field}}`;
 * schema failures → 400 VALIDATION naming the field; Fastify's own client errors keep their meaning;
 * anything else is a 500 whose body carries only the request id, the details going to the log.
 */
export function errorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ReferenceError422) {
    // Spec variables rule 4: the pull reference error is flat, `error` being a string.
    return reply.status(422).send({ error: error.code, message: error.message, key: error.key });
  }
  if (error instanceof AppError) {
    // A 500 of ours (DECRYPT_FAILED) is an operator's concern: logged with its code and field (a key name,
    // never a value).
    if (error.status >= 500) request.log.error({ code: error.code, field: error.field }, error.message);
    for (const [k, v] of Object.entries(error.headers)) reply.header(k, v);
    if (error instanceof UnresolvedReferencesError) {
      return reply
        .status(error.status)
        .send({ ...body(error.code, error.message, error.field), unresolved: error.unresolved });
    }
    return reply.status(error.status).send(body(error.code, error.message, error.field));
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    const first = error.validation[0]!;
    const params = first.params as { keys?: string[] };
    const path = first.instancePath.split('/').filter(Boolean);
    const context = (error as FastifyError).validationContext ?? 'body';
    // An unknown field is named only when it looks like a field name, so a pasted value is never echoed.
    const rawUnknown = first.keyword === 'unrecognized_keys' ? params.keys?.[0] : undefined;
    const unknownKey = rawUnknown && (fieldNameLike(rawUnknown) ? rawUnknown : '(unknown)');
    const field = [...path, ...(unknownKey ? [unknownKey] : [])].join('.') || context;
    const message = unknownKey ? `unknown field "${unknownKey}"` : first.message;
    return reply.status(400).send(body('VALIDATION', `${field}: ${message}`, field));
  }
  const fe = error as FastifyError;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return reply.status(413).send(body('PAYLOAD_TOO_LARGE', 'request body is too large', 'body'));
    // (No empty-body case: http/body.ts's JSON parser takes an empty body as none.)
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return reply.status(400).send(body('VALIDATION', NOT_JSON, 'body'));
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return reply.status(400).send(body('VALIDATION', 'request body must be application/json', 'content-type'));
  }
  if (error instanceof SyntaxError && fe.statusCode === 400) {
    return reply.status(400).send(body('VALIDATION', NOT_JSON, 'body'));
  }
  if (fe.statusCode === 413) return reply.status(413).send(body('PAYLOAD_TOO_LARGE', 'request is too large'));
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return reply.status(400).send(body('VALIDATION', 'malformed request'));
  }
  request.log.error({ err: error }, 'unhandled error');
  return reply.status(500).send(body('SERVER', `internal error (request id ${request.id})`));
}

/**
 * Spec "Errors": `{error:{code:string, message:string, field:string}}`. `field` is always there, a string, so
 * a client typed after the spec can rely on it; it names the offending field when one is at fault and is
 * `""` otherwise (ADR 0002).
 */
export function body(code: string, message: string, field = '') {
  return { error: { code, message, field } };
}

/** A path no route serves: 404 in our shape, the path as it may be logged (no query string). */
export function notFoundHandler(request: FastifyRequest, reply: FastifyReply) {
  return reply.status(404).send(body('NOT_FOUND', `no route for ${request.method} ${loggablePath(request.url)}`));
}

/** Fastify's errors from before routing (a path that does not decode): 400 in our shape, not Fastify's. */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  // Answered before any route, so the onSend hook that adds these never runs.
  reply.headers(SECURITY_HEADERS).header('cache-control', 'no-store');
  if (error.code === 'FST_ERR_BAD_URL') return reply.status(400).send(body('VALIDATION', 'malformed URL path', 'path'));
  return reply.status(400).send(body('VALIDATION', 'malformed request'));
}

/**
 * Requests Node's HTTP parser refuses (a bad Content-Length, oversized headers, a timed-out request) never
 * reach Fastify's handlers: answered here in the same shape and with the same headers as everything else.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, payload] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', body('VALIDATION', 'request headers are too large', 'headers')]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', body('VALIDATION', 'the request was not received in time')]
        : [400, 'Bad Request', body('VALIDATION', 'malformed HTTP request')];
  const text = JSON.stringify(payload);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(text)}\r\n` +
      `${SECURITY_HEADER_LINES}connection: close\r\n\r\n${text}`,
  );
}

/**
 * An `Expect` other than `100-continue`, which Node answers 417 by itself with an empty body unless the
 * server listens for it (app.ts): the same status in our shape and headers.
 */
export function unmetExpectationHandler(_req: IncomingMessage, res: ServerResponse): void {
  const text = JSON.stringify(body('VALIDATION', 'only "Expect: 100-continue" is supported', 'expect'));
  res.writeHead(417, {
    ...SECURITY_HEADERS,
    'cache-control': 'no-store',
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    connection: 'close',
  });
  res.end(text);
}

/** The headers every answer carries (http/hooks.ts sets them on routed replies; clientErrorHandler writes them raw). */
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
} as const;
const SECURITY_HEADER_LINES = `${Object.entries(SECURITY_HEADERS)
  .map(([k, v]) => `${k}: ${v}\r\n`)
  .join('')}cache-control: no-store\r\n`;
