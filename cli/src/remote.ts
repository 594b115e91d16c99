/** Reads of one environment's variables through the pull endpoint (access tokens only, spec variables rule 8). */
import type { OutputFormat } from '@svcenv/contract';
import { CONTEXT_KEYS as CONTEXT_KEY_LIST } from '@svcenv/contract/constants';
import { parseDotenv } from '@svcenv/contract/dotenv-parse';
import { endpoints } from '@svcenv/contract/endpoints';
import { type Api, ApiError, NetworkError } from './api.js';
import { fs } from './builtins.js';
import { EnvCache, formatAge } from './cache.js';
import type { OfflineSettings } from './config.js';
import { CliError } from './errors.js';
import {
  contextHeader,
  contextKeys,
  projectIdOf,
  renderingOf,
  renderSnapshot,
  type Snapshot,
  snapshotOf,
} from './snapshot.js';

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
  const context = contextKeys(answer.context);
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

/** Which selection of the environment a snapshot holds: all of it, or a D67 subset. */
const selectionOf = (o: PullOptions) => (o.keys ? `keys=${[...o.keys].sort().join(',')}` : 'all');

/**
 * The cache of one (API URL, project, environment, credential), its keys derived once for every pull of
 * that environment in this process (each format, each long-poll of a watch).
 */
export function openCache(
  api: Api,
  o: Pick<PullOptions, 'project' | 'env'>,
  off: OfflineSettings,
  token: string,
): Promise<EnvCache> {
  return EnvCache.open(off.cacheDir, api.baseUrl, o.project, o.env, token);
}

/** The body of `o` rendered from a snapshot, as the server renders it; undefined when it lacks what that needs. */
function fromSnapshot(s: Snapshot, o: PullOptions): Pick<PullAnswer, 'text' | 'context'> | undefined {
  const text = renderSnapshot(s, o);
  return text === undefined ? undefined : { text, context: contextHeader(s, o) };
}

/**
 * D42: a pull through the encrypted cache. The cached ETag of this rendering goes out as If-None-Match and
 * a 304 answers with the cached variables rendered; every 200 or 304 is kept, by the `keep` the answer
 * carries (callers run it). When the server cannot be reached or answers 5xx or 429, the cached variables
 * are used, rendered in the format asked for, if the server confirmed them less than --max-stale ago,
 * with a warning that names the cause and the age; otherwise the error stands. A 401, 403 or 404 deletes
 * the entry. `--offline` makes no request. `cache` is openCache's for the same project and environment.
 */
export async function pullCached(
  api: Api,
  o: PullOptions,
  off: OfflineSettings,
  cache: EnvCache | Promise<EnvCache>,
): Promise<PullAnswer & { keep?: () => Promise<void> }> {
  // The keys are derived (openCache, called just before) while node:fs loads (each ~1-2 ms of a cold
  // start under Bun).
  fs();
  const opened = await cache;
  await opened.load();
  const selection = selectionOf(o);
  const snapshot = opened.get(selection);
  const now = Date.now();
  // What stands in for the server: this selection, or for a subset not cached yet the whole environment,
  // which holds it (the caller selects).
  const standIn = () => {
    for (const s of [snapshot, o.keys ? opened.get('all') : undefined]) {
      const body = s && fromSnapshot(s, o);
      if (s && body) return { s, body };
    }
    return undefined;
  };
  // Rendered only when it stands in: a format the variables cannot take is then the server's 422 (D55).
  const fresh = (c: ReturnType<typeof standIn>) => (c && now - c.s.confirmedAt < off.maxStaleMs ? c : undefined);
  const fromCache = (c: NonNullable<ReturnType<typeof standIn>>, why: string): PullAnswer => ({
    ...c.body,
    etag: c.s.etags[renderingOf(o)],
    fallback: `using the cached copy the server confirmed ${formatAge(now - c.s.confirmedAt)} ago: ${why}`,
  });
  if (off.offline) {
    const cached = standIn();
    const usable = fresh(cached);
    if (usable) return fromCache(usable, '--offline');
    throw new CliError(
      'OFFLINE',
      cached
        ? `the cached copy of this environment is ${formatAge(now - cached.s.confirmedAt)} old, beyond --max-stale`
        : 'no cached copy of this environment (--offline makes no request)',
      'pull once while the server is reachable, or raise --max-stale (SVCENV_MAX_STALE)',
    );
  }
  const sent = snapshot?.etags[renderingOf(o)];
  const held = sent !== undefined && snapshot ? fromSnapshot(snapshot, o) : undefined;
  let got: Awaited<ReturnType<typeof request>>;
  try {
    got = await request(api, o, held ? sent : undefined);
  } catch (err) {
    if (err instanceof ApiError && [401, 403, 404].includes(err.status)) {
      opened.remove();
      throw err;
    }
    const cause = unreachable(err);
    if (cause === undefined) throw err;
    const cached = standIn();
    const usable = fresh(cached);
    if (usable) return fromCache(usable, cause);
    if (cached && err instanceof CliError) {
      // The error stands; its hint says why the cache did not stand in.
      throw new CliError(
        err.code,
        err.message,
        `${err.hint ? `${err.hint}; ` : ''}the cached copy is ${formatAge(now - cached.s.confirmedAt)} old, beyond --max-stale`,
      );
    }
    throw err;
  }
  // A 304 answers with the cached variables, rendered (D29, D42).
  const answer: PullAnswer = got.notModified && held ? { ...got, ...held, context: got.context ?? held.context } : got;
  // Sealed and written when the caller is ready for it: `run` first starts the command.
  return { ...answer, keep: () => keep(opened, o, selection, got, answer.text, now) };
}

/**
 * D43: one long-poll of `wait` seconds for a body other than the one with `etag`: the new answer, or
 * undefined when the server answered 304 (time up, or draining). Each answer refreshes the cache, opened
 * once for the whole watch (openCache).
 */
export async function pullChange(
  api: Api,
  o: PullOptions,
  cache: EnvCache,
  etag: string,
  wait: number,
  signal: AbortSignal,
): Promise<PullAnswer | undefined> {
  let answer: Awaited<ReturnType<typeof request>>;
  try {
    answer = await request(api, o, etag, { wait, signal });
  } catch (err) {
    if (err instanceof ApiError && [401, 403, 404].includes(err.status)) cache.remove();
    throw err;
  }
  await cache.load();
  await keep(cache, o, selectionOf(o), answer, answer.text, Date.now());
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
): Promise<PullAnswer & { notModified: boolean; revision?: number }> {
  const res = await api.fetch(endpoints.pull, {
    params: { id: o.project, env: o.env },
    query: { ...pullQuery(o), wait: poll ? String(poll.wait) : undefined },
    notModified: true,
    headers: etag ? { 'if-none-match': etag } : undefined,
    // A held pull answers within `wait` seconds; SVCENV_TIMEOUT counts from then.
    ...(poll ? { signal: poll.signal, timeoutMs: poll.wait * 1000 + api.timeoutMs } : {}),
  });
  // D44: the revision the body was rendered at.
  const revision = Number(res.headers.get('x-svcenv-revision') ?? Number.NaN);
  const answer = {
    etag: res.headers.get('etag') ?? etag,
    context: res.headers.get('x-svcenv-context') ?? undefined,
    ...(Number.isSafeInteger(revision) ? { revision } : {}),
  };
  if (res.status === 304) return { ...answer, text: '', notModified: true };
  try {
    return { ...answer, text: await res.text(), notModified: false };
  } catch (err) {
    throw api.networkError(err);
  }
}

/**
 * Keeps what the server answered (200: its variables; 304: the cached ones, confirmed when the ETag it
 * confirmed is theirs). A body that cannot be read back exactly is not kept.
 */
async function keep(
  cache: EnvCache,
  o: PullOptions,
  selection: string,
  got: Awaited<ReturnType<typeof request>>,
  text: string,
  confirmedAt: number,
): Promise<void> {
  if (got.etag === undefined) return;
  const previous = cache.get(selection);
  let next: Snapshot | undefined;
  if (got.notModified) {
    if (!previous || previous.etags[renderingOf(o)] !== got.etag) return;
    next = { ...previous, confirmedAt, ...(got.revision === undefined ? {} : { revision: got.revision }) };
  } else {
    next = snapshotOf(
      { rendering: o, env: o.env, body: text, context: got.context, etag: got.etag, revision: got.revision },
      previous,
      confirmedAt,
    );
  }
  if (next) await cache.save(selection, next, projectIdOf(next));
}
