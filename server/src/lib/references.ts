/**
 * `${...}` references (spec "Reference syntax", D25, D26, D49), resolved server-side at read time; stored values
 * stay literal.
 *
 *   ${VAR}               the value of VAR in the same environment; a missing VAR is the empty string (D25)
 *   ${env.VAR}           VAR in environment `env` of the same project (D49)
 *   ${slug.env.VAR}      VAR in environment `env` of the workspace's project with that slug (D49, D48)
 *   ${...:-fallback}     the fallback when the variable is missing or empty; it may itself hold references
 *   $${                  a literal `${`
 *
 * A cycle, a chain longer than 64 links or a resolved value over 1 MiB cannot resolve, counted across
 * environments and projects; neither can a reference to an environment the resolver's `lookup` refuses
 * (missing, or not readable by the reader: REFERENCE_FORBIDDEN, whose message says neither). This module does
 * no I/O: the caller's `lookup` answers an environment's variables, or null.
 */
export const MAX_CHAIN = 64;
export const MAX_RESOLVED_BYTES = 1024 * 1024;

/** Where a reference points: `project` is a slug (null: the referring project), `env` null: the same environment. */
export interface RefTarget {
  project: string | null;
  env: string | null;
  key: string;
  /** The reference as written between `${` and `}` (without the fallback), for messages. */
  text: string;
}

type Part = string | { target: RefTarget; fallback: Part[] | null };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ENV = /^[a-z0-9_-]{1,64}$/;
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** One to three dot-separated segments; checked below against the key, environment and slug rules. */
const SEGMENTS = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+){0,2}/;

/** The target `${text}` names, or null when it is not a reference (then it stays literal text). */
function targetOf(text: string): RefTarget | null {
  const segs = text.split('.');
  const key = segs[segs.length - 1]!;
  if (!NAME.test(key)) return null;
  if (segs.length === 1) return { project: null, env: null, key, text };
  const env = segs[segs.length - 2]!;
  if (!ENV.test(env)) return null;
  if (segs.length === 2) return { project: null, env, key, text };
  // D58: a slug never has the shape of a uuid; such a segment is not a slug.
  const project = segs[0]!;
  if (!SLUG.test(project) || UUID.test(project)) return null;
  return { project, env, key, text };
}

/** Parses a template from `start`; stops at an unmatched `}` when `nested`. Returns parts and end index. */
function parse(text: string, start: number, nested: boolean): { parts: Part[]; end: number; closed: boolean } {
  const parts: Part[] = [];
  let lit = '';
  let i = start;
  while (i < text.length) {
    const ch = text[i]!;
    if (nested && ch === '}') {
      if (lit) parts.push(lit);
      return { parts, end: i + 1, closed: true };
    }
    if (ch === '$' && text.startsWith('$${', i)) {
      lit += '${';
      i += 3;
      continue;
    }
    if (ch === '$' && text[i + 1] === '{') {
      // Key (256) + environment (64) + slug (63) + two dots, and one more to see where it ends.
      const written = SEGMENTS.exec(text.slice(i + 2, i + 2 + 390))?.[0];
      const target = written ? targetOf(written) : null;
      if (written && target) {
        const after = i + 2 + written.length;
        if (text[after] === '}') {
          if (lit) parts.push(lit);
          lit = '';
          parts.push({ target, fallback: null });
          i = after + 1;
          continue;
        }
        if (text.startsWith(':-', after)) {
          const inner = parse(text, after + 2, true);
          if (inner.closed) {
            if (lit) parts.push(lit);
            lit = '';
            parts.push({ target, fallback: inner.parts });
            i = inner.end;
            continue;
          }
        }
      }
    }
    lit += ch;
    i++;
  }
  if (lit) parts.push(lit);
  return { parts, end: i, closed: false };
}

const templateCache = new Map<string, Part[]>();

export function parseTemplate(value: string): Part[] {
  let parts = templateCache.get(value);
  if (!parts) {
    parts = parse(value, 0, false).parts;
    if (templateCache.size > 50_000) templateCache.clear();
    templateCache.set(value, parts);
  }
  return parts;
}

/** True when the value contains at least one reference (then the listing shows resolvedValue). */
export function containsReference(value: string): boolean {
  return value.includes('${') && parseTemplate(value).some((p) => typeof p !== 'string');
}

export interface SourceVar {
  /** null: a stored value that does not decrypt; a reference that reaches it cannot resolve. */
  value: string | null;
  secret: boolean;
}

/** One environment as the resolver sees it. */
export interface SourceEnv {
  /** Unique per environment: cycles and shared sub-resolutions are found by it. */
  id: string;
  /** The environment's project, as the `lookup` understands it (relative `${env.VAR}` references). */
  project: string;
  vars: ReadonlyMap<string, SourceVar>;
}

/**
 * The environment a reference names, seen from `from`: its variables, or null when it does not exist or the
 * reader may not read it (the two are not told apart, D49). Asked at most once per distinct target.
 */
export type EnvLookup = (
  from: SourceEnv,
  target: { project: string | null; env: string },
) => SourceEnv | null | Promise<SourceEnv | null>;

export type ResolutionCode = 'CIRCULAR_REFERENCE' | 'REFERENCE_LIMIT' | 'REFERENCE_FORBIDDEN' | 'DECRYPT_FAILED';

export type Resolution =
  | {
      ok: true;
      value: string;
      /** D26: the ids of the environments whose secret values the result depends on (empty: none). */
      secretsFrom: ReadonlySet<string>;
      /** Links in the longest chain below. */
      height: number;
    }
  | {
      ok: false;
      code: ResolutionCode;
      message: string;
      /** REFERENCE_FORBIDDEN: the reference refused, and the variable whose value holds it (D67's messages). */
      refused?: { target: RefTarget; from: { env: string; project: string; key: string } };
    };

export interface ResolveOptions {
  /** Only these variables of the root (and what they reach) are resolved; default: every one. */
  keys?: readonly string[];
  /**
   * D67: told of each reference, among those rendered, to a variable its environment lacks and written without
   * a fallback (D25 renders it empty; validation refuses it). `from` is the environment whose `key` holds it.
   */
  onMissing?: (from: SourceEnv, key: string, target: RefTarget, found: SourceEnv) => void;
}

const NONE: ReadonlySet<string> = new Set();

/**
 * Resolves every variable of `root`, following references into the environments `lookup` answers (only those
 * a variable actually reaches, and each once). A variable of `root` whose value is null resolves to a failure
 * (its presenter shows it apart).
 */
export async function resolveAll(
  root: SourceEnv,
  lookup: EnvLookup,
  options: ResolveOptions = {},
): Promise<Map<string, Resolution>> {
  const done = new Map<string, Resolution>();
  const onStack = new Set<string>();
  const envs = new Map<string, Promise<SourceEnv | null>>();

  const envOf = (from: SourceEnv, target: RefTarget): SourceEnv | null | Promise<SourceEnv | null> => {
    if (target.env === null) return from;
    const address =
      target.project === null ? `p\0${from.project}\0${target.env}` : `s\0${target.project}\0${target.env}`;
    let found = envs.get(address);
    if (!found) {
      found = Promise.resolve(lookup(from, { project: target.project, env: target.env }));
      envs.set(address, found);
    }
    return found;
  };

  const resolveKey = async (env: SourceEnv, key: string, depth: number, via: string): Promise<Resolution> => {
    const node = `${env.id}\0${key}`;
    const cached = done.get(node);
    if (cached?.ok && depth + cached.height > MAX_CHAIN) return chainLimit(key);
    if (cached) return cached;
    const source = env.vars.get(key)!;
    if (source.value === null) {
      return {
        ok: false,
        code: 'DECRYPT_FAILED',
        message: `${key}: references "${via}", whose value cannot be decrypted`,
      };
    }
    if (onStack.has(node)) {
      return { ok: false, code: 'CIRCULAR_REFERENCE', message: `${key}: circular reference detected` };
    }
    if (depth > MAX_CHAIN) return chainLimit(key);
    if (!source.value.includes('${')) {
      const r: Resolution = {
        ok: true,
        value: source.value,
        secretsFrom: source.secret ? new Set([env.id]) : NONE,
        height: 0,
      };
      done.set(node, r);
      return r;
    }
    onStack.add(node);
    const secretsFrom = new Set<string>(source.secret ? [env.id] : []);
    let height = 0;
    let failure: Resolution | null = null;
    const render = async (parts: Part[]): Promise<string> => {
      let out = '';
      for (const part of parts) {
        if (failure) return out;
        if (typeof part === 'string') {
          out += part;
          continue;
        }
        const { target } = part;
        let sub = '';
        const found = await envOf(env, target);
        if (found === null) {
          failure = {
            ok: false,
            code: 'REFERENCE_FORBIDDEN',
            message: `${key}: a reference names an environment that does not exist or that this reader may not read`,
            refused: { target, from: { env: env.id, project: env.project, key } },
          };
          return out;
        }
        if (found.vars.has(target.key)) {
          const r = await resolveKey(found, target.key, depth + 1, target.text);
          if (!r.ok) {
            failure = r;
            return out;
          }
          sub = r.value;
          for (const id of r.secretsFrom) secretsFrom.add(id);
          height = Math.max(height, r.height + 1);
        } else if (!part.fallback) {
          options.onMissing?.(env, key, target, found);
        }
        if (sub === '' && part.fallback) sub = await render(part.fallback);
        out += sub;
        if (out.length > MAX_RESOLVED_BYTES && Buffer.byteLength(out) > MAX_RESOLVED_BYTES) {
          failure = { ok: false, code: 'REFERENCE_LIMIT', message: `${key}: resolved value larger than 1 MiB` };
          return out;
        }
      }
      return out;
    };
    const value = await render(parseTemplate(source.value));
    onStack.delete(node);
    const result: Resolution = failure ?? {
      ok: true,
      value,
      secretsFrom: secretsFrom.size ? secretsFrom : NONE,
      height,
    };
    // A failure seen from inside a cycle is re-evaluated for each entry point, so each key reports itself.
    if (result.ok || depth === 0) done.set(node, result.ok ? result : withKey(result, key));
    return result;
  };

  const out = new Map<string, Resolution>();
  const keys = options.keys ? options.keys.filter((k) => root.vars.has(k)) : [...root.vars.keys()];
  for (const key of keys.sort()) {
    const node = `${root.id}\0${key}`;
    if (!done.has(node)) done.set(node, withKey(await resolveKey(root, key, 0, key), key));
    out.set(key, done.get(node)!);
  }
  return out;
}

function chainLimit(key: string): Resolution {
  return { ok: false, code: 'REFERENCE_LIMIT', message: `${key}: reference chain longer than ${MAX_CHAIN} links` };
}

function withKey(r: Resolution, key: string): Resolution {
  if (r.ok) return r;
  const reason = r.code === 'CIRCULAR_REFERENCE' ? 'circular reference detected' : r.message.replace(/^[^:]*: /, '');
  return { ...r, message: `${key}: ${reason}` };
}
