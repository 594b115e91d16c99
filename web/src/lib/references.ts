/**
 * The same-environment references of a value, read the way the server reads them (server/src/lib/references.ts,
 * D25): `${KEY}`, `${KEY:-fallback}` (the fallback may hold references itself) and `$${` as a literal.
 * `references` lists the same-environment ones; a reference with a dot (`${env.KEY}`, `${slug.env.KEY}`, D49)
 * reaches elsewhere: `referenceTargets` below lists all three forms, and `completions` offers them as typed.
 */
export interface Reference {
  key: string;
  /** `${KEY:-...}`: a missing KEY uses the fallback instead of the empty string. */
  withFallback: boolean;
}

/** Every same-environment reference in `value`, in order, each key once (the three-form parser's `${KEY}`s). */
export function references(value: string): Reference[] {
  return referenceTargets(value)
    .filter((r) => r.env === null && r.project === null)
    .map(({ key, withFallback }) => ({ key, withFallback }));
}

/** The references of `value` that name no key of the environment (`keys`): they resolve to empty (D25). */
export function missingReferences(value: string, keys: ReadonlySet<string>): Reference[] {
  return references(value).filter((r) => !keys.has(r.key));
}

/*
 * D49: every reference with where it points. `${env.KEY}` names another environment of the project and
 * `${slug.env.KEY}` an environment of the workspace's project with that slug; the segments follow the
 * server's rules (server/src/lib/references.ts): a key, an environment name, a slug (never a uuid's shape).
 */
const KEY_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ENV_RE = /^[a-z0-9_-]{1,64}$/;
const SLUG_RE = /^[a-z0-9][a-z0-9-]{0,62}$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SEGMENTS = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+){0,2}/;

/** Where a reference points: `project` a slug (null: this project), `env` null: this environment. */
export interface RefTarget {
  project: string | null;
  env: string | null;
  key: string;
  /** As written between `${` and `}` (without the fallback). */
  text: string;
  withFallback: boolean;
}

/** The target `${text}` names, or null when the server would keep it as literal text. */
export function refTarget(text: string): Omit<RefTarget, 'withFallback'> | null {
  const segs = text.split('.');
  const key = segs[segs.length - 1] ?? '';
  if (!KEY_RE.test(key) || segs.length > 3) return null;
  if (segs.length === 1) return { project: null, env: null, key, text };
  const env = segs[segs.length - 2] ?? '';
  if (!ENV_RE.test(env)) return null;
  if (segs.length === 2) return { project: null, env, key, text };
  const project = segs[0] ?? '';
  if (!SLUG_RE.test(project) || UUID_RE.test(project)) return null;
  return { project, env, key, text };
}

function parseTargets(
  text: string,
  start: number,
  nested: boolean,
  out: RefTarget[],
): { end: number; closed: boolean } {
  let i = start;
  while (i < text.length) {
    const ch = text[i];
    if (nested && ch === '}') return { end: i + 1, closed: true };
    if (ch === '$' && text.startsWith('$${', i)) {
      i += 3;
      continue;
    }
    if (ch === '$' && text[i + 1] === '{') {
      const written = SEGMENTS.exec(text.slice(i + 2, i + 2 + 390))?.[0];
      const target = written ? refTarget(written) : null;
      if (written && target) {
        const after = i + 2 + written.length;
        if (text[after] === '}') {
          out.push({ ...target, withFallback: false });
          i = after + 1;
          continue;
        }
        if (text.startsWith(':-', after)) {
          const inner: RefTarget[] = [];
          const r = parseTargets(text, after + 2, true, inner);
          if (r.closed) {
            out.push({ ...target, withFallback: true }, ...inner);
            i = r.end;
            continue;
          }
        }
      }
    }
    i++;
  }
  return { end: i, closed: false };
}

/** Every reference of `value` in the three forms, fallbacks included, in order, each target once. */
export function referenceTargets(value: string): RefTarget[] {
  if (!value.includes('${')) return [];
  const all: RefTarget[] = [];
  parseTargets(value, 0, false, all);
  const seen = new Set<string>();
  return all.filter((r) => !seen.has(r.text) && seen.add(r.text));
}

/** The references that reach another environment or project (`${env.KEY}`, `${slug.env.KEY}`). */
export const crossReferences = (value: string) => referenceTargets(value).filter((r) => r.env !== null);

/** How a target reads on screen: `staging.DB_HOST`, `shared-infra/prod.DB_HOST`. */
export function targetLabel(t: Pick<RefTarget, 'project' | 'env' | 'key'>): string {
  if (t.env === null) return t.key;
  return t.project === null ? `${t.env}.${t.key}` : `${t.project}/${t.env}.${t.key}`;
}

/**
 * The `${` being typed at `caret`: where its text starts and what has been typed so far, or null when the
 * caret is not inside an unclosed reference (a `$${` literal does not count).
 */
export function openReference(value: string, caret: number): { start: number; prefix: string } | null {
  const before = value.slice(0, caret);
  const at = before.lastIndexOf('${');
  if (at < 0 || before[at - 1] === '$') return null;
  const prefix = before.slice(at + 2);
  if (!/^[A-Za-z0-9_.-]*$/.test(prefix) || prefix.split('.').length > 3) return null;
  return { start: at + 2, prefix };
}

/** What completion can offer: this environment's keys, other readable environments, other projects. */
export interface CompletionSources {
  keys: readonly string[];
  /** Other environments of this project the user can read. */
  envs: readonly string[];
  /** Other projects with the environments the user can read in them. */
  projects: readonly { slug: string; envs: readonly string[] }[];
  /** Key lists loaded so far, by `env` or `slug.env`. */
  loaded: ReadonlyMap<string, readonly string[]>;
}

export interface Completion {
  /** The text that replaces what was typed after `${`. */
  insert: string;
  /** True: a complete reference (a `}` follows); false: a prefix to continue from (`staging.`). */
  done: boolean;
}

/**
 * The completions for `prefix` (what follows `${`), and the key list that has to be loaded to offer more
 * (`env` or `slug.env`, the part before the last dot), if it is not loaded yet. Keys only, never values.
 */
export function completions(prefix: string, src: CompletionSources): { items: Completion[]; load: string[] } {
  const segs = prefix.split('.');
  const last = (segs.at(-1) ?? '').toLowerCase();
  const starts = (s: string) => s.toLowerCase().startsWith(last);
  const items: Completion[] = [];
  const load: string[] = [];
  const keysOf = (scope: string) => {
    const keys = src.loaded.get(scope);
    if (!keys) load.push(scope);
    for (const k of keys ?? []) if (starts(k)) items.push({ insert: `${scope}.${k}`, done: true });
  };
  if (segs.length === 1) {
    for (const k of src.keys) if (starts(k)) items.push({ insert: k, done: true });
    for (const e of src.envs) if (starts(e)) items.push({ insert: `${e}.`, done: false });
    for (const p of src.projects)
      if (p.envs.length > 0 && starts(p.slug)) items.push({ insert: `${p.slug}.`, done: false });
  } else if (segs.length === 2) {
    const first = segs[0] ?? '';
    if (src.envs.includes(first)) keysOf(first);
    const p = src.projects.find((x) => x.slug === first);
    for (const e of p?.envs ?? []) if (starts(e)) items.push({ insert: `${first}.${e}.`, done: false });
  } else {
    const p = src.projects.find((x) => x.slug === segs[0]);
    if (p?.envs.includes(segs[1] ?? '')) keysOf(`${segs[0]}.${segs[1]}`);
  }
  return { items, load };
}
