import type { ErrorBody } from '@svcenv/contract';
import { SIGNED_IN_COOKIE } from '@svcenv/contract/constants';
import { type Endpoint, endpoints, expandPath } from '@svcenv/contract/endpoints';
import type { OperationOf, RequestOf, ResponseOf } from '@svcenv/contract/operations';
import { messageInWords } from './lib/error-words.js';

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
    void fetch(endpoints.logout.path, { method: 'POST', headers: CSRF, credentials: 'same-origin' }).catch(
      () => undefined,
    );
  }
  for (const l of listeners) l();
}

/** At start: whether this browser already has a session (another tab's login, a reload). */
export async function restoreSession(): Promise<boolean> {
  // The server sets this script-readable marker (no secret) beside its httpOnly session cookie: without it there
  // is no session to restore, and asking would only log a 401 in the console.
  if (!document.cookie.split('; ').includes(`${SIGNED_IN_COOKIE}=1`)) return false;
  try {
    const res = await fetch(endpoints.getSession.path, {
      headers: CSRF,
      credentials: 'same-origin',
      cache: 'no-store',
    });
    if (res.ok) setToken('cookie');
    // An expired or ended session: forget the marker, so the next visit does not ask again.
    // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is missing from some browsers we serve
    else document.cookie = `${SIGNED_IN_COOKIE}=; Max-Age=0; Path=/; SameSite=Strict`;
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

type Query = Record<string, string | string[] | undefined>;

/**
 * One request of an operation: its `params` (each an encoded path segment), `query` and `body`, as its schemas
 * accept them. `auth: false` sends no CSRF header, so the session cookie does not count (the calls that start
 * a session); `headers` adds e.g. `If-Match` for a check-and-set write (D46).
 */
export type CallInput<O extends Endpoint> = RequestOf<O> & { auth?: boolean; headers?: Record<string, string> };

/** The input argument: optional when the operation needs no parameters and no body. */
type CallArgs<E extends Endpoint> =
  object extends CallInput<OperationOf<E>> ? [input?: CallInput<OperationOf<E>>] : [input: CallInput<OperationOf<E>>];

/** A successful answer's body; nothing for a 204. */
export type Answer<E extends Endpoint> =
  ResponseOf<OperationOf<E>> extends null ? undefined : ResponseOf<OperationOf<E>>;

function buildUrl(path: string, query?: Query): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) qs.append(k, item);
  }
  const s = qs.toString();
  return `${path}${s ? `?${s}` : ''}`;
}

/** Told of every 403 with the request's path: the page that showed a control may learn its access changed. */
const refusedListeners = new Set<(path: string, error: ApiError) => void>();

/**
 * Calls `listener` with the path of each request the server refuses with 403 (an access that changed since
 * the page loaded: a grant ended, a permission was lowered). Returns the unsubscribe.
 */
export function onRefused(listener: (path: string, error: ApiError) => void): () => void {
  refusedListeners.add(listener);
  return () => {
    refusedListeners.delete(listener);
  };
}

async function send(endpoint: Endpoint, input: CallInput<Endpoint> = {}): Promise<Response> {
  const headers: Record<string, string> = { ...input.headers, ...(input.auth !== false ? CSRF : {}) };
  // A POST without input still sends `{}` (the server's empty-body schemas take either).
  const payload = input.body ?? (endpoint.method === 'POST' ? {} : undefined);
  let body: string | undefined;
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(payload);
  }
  let res: Response;
  try {
    // same-origin: the session cookie goes with the request, and a login's answer may set it.
    res = await fetch(buildUrl(expandPath(endpoint, input.params ?? {}), input.query as Query | undefined), {
      method: endpoint.method,
      headers,
      body,
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The server could not be reached. Check your connection and try again.');
  }
  if (res.ok) return res;
  const err = await errorOf(res);
  // A session that expired or was ended elsewhere (password change, D9): back to the login screen. A 401 can
  // also be a wrong two-factor code (D12), so the session itself is asked before it is dropped.
  if (res.status === 401 && input.auth !== false && jwt) void checkSession(jwt);
  if (res.status === 403) {
    const path = expandPath(endpoint, input.params ?? {});
    for (const l of refusedListeners) l(path, err);
  }
  throw err;
}

/** A refused answer as an ApiError: the contract's `{error:{code,message,field}}`, or a stand-in for it. */
async function errorOf(res: Response): Promise<ApiError> {
  let parsed: Partial<ErrorBody> & { message?: string } = {};
  try {
    parsed = (await res.json()) as typeof parsed;
  } catch {
    // Non-JSON error (a proxy in front, for example).
  }
  const e = parsed.error;
  return e && typeof e === 'object'
    ? new ApiError(res.status, e.code, e.message, e.field, parsed)
    : new ApiError(
        res.status,
        typeof e === 'string' ? e : 'SERVER',
        parsed.message ?? `Request failed (${res.status})`,
      );
}

async function checkSession(token: string): Promise<void> {
  try {
    const res = await fetch(endpoints.getSession.path, {
      headers: CSRF,
      credentials: 'same-origin',
      cache: 'no-store',
    });
    if (res.status === 401 && jwt === token) setToken(null);
  } catch {
    // Offline: keep the session; the next request tells.
  }
}

export const api = {
  /** One operation of the contract (`endpoints.listVars`, ...), typed by its schemas. */
  async call<E extends Endpoint>(endpoint: E, ...[input]: CallArgs<E>): Promise<Answer<E>> {
    const res = await send(endpoint, input as CallInput<Endpoint> | undefined);
    return (res.status === 204 ? undefined : await res.json()) as Answer<E>;
  },
  /**
   * The URL of a GET that answers with a redirect to another site (D63's sign-in: to the identity provider),
   * for the page to navigate to, once the server has been seen to answer it with a redirect. The browser
   * cannot follow such a redirect inside fetch (the provider is another origin), and navigating blindly would
   * leave the person on a raw JSON page when the server refuses; so the request is made first without
   * following (`redirect: 'manual'`): a redirect is the go-ahead, anything else throws its ApiError.
   */
  async redirectTarget<E extends Endpoint>(endpoint: E, ...[input]: CallArgs<E>): Promise<string> {
    const i = (input ?? {}) as CallInput<Endpoint>;
    const url = buildUrl(expandPath(endpoint, i.params ?? {}), i.query as Query | undefined);
    let res: Response;
    try {
      res = await fetch(url, { redirect: 'manual', credentials: 'same-origin', cache: 'no-store' });
    } catch {
      throw new ApiError(0, 'NETWORK', 'The server could not be reached. Check your connection and try again.');
    }
    if (res.type === 'opaqueredirect' || res.ok) return url;
    throw await errorOf(res);
  },
  /** A file download (export): the body and the server's file name. */
  async download<E extends Endpoint>(endpoint: E, ...[input]: CallArgs<E>): Promise<{ blob: Blob; filename: string }> {
    const res = await send(endpoint, input as CallInput<Endpoint> | undefined);
    const cd = res.headers.get('content-disposition') ?? '';
    const filename = /filename="?([^";]+)"?/.exec(cd)?.[1] ?? 'export.env';
    return { blob: await res.blob(), filename };
  },
};

/** What went wrong, in words: field paths and limit names become words (lib/error-words.ts). */
export function errorMessage(e: unknown): string {
  if (e instanceof ApiError) return messageInWords(e.message, e.field);
  return e instanceof Error ? e.message : String(e);
}
