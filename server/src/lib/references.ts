/**
 * `${VAR}` references (spec "Reference syntax", D25, D26), resolved server-side at read time; stored values
 * stay literal.
 *
 *   ${VAR}             the value of VAR in the same environment; a missing VAR is the empty string (D25)
 *   ${VAR:-fallback}   the fallback when VAR is missing or empty; the fallback may itself hold references
 *   $${                a literal `${`
 *
 * A cycle, a chain longer than 64 links or a resolved value over 1 MiB cannot resolve.
 */
export const MAX_CHAIN = 64;
export const MAX_RESOLVED_BYTES = 1024 * 1024;

type Part = string | { ref: string; fallback: Part[] | null };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

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
      const name = NAME.exec(text.slice(i + 2, i + 2 + 257))?.[0];
      if (name) {
        const after = i + 2 + name.length;
        if (text[after] === '}') {
          if (lit) parts.push(lit);
          lit = '';
          parts.push({ ref: name, fallback: null });
          i = after + 1;
          continue;
        }
        if (text.startsWith(':-', after)) {
          const inner = parse(text, after + 2, true);
          if (inner.closed) {
            if (lit) parts.push(lit);
            lit = '';
            parts.push({ ref: name, fallback: inner.parts });
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

function hasRef(parts: Part[]): boolean {
  return parts.some((p) => typeof p !== 'string');
}

/** True when the value contains at least one `${VAR}` reference (then the listing shows resolvedValue). */
export function containsReference(value: string): boolean {
  return value.includes('${') && hasRef(parseTemplate(value));
}

export interface SourceVar {
  value: string;
  secret: boolean;
}

export type Resolution =
  | { ok: true; value: string; usedSecret: boolean /** links in the longest chain below */; height: number }
  | { ok: false; code: 'CIRCULAR_REFERENCE' | 'REFERENCE_LIMIT'; message: string };

/**
 * Resolves every variable of one environment. `usedSecret` is true when the result depends on the value
 * of a secret variable (D26: masked listings then show `***`).
 */
export function resolveAll(vars: ReadonlyMap<string, SourceVar>): Map<string, Resolution> {
  const done = new Map<string, Resolution>();
  const onStack = new Set<string>();

  const resolveKey = (key: string, depth: number): Resolution => {
    const cached = done.get(key);
    if (cached?.ok && depth + cached.height > MAX_CHAIN) return chainLimit(key);
    if (cached) return cached;
    const source = vars.get(key)!;
    if (onStack.has(key)) {
      return { ok: false, code: 'CIRCULAR_REFERENCE', message: `${key}: circular reference detected` };
    }
    if (depth > MAX_CHAIN) return chainLimit(key);
    if (!source.value.includes('${') && !source.value.includes('$${')) {
      const r: Resolution = { ok: true, value: source.value, usedSecret: source.secret, height: 0 };
      done.set(key, r);
      return r;
    }
    onStack.add(key);
    let usedSecret = source.secret;
    let height = 0;
    let failure: Resolution | null = null;
    const render = (parts: Part[]): string => {
      let out = '';
      for (const part of parts) {
        if (failure) return out;
        if (typeof part === 'string') {
          out += part;
          continue;
        }
        let sub = '';
        if (vars.has(part.ref)) {
          const r = resolveKey(part.ref, depth + 1);
          if (!r.ok) {
            failure = r;
            return out;
          }
          sub = r.value;
          usedSecret ||= r.usedSecret;
          height = Math.max(height, r.height + 1);
        }
        if (sub === '' && part.fallback) sub = render(part.fallback);
        out += sub;
        if (out.length > MAX_RESOLVED_BYTES && Buffer.byteLength(out) > MAX_RESOLVED_BYTES) {
          failure = { ok: false, code: 'REFERENCE_LIMIT', message: `${key}: resolved value larger than 1 MiB` };
          return out;
        }
      }
      return out;
    };
    const value = render(parseTemplate(source.value));
    onStack.delete(key);
    const result: Resolution = failure ?? { ok: true, value, usedSecret, height };
    // A failure seen from inside a cycle is re-evaluated for each entry point, so each key reports itself.
    if (result.ok || depth === 0) done.set(key, result.ok ? result : withKey(result, key));
    return result;
  };

  for (const key of [...vars.keys()].sort()) {
    if (!done.has(key)) done.set(key, withKey(resolveKey(key, 0), key));
  }
  return done;
}

function chainLimit(key: string): Resolution {
  return { ok: false, code: 'REFERENCE_LIMIT', message: `${key}: reference chain longer than ${MAX_CHAIN} links` };
}

function withKey(r: Resolution, key: string): Resolution {
  if (r.ok) return r;
  const reason = r.code === 'CIRCULAR_REFERENCE' ? 'circular reference detected' : r.message.replace(/^[^:]*: /, '');
  return { ...r, message: `${key}: ${reason}` };
}
