/**
 * D42: what the offline cache keeps of an environment: the variables themselves (the parsed key/value
 * pairs in the server's order, the context variables apart, the ETags the server gave for them and the
 * revision), not one rendering of them. Any format, with or without metadata, is rendered from them with
 * the server's own renderers (contract/src/formats.ts), so a pull from the cache is the body the server
 * would have sent (ADR 0016).
 *
 * A body the server sent is read back in its format and accepted only when rendering what was read gives
 * the same bytes again; a body that does not (a server of another version) is not kept.
 */
import { CONTEXT_KEYS, type ContextKey } from '@svcenv/contract/constants';
import { parseDotenv } from '@svcenv/contract/dotenv-parse';
import { type Entries, FormatUnsupported, k8sSecretName, type OutputFormat, render } from '@svcenv/contract/formats';
import { HINTS } from './api.js';
import { CliError } from './errors.js';

type Pair = [string, string];

/** One selection of an environment (all of it, or a D67 subset) as the server last gave it. */
export interface Snapshot {
  /** The user's variables in the server's order (a subset's in sorted order, as the server renders it). */
  vars: Pair[];
  /** The context variables the server appends with metadata (D28a), in order; absent until one such answer. */
  context?: Pair[];
  /** The k8s Secret's name (D28): from a k8s answer, or from the project's name in the context. */
  k8sName?: string;
  /** X-Svcenv-Revision of the last answer (D44). */
  revision?: number;
  /** Milliseconds since the epoch when the server last confirmed these variables (200 or 304). */
  confirmedAt: number;
  /** The ETag the server gave each rendering (`renderingOf`) of exactly these variables. */
  etags: Record<string, string>;
}

export interface Rendering {
  format: OutputFormat;
  metadata: boolean;
}

export const renderingOf = (r: Rendering) => `${r.format}${r.metadata ? '' : ';no-metadata'}`;

const isContextKey = (k: string): k is ContextKey => (CONTEXT_KEYS as readonly string[]).includes(k);

/** The X-Svcenv-Context header as the context keys it names. */
export function contextKeys(header: string | undefined): Set<string> {
  return new Set(
    (header ?? '')
      .split(',')
      .map((k) => k.trim())
      .filter(isContextKey),
  );
}

/** A body the server rendered, read back as its entries and the Secret's name (k8s); undefined when unreadable. */
function readBody(format: OutputFormat, body: string): { entries: Pair[]; k8sName?: string } | undefined {
  try {
    switch (format) {
      case 'dotenv':
        return { entries: [...parseDotenv(body)] };
      case 'json': {
        const parsed = JSON.parse(body) as unknown;
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
        const entries = Object.entries(parsed);
        return entries.every(([, v]) => typeof v === 'string') ? { entries: entries as Pair[] } : undefined;
      }
      case 'docker':
        return {
          entries: body
            .split('\n')
            .slice(0, -1)
            .map((line): Pair => {
              const eq = line.indexOf('=');
              return [line.slice(0, eq), line.slice(eq + 1)];
            }),
        };
      case 'shell':
        return { entries: readShell(body) };
      case 'k8s':
        return readK8s(body);
    }
  } catch {
    return undefined;
  }
}

/** `export KEY='value'` lines, `'\''` for a quote inside (renderShell's only escape). */
function readShell(body: string): Pair[] {
  const out: Pair[] = [];
  let i = 0;
  while (i < body.length) {
    const m = /^export ([A-Za-z_][A-Za-z0-9_]*)='/.exec(body.slice(i, i + 300));
    if (!m) throw new Error('not an export line');
    i += m[0].length;
    let value = '';
    for (;;) {
      const q = body.indexOf("'", i);
      if (q < 0) throw new Error('unterminated quote');
      value += body.slice(i, q);
      if (body.startsWith("'\\''", q)) {
        value += "'";
        i = q + 4;
        continue;
      }
      i = q + 1;
      break;
    }
    if (body[i] !== '\n') throw new Error('no line end');
    i++;
    out.push([m[1]!, value]);
  }
  return out;
}

function readK8s(body: string): { entries: Pair[]; k8sName: string } | undefined {
  const m = /^apiVersion: v1\nkind: Secret\nmetadata:\n {2}name: (.*)\ntype: Opaque\ndata:( \{\})?\n/.exec(body);
  if (!m) return undefined;
  const lines = body.slice(m[0].length).split('\n').slice(0, -1);
  const entries = lines.map((line): Pair => {
    const at = line.indexOf(': ');
    const data = line.slice(at + 2);
    return [line.slice(2, at), data === '""' ? '' : Buffer.from(data, 'base64').toString('utf8')];
  });
  return { entries, k8sName: m[1]! };
}

const samePairs = (a: readonly Pair[] | undefined, b: readonly Pair[] | undefined) =>
  a === b ||
  (a !== undefined &&
    b !== undefined &&
    a.length === b.length &&
    a.every(([k, v], i) => b[i]![0] === k && b[i]![1] === v));

/**
 * The snapshot after the server answered `rendering` with 200: the body read back, the context variables
 * named by its header, what the previous snapshot knew that this answer does not carry (the context
 * variables after a `metadata=false` answer, the k8s name), and the ETags of the previous one kept while
 * the variables are the same. Undefined when the body cannot be read back exactly.
 */
export function snapshotOf(
  answer: {
    rendering: Rendering;
    env: string;
    body: string;
    context?: string | undefined;
    etag: string;
    revision?: number | undefined;
  },
  previous: Snapshot | undefined,
  confirmedAt: number,
): Snapshot | undefined {
  const { rendering } = answer;
  const read = readBody(rendering.format, answer.body);
  if (!read) return undefined;
  const named = rendering.metadata ? contextKeys(answer.context) : new Set<string>();
  // The server appends its context variables after the user's (D28a).
  const vars = read.entries.filter(([k]) => !named.has(k));
  const context = rendering.metadata ? read.entries.filter(([k]) => named.has(k)) : previous?.context;
  const projectName = context?.find(([k]) => k === 'SVCENV_PROJECT_NAME')?.[1];
  const k8sName =
    read.k8sName ?? (projectName === undefined ? previous?.k8sName : k8sSecretName(projectName, answer.env));
  const next: Snapshot = {
    vars,
    ...(context ? { context } : {}),
    ...(k8sName === undefined ? {} : { k8sName }),
    ...(answer.revision === undefined ? {} : { revision: answer.revision }),
    confirmedAt,
    etags: {},
  };
  if (renderSnapshot(next, rendering) !== answer.body) return undefined;
  const same =
    previous !== undefined &&
    samePairs(previous.vars, vars) &&
    samePairs(previous.context, context) &&
    previous.k8sName === k8sName;
  next.etags = { ...(same ? previous.etags : {}), [renderingOf(rendering)]: answer.etag };
  return next;
}

/**
 * The body the server renders for these variables in `rendering` (D28a: the context variables last, unless
 * `metadata=false`); undefined when the snapshot lacks what it needs (the context variables, the k8s
 * name). A value the format cannot carry is the server's FORMAT_UNSUPPORTED (D55), with its message.
 */
export function renderSnapshot(s: Snapshot, rendering: Rendering): string | undefined {
  const entries: Entries | undefined = rendering.metadata ? s.context && [...s.vars, ...s.context] : s.vars;
  if (!entries) return undefined;
  if (rendering.format === 'k8s' && s.k8sName === undefined) return undefined;
  try {
    return render(rendering.format, s.k8sName ?? '', entries);
  } catch (err) {
    if (err instanceof FormatUnsupported)
      // Worded as the server's 422 reads (api.ts).
      throw new CliError('FORMAT_UNSUPPORTED', `${err.message} (field: ${err.key})`, HINTS.FORMAT_UNSUPPORTED);
    throw err;
  }
}

/** The X-Svcenv-Context header of a rendering from the snapshot. */
export function contextHeader(s: Snapshot, rendering: Rendering): string | undefined {
  return rendering.metadata && s.context?.length ? s.context.map(([k]) => k).join(', ') : undefined;
}

/** The project's id, as the context variable SVCENV_PROJECT gave it (D28a). */
export function projectIdOf(s: Snapshot | undefined): string | undefined {
  return s?.context?.find(([k]) => k === 'SVCENV_PROJECT')?.[1];
}
