/** Reads of one environment's variables through the pull endpoint (access tokens only, spec variables rule 8). */
import type { OutputFormat } from '@svcenv/contract';
import { CONTEXT_KEYS as CONTEXT_KEY_LIST } from '@svcenv/contract/constants';
import { parseDotenv } from '@svcenv/contract/dotenv-parse';
import { endpoints } from '@svcenv/contract/endpoints';
import { type Api, ApiError, NetworkError } from './api.js';
import { fs } from './builtins.js';
import { type CacheEntry, formatAge, PullCache } from './cache.js';
import type { OfflineSettings } from './config.js';
import { CliError } from './errors.js';

/** D28a: the synthetic context variables pull appends unless metadata=false. */
export const CONTEXT_KEYS: ReadonlySet<string> = new Set(CONTEXT_KEY_LIST);

/**
 * The pull endpoint's formats (D28, D55) and the reader each is for (docs/formats.md). A record over the
 * contract's type, so a format added there fails the type check here until the CLI names it; the type is
 * imported alone so the CLI's cold path stays without zod (ADR 0001-cli).
 */
export type PullFormat = OutputFormat;
export const FORMAT_READERS: Record<PullFormat, string> = {
  dotenv: 'dotenv libraries; what run, push and diff read (the default)',
  k8s: 'a Kubernetes Secret manifest for kubectl apply -f',
  json: 'one JSON object, for programs',
  shell: 'export lines to source (. ./file) or eval',
  docker: 'docker run --env-file (no multi-line values)',
};
export const PULL_FORMATS = Object.keys(FORMAT_READERS) as PullFormat[];

export interface PullOptions {
  project: string;
  env: string;
  metadata: boolean;
  format: PullFormat;
  /** D67: only these variables (run --only), so a broken value elsewhere does not fail the pull. */
  keys?: readonly string[] | undefined;
}

const pullQuery = (o: PullOptions) => ({
  metadata: o.metadata ? undefined : ('false' as const),
  keys: o.keys?.join(','),
  // dotenv is the server's default; leaving it out keeps the URL the same as before.
  format: o.format === 'dotenv' ? undefined : o.format,
});

export async function pullVars(api: Api, o: Omit<PullOptions, 'format'>): Promise<Map<string, string>> {
  return (await pullVarsWithContext(api, o)).vars;
}

/**
 * The variables and which of them are the server's context variables (its `X-Svcenv-Context` header): a
 * user variable of the same name wins (D28a), and is then the user's value, not context. A server without
 * the header names none, so callers treat every value as the user's.
 */
export async function pullVarsWithContext(
  api: Api,
  o: Omit<PullOptions, 'format'>,
): Promise<{ vars: Map<string, string>; context: Set<string> }> {
  const res = await api.fetch(endpoints.pull, {
    params: { id: o.project, env: o.env },
    query: pullQuery({ ...o, format: 'dotenv' }),
  });
  return readPulled({ text: await res.text(), context: res.headers.get('x-svcenv-context') ?? undefined });
}

/** A pulled dotenv body as variables, and which of them are the server's context variables. */
export function readPulled(answer: Pick<PullAnswer, 'text' | 'context'>): {
  vars: Map<string, string>;
  context: Set<string>;
} {
  const context = new Set(
    (answer.context ?? '')
      .split(',')
      .map((k) => k.trim())
      .filter((k) => CONTEXT_KEYS.has(k)),
  );
  try {
    return { vars: parseDotenv(answer.text), context };
  } catch (err) {
    throw new CliError('SERVER', `the server's dotenv could not be read (${(err as Error).message})`);
  }
}

/** A pull's answer (D42: from the server, or from the cache when the server is away). */
export interface PullAnswer {
  text: string;
  etag: string | undefined;
  /** The X-Svcenv-Context header (cached with the body). */
  context: string | undefined;
  /** Set when the body is the cached copy: the warning to print (cause and age). */
  fallback?: string;
}

/** Which rendering of the pull a cache entry holds. */
const variantOf = (o: PullOptions) =>
  `${o.format}${o.metadata ? '' : ';no-metadata'}${o.keys ? `;keys=${[...o.keys].sort().join(',')}` : ''}`;

/**
 * The cache file of one (API URL, project, environment, credential), its keys derived once for every pull
 * of that environment in this process (each format, each long-poll of a watch).
 */
export function openCache(
  api: Api,
  o: Pick<PullOptions, 'project' | 'env'>,
  off: OfflineSettings,
  token: string,
): Promise<PullCache> {
  return PullCache.open(off.cacheDir, api.baseUrl, o.project, o.env, token);
}

/**
 * D42: a pull through the encrypted cache. The cached ETag goes out as If-None-Match and a 304 answers
 * with the cached body; every 200 or 304 is kept, by the `keep` the answer carries (callers run it). When the server cannot be reached or answers 5xx or
 * 429, the cached body is used if the server confirmed it less than --max-stale ago, with a warning that
 * names the cause and the age; otherwise the error stands. A 401, 403 or 404 deletes the entry.
 * `--offline` makes no request. `cache` is openCache's for the same project and environment.
 */
export async function pullCached(
  api: Api,
  o: PullOptions,
  off: OfflineSettings,
  cache: PullCache | Promise<PullCache>,
): Promise<PullAnswer & { keep?: () => Promise<void> }> {
  // The keys are derived (openCache, called just before) while node:fs loads (each ~1-2 ms of a cold
  // start under Bun).
  fs();
  const opened = await cache;
  const entries = await opened.read();
  const variant = variantOf(o);
  // A subset not cached yet falls back on the whole environment's copy, which holds it (the caller selects).
  const cached = entries[variant] ?? (o.keys ? entries[variantOf({ ...o, keys: undefined })] : undefined);
  const now = Date.now();
  const fresh = cached && now - cached.confirmedAt < off.maxStaleMs ? cached : undefined;
  const fromCache = (entry: CacheEntry, why: string): PullAnswer => ({
    text: entry.body,
    etag: entry.etag,
    context: entry.context,
    fallback: `using the cached copy the server confirmed ${formatAge(now - entry.confirmedAt)} ago: ${why}`,
  });
  if (off.offline) {
    if (fresh) return fromCache(fresh, '--offline');
    throw new CliError(
      'OFFLINE',
      cached
        ? `the cached copy of this environment is ${formatAge(now - cached.confirmedAt)} old, beyond --max-stale`
        : 'no cached copy of this environment (--offline makes no request)',
      'pull once while the server is reachable, or raise --max-stale (SVCENV_MAX_STALE)',
    );
  }
  let answer: PullAnswer;
  try {
    const got = await request(api, o, cached?.etag);
    // A 304 answers with the cached body (D29, D42).
    answer = got.notModified && cached ? { ...got, text: cached.body, context: got.context ?? cached.context } : got;
  } catch (err) {
    if (err instanceof ApiError && [401, 403, 404].includes(err.status)) {
      opened.remove();
      throw err;
    }
    const cause = unreachable(err);
    if (cause === undefined) throw err;
    if (fresh) return fromCache(fresh, cause);
    if (cached && err instanceof CliError) {
      // The error stands; its hint says why the cache did not stand in.
      throw new CliError(
        err.code,
        err.message,
        `${err.hint ? `${err.hint}; ` : ''}the cached copy is ${formatAge(now - cached.confirmedAt)} old, beyond --max-stale`,
      );
    }
    throw err;
  }
  // Sealed and written when the caller is ready for it: `run` first starts the command.
  return { ...answer, keep: () => keep(opened, entries, variant, answer, now) };
}

/**
 * D43: one long-poll of `wait` seconds for a body other than the one with `etag`: the new answer, or
 * undefined when the server answered 304 (time up, or draining). Each answer refreshes the cache, opened
 * once for the whole watch (openCache).
 */
export async function pullChange(
  api: Api,
  o: PullOptions,
  cache: PullCache,
  etag: string,
  wait: number,
  signal: AbortSignal,
): Promise<PullAnswer | undefined> {
  let answer: PullAnswer & { notModified: boolean };
  try {
    answer = await request(api, o, etag, { wait, signal });
  } catch (err) {
    if (err instanceof ApiError && [401, 403, 404].includes(err.status)) cache.remove();
    throw err;
  }
  const entries = await cache.read();
  const variant = variantOf(o);
  const held = entries[variant];
  if (!answer.notModified) await keep(cache, entries, variant, answer, Date.now());
  // 304: the body we hold is confirmed, and the file's entry with it when it holds that body.
  else if (held?.etag === etag) await keep(cache, entries, variant, { ...answer, text: held.body }, Date.now());
  return answer.notModified ? undefined : answer;
}

/** D42: why a failure may fall back to the cache (unreachable, 5xx, 429), or undefined when it may not. */
export function unreachable(err: unknown): string | undefined {
  if (err instanceof NetworkError) return err.message;
  if (err instanceof ApiError && (err.status >= 500 || err.status === 429)) {
    return `the server answered ${err.status} (${err.code})`;
  }
  return undefined;
}

/** One pull; with `etag`, a conditional one (the answer's `text` is then empty on a 304). */
async function request(
  api: Api,
  o: PullOptions,
  etag: string | undefined,
  poll?: { wait: number; signal: AbortSignal },
): Promise<PullAnswer & { notModified: boolean }> {
  const res = await api.fetch(endpoints.pull, {
    params: { id: o.project, env: o.env },
    query: { ...pullQuery(o), wait: poll ? String(poll.wait) : undefined },
    notModified: true,
    headers: etag ? { 'if-none-match': etag } : undefined,
    // A held pull answers within `wait` seconds; SVCENV_TIMEOUT counts from then.
    ...(poll ? { signal: poll.signal, timeoutMs: poll.wait * 1000 + api.timeoutMs } : {}),
  });
  const answer = {
    etag: res.headers.get('etag') ?? etag,
    context: res.headers.get('x-svcenv-context') ?? undefined,
  };
  if (res.status === 304) return { ...answer, text: '', notModified: true };
  try {
    return { ...answer, text: await res.text(), notModified: false };
  } catch (err) {
    throw api.networkError(err);
  }
}

/** Keeps an answer the server gave (200 or 304); a cache that cannot be written is no reason to fail a pull. */
async function keep(
  cache: PullCache,
  entries: Record<string, CacheEntry>,
  variant: string,
  answer: PullAnswer,
  confirmedAt: number,
): Promise<void> {
  if (answer.etag === undefined) return;
  entries[variant] = {
    etag: answer.etag,
    body: answer.text,
    ...(answer.context === undefined ? {} : { context: answer.context }),
    confirmedAt,
  };
  try {
    await cache.write(entries);
  } catch {
    // read-only home, full disk: the pull itself succeeded
  }
}
