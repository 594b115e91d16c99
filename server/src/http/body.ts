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
const NOT_UTF8_MESSAGE = 'request body is not UTF-8';
/** Fatal: refuses bytes that are not UTF-8 instead of replacing them; a leading byte order mark is dropped. */
const utf8 = new TextDecoder('utf-8', { fatal: true });
const SURROGATE_MESSAGE = 'text may not contain a lone surrogate (\\ud800-\\udfff): it is not a character';

/** A key on the way down from the body, linked to its parent: a path is made only for the one reported. */
type Step = { key: string; up: Step | null } | null;
/** At most this many segments of a path are named; a deeper one ends in `...`. */
const MAX_PATH_SEGMENTS = 16;

function pathText(step: Step): string {
  const keys: string[] = [];
  for (let s = step; s !== null; s = s.up) keys.push(s.key);
  keys.reverse();
  return keys.length > MAX_PATH_SEGMENTS ? `${keys.slice(0, MAX_PATH_SEGMENTS).join('.')}...` : keys.join('.');
}

/**
 * The dotted path of the first string or key that `bad` finds (in the order the body is written), or null. A
 * key that is neither an index nor name-shaped (a pasted value or credential) is written `(unknown)`, as for an
 * unknown field. Walked with a stack of its own, not by recursion: a 16 MiB body may nest millions of levels
 * deep, which recursion would meet with a stack overflow.
 */
function pathOf(root: unknown, bad: (text: string) => boolean): string | null {
  const todo: ({ value: unknown; at: Step } | { key: string; value: unknown; at: Step })[] = [
    { value: root, at: null },
  ];
  for (let task = todo.pop(); task !== undefined; task = todo.pop()) {
    if ('key' in task) {
      // An entry of an object or array: its key, then everything under it, before the next entry.
      if (bad(task.key)) return pathText(task.at);
      const name = /^\d+$/.test(task.key) || fieldNameLike(task.key) ? task.key : '(unknown)';
      todo.push({ value: task.value, at: { key: name, up: task.at } });
      continue;
    }
    const { value, at } = task;
    if (typeof value === 'string') {
      if (bad(value)) return pathText(at);
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    const entries = Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--) todo.push({ key: entries[i]![0], value: entries[i]![1], at });
  }
  return null;
}

const hasNul = (text: string) => text.includes('\0');
const hasLoneSurrogate = (text: string) => LONE_SURROGATE.test(text);

/**
 * A JSON body must be UTF-8 (400 VALIDATION naming `body` otherwise). An empty body sent with
 * `Content-Type: application/json` (some HTTP clients add the header to every request) counts as no body: a DELETE or an input-less POST then gets its real answer, and a route that
 * needs a body still gets 400 VALIDATION from its schema. Anything else goes to Fastify's own parser,
 * which refuses `__proto__` and `constructor.prototype` keys.
 */
export function parseJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, bytes, done) => {
    // JSON is UTF-8 (RFC 8259). Bytes that are not would be read as U+FFFD: a value other than the one sent.
    let text: string;
    try {
      text = utf8.decode(bytes as Buffer);
    } catch {
      return done(validation('body', NOT_UTF8_MESSAGE), undefined);
    }
    if (text === '') return done(null, null);
    parseJson(request, text, (err, parsed) => {
      if (err) return done(err, undefined);
      // A NUL (`\u0000`) can be neither stored in a PostgreSQL text column nor passed in an environment
      // variable: refused in every field, on every database, before any route sees it. A lone surrogate
      // (`\ud800`) is no character: both drivers would store U+FFFD in its place, a value other than the one
      // sent. Each walk runs only when the text holds such an escape at all (raw text is decoded UTF-8, which
      // holds neither a lone surrogate nor, JSON being what it is, a raw NUL inside a string).
      const raw = text;
      const nulAt = raw.includes('\\u0000') ? pathOf(parsed, hasNul) : null;
      if (nulAt !== null) return done(validation(nulAt || 'body', NUL_MESSAGE), undefined);
      const surrogateAt = /\\u[dD][89a-fA-F]/.test(raw) ? pathOf(parsed, hasLoneSurrogate) : null;
      if (surrogateAt !== null) return done(validation(surrogateAt || 'body', SURROGATE_MESSAGE), undefined);
      done(null, parsed);
    });
  });
}
