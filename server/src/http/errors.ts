import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, ReferenceError422 } from '../lib/errors.js';

/**
 * The one error handler (guide convention 5): AppError → its status and `{error:{code,message,field}}`;
 * schema failures → 400 VALIDATION naming the field; Fastify's own client errors keep their meaning;
 * anything else is a 500 whose body carries only the request id, the details going to the log.
 */
export function errorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ReferenceError422) {
    // Spec rule 4: the pull reference error is flat, `error` being a string.
    return reply.status(422).send({ error: error.code, message: error.message, key: error.key });
  }
  if (error instanceof AppError) {
    for (const [k, v] of Object.entries(error.headers)) reply.header(k, v);
    return reply.status(error.status).send(body(error.code, error.message, error.field));
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    const first = error.validation[0]!;
    const params = first.params as { keys?: string[] };
    const path = first.instancePath.split('/').filter(Boolean);
    const context = (error as FastifyError).validationContext ?? 'body';
    // An unknown field is named only when it looks like a field name, so a pasted value is never echoed.
    const rawUnknown = first.keyword === 'unrecognized_keys' ? params.keys?.[0] : undefined;
    const unknownKey =
      rawUnknown && /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/.test(rawUnknown) ? rawUnknown : rawUnknown && '(unknown)';
    const field = [...path, ...(unknownKey ? [unknownKey] : [])].join('.') || context;
    const message = unknownKey ? `unknown field "${unknownKey}"` : first.message;
    return reply.status(400).send(body('VALIDATION', `${field}: ${message}`, field));
  }
  const fe = error as FastifyError;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return reply.status(413).send(body('PAYLOAD_TOO_LARGE', 'request body is too large', 'body'));
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return reply.status(400).send(body('VALIDATION', 'request body is not valid JSON', 'body'));
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return reply.status(400).send(body('VALIDATION', 'request body must be application/json', 'content-type'));
  }
  if (error instanceof SyntaxError && fe.statusCode === 400) {
    return reply.status(400).send(body('VALIDATION', 'request body is not valid JSON', 'body'));
  }
  if (fe.statusCode === 413) return reply.status(413).send(body('PAYLOAD_TOO_LARGE', 'request is too large'));
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return reply.status(400).send(body('VALIDATION', 'malformed request'));
  }
  request.log.error({ err: error }, 'unhandled error');
  return reply.status(500).send(body('SERVER', `internal error (request id ${request.id})`));
}

export function body(code: string, message: string, field?: string) {
  return { error: { code, message, ...(field !== undefined ? { field } : {}) } };
}
