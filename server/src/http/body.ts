import type { FastifyInstance } from 'fastify';
import { validation } from '../lib/errors.js';
import { fieldNameLike } from '../lib/redact.js';

/**
 * Refused with 413 before parsing (ADR 0002). D24 bounds items (5,000) and values (64 KiB) separately; both at
 * their maximum would be a ~330 MB body, held whole in memory as text and as objects. 16 MiB carries 5,000
 * values of ~3 KB, or 250 of the full 64 KiB.
 */
export const BODY_LIMIT = 16 * 1024 * 1024;

/**
 * The dotted path of the first string or key holding a NUL character, or null. A key that is neither an
 * index nor name-shaped (a pasted value or credential) is written `(unknown)`, as for an unknown field.
 */
function pathOfNul(value: unknown, path: string[]): string | null {
  if (typeof value === 'string') return value.includes('\0') ? path.join('.') : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\0')) return path.join('.');
    const found = pathOfNul(v, [...path, /^\d+$/.test(k) || fieldNameLike(k) ? k : '(unknown)']);
    if (found !== null) return found;
  }
  return null;
}

/**
 * An empty body sent with `Content-Type: application/json` (some HTTP clients add the header to every
 * request) counts as no body: a DELETE or an input-less POST then gets its real answer, and a route that
 * needs a body still gets 400 VALIDATION from its schema. Anything else goes to Fastify's own parser,
 * which refuses `__proto__` and `constructor.prototype` keys.
 */
export function parseJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    if (text === '') return done(null, null);
    parseJson(request, text as string, (err, parsed) => {
      // A NUL (`\u0000`) can be neither stored in a PostgreSQL text column nor passed in an environment
      // variable: refused in every field, on every database, before any route sees it. The walk runs only
      // when the text holds the escape at all.
      const nulAt = !err && (text as string).includes('\\u0000') ? pathOfNul(parsed, []) : null;
      if (nulAt !== null) return done(validation(nulAt || 'body', 'text may not contain a NUL character'), undefined);
      done(err, parsed);
    });
  });
}
