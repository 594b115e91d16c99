import type { ErrorBody } from '@svcenv/contract';

/**
 * The one way the dashboard talks to the server: same-origin `/v1` over fetch. The session is the server's
 * httpOnly cookie (ADR 0014): no script, this one included, can read it, and every tab of the browser shares
 * it. Each request carries `X-Svcenv-CSRF`, without which the server does not accept the cookie. What this
 * module keeps is only whether the tab believes it is signed in.
 */
const CSRF = { 'x-svcenv-csrf': '1' } as const;

let jwt: string | null = null;
const listeners = new Set<() => void>();

/** A marker that the tab is signed in (the session itself is the cookie), or null. */
export function getToken(): string | null {
  return jwt;
}

/**
 * Signed in (any session answer: the server set the cookie with it) or out (`null`: the cookie is cleared
 * too, so another tab or a reload does not find the session again).
 */
export function setToken(token: string | null): void {
  const was = jwt;
  jwt = token;
  if (token === null && was !== null) {
    void fetch('/v1/auth/logout', { method: 'POST', headers: CSRF, credentials: 'same-origin' }).catch(() => undefined);
  }
  for (const l of listeners) l();
}

/** At start: whether this browser already has a session (another tab's login, a reload). */
export async function restoreSession(): Promise<boolean> {
  try {
    const res = await fetch('/v1/auth/session', { headers: CSRF, credentials: 'same-origin', cache: 'no-store' });
    if (res.ok) setToken('cookie');
    return res.ok;
  } catch {
    return false;
  }
}

export function onTokenChange(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** An error answered by the API: its code, message and the offending field (spec "Errors"). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    /** The answer's JSON body: D67's `unresolved` list rides on it. */
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | string[] | undefined>;
  /** Send this credential instead of the session's (verify-mfa has none). */
  auth?: boolean;
  raw?: boolean;
  /** Extra request headers: `If-Match` for a check-and-set write (D46). */
  headers?: Record<string, string>;
}

function buildUrl(path: string, query?: RequestOptions['query']): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) qs.append(k, item);
  }
  const s = qs.toString();
  return `/v1${path}${s ? `?${s}` : ''}`;
}

async function send(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...opts.headers, ...(opts.auth !== false ? CSRF : {}) };
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  let res: Response;
  try {
    // same-origin: the session cookie goes with the request, and a login's answer may set it.
    res = await fetch(buildUrl(path, opts.query), {
      method,
      headers,
      body,
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The server could not be reached. Check your connection and try again.');
  }
  if (res.ok) return res;
  let parsed: Partial<ErrorBody> & { message?: string } = {};
  try {
    parsed = (await res.json()) as typeof parsed;
  } catch {
    // Non-JSON error (a proxy in front, for example).
  }
  const e = parsed.error;
  const err =
    e && typeof e === 'object'
      ? new ApiError(res.status, e.code, e.message, e.field, parsed)
      : new ApiError(
          res.status,
          typeof e === 'string' ? e : 'SERVER',
          parsed.message ?? `Request failed (${res.status})`,
        );
  // A session that expired or was ended elsewhere (password change, D9): back to the login screen. A 401 can
  // also be a wrong two-factor code (D12), so the session itself is asked before it is dropped.
  if (res.status === 401 && opts.auth !== false && jwt) void checkSession(jwt);
  throw err;
}

async function checkSession(token: string): Promise<void> {
  try {
    const res = await fetch('/v1/auth/session', { headers: CSRF, credentials: 'same-origin', cache: 'no-store' });
    if (res.status === 401 && jwt === token) setToken(null);
  } catch {
    // Offline: keep the session; the next request tells.
  }
}

export const api = {
  async get<T>(path: string, query?: RequestOptions['query']): Promise<T> {
    return (await send('GET', path, { query })).json() as Promise<T>;
  },
  async post<T>(path: string, body?: unknown, opts: RequestOptions = {}): Promise<T> {
    const res = await send('POST', path, { ...opts, body: body ?? {} });
    return (res.status === 204 ? undefined : await res.json()) as T;
  },
  async put<T>(path: string, body: unknown, opts: RequestOptions = {}): Promise<T> {
    return (await send('PUT', path, { ...opts, body })).json() as Promise<T>;
  },
  async patch<T>(path: string, body: unknown): Promise<T> {
    const res = await send('PATCH', path, { body });
    return (res.status === 204 ? undefined : await res.json()) as T;
  },
  async del(path: string): Promise<void> {
    await send('DELETE', path);
  },
  /** A file download (export): the body and the server's file name. */
  async download(path: string, query: RequestOptions['query']): Promise<{ blob: Blob; filename: string }> {
    const res = await send('GET', path, { query });
    const cd = res.headers.get('content-disposition') ?? '';
    const filename = /filename="?([^";]+)"?/.exec(cd)?.[1] ?? 'export.env';
    return { blob: await res.blob(), filename };
  },
};

export function errorMessage(e: unknown): string {
  if (e instanceof ApiError) return e.field ? `${e.message} (${e.field})` : e.message;
  return e instanceof Error ? e.message : String(e);
}

/**
 * The one place a request path is built: every interpolated value is an encoded path segment, so
 * path`/projects/${id}/envs/${env}` never lets a name or key reach into the URL's structure.
 */
export function path(strings: TemplateStringsArray, ...segments: string[]): string {
  return strings.reduce((out, s, i) => out + s + (i < segments.length ? encodeURIComponent(segments[i]!) : ''), '');
}
