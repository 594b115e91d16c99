import type { FastifyInstance } from 'fastify';
import { validation } from '../lib/errors.js';
import { fieldNameLike } from '../lib/redact.js';

/**
 * Refused with 413 before parsing (ADR 0002). D24 bounds items (5,000) and values (64 KiB) separately; both at
 * their maximum would be a ~330 MB body, held whole in memory as text and as objects. 16 MiB carries 5,000
 * values of ~3 KB, or 250 of the full 64 KiB.
 */
export const BODY_LIMIT = 16 * 1024 * 1024;

/** A UTF-16 surrogate without its other half: not a character, so not encodable as UTF-8 text. */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
export const NUL_MESSAGE = 'text may not contain a NUL character';
const SURROGATE_MESSAGE = 'text may not contain a lone surrogate (\\ud800-\\udfff): it is not a character';

/**
 * The dotted path of the first string or key that `bad` finds, or null. A key that is neither an index nor
 * name-shaped (a pasted value or credential) is written `(unknown)`, as for an unknown field.
 */
function pathOf(value: unknown, bad: (text: string) => boolean, path: string[]): string | null {
  if (typeof value === 'string') return bad(value) ? path.join('.') : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [k, v] of Object.entries(value)) {
    if (bad(k)) return path.join('.');
    const found = pathOf(v, bad, [...path, /^\d+$/.test(k) || fieldNameLike(k) ? k : '(unknown)']);
    if (found !== null) return found;
  }
  return null;
}

const hasNul = (text: string) => text.includes('\0');
const hasLoneSurrogate = (text: string) => LONE_SURROGATE.test(text);

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
      if (err) return done(err, undefined);
      // A NUL (`\u0000`) can be neither stored in a PostgreSQL text column nor passed in an environment
      // variable: refused in every field, on every database, before any route sees it. A lone surrogate
      // (`\ud800`) is no character: both drivers would store U+FFFD in its place, a value other than the one
      // sent. Each walk runs only when the text holds such an escape at all (raw text is decoded UTF-8, which
      // holds neither a lone surrogate nor, JSON being what it is, a raw NUL inside a string).
      const raw = text as string;
      const nulAt = raw.includes('\\u0000') ? pathOf(parsed, hasNul, []) : null;
      if (nulAt !== null) return done(validation(nulAt || 'body', NUL_MESSAGE), undefined);
      const surrogateAt = /\\u[dD][89a-fA-F]/.test(raw) ? pathOf(parsed, hasLoneSurrogate, []) : null;
      if (surrogateAt !== null) return done(validation(surrogateAt || 'body', SURROGATE_MESSAGE), undefined);
      done(null, parsed);
    });
  });
}
