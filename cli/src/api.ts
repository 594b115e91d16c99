/**
 * The HTTP client: one request function, API errors turned into CliError with the API's code (D37a)
 * and a hint. Bodies of error responses are the server's, which never hold values; the token is sent
 * only in the Authorization header and never appears in a message.
 */
import { type Endpoint, expandPath } from '@svcenv/contract/endpoints';
import type { Operation, OperationOf, RequestOf, ResponseOf } from '@svcenv/contract/operations';
import { checkApiUrl } from './config.js';
import { CliError } from './errors.js';

/* biome-ignore-start lint/suspicious/noTemplateCurlyInString: literal reference syntax */
/** The hint printed under an API error of each code. */
export const HINTS: Record<string, string> = {
  UNAUTHORIZED:
    "check the access token; make one on the dashboard's Tokens page, then `svcenv login --token -` (or --token, or SVCENV_TOKEN)",
  FORBIDDEN: 'the token lacks access to this project or environment (push needs a write-scope token)',
  NOT_FOUND: 'check --project (see `svcenv projects`) and --env',
  CIRCULAR_REFERENCE: 'fix the ${...} references of that variable in the dashboard',
  REFERENCE_LIMIT: 'shorten the ${...} reference chain of that variable',
  REFERENCE_FORBIDDEN:
    'a ${env.KEY} reference of that variable names an environment that does not exist (a typo?) or that this token cannot read; fix it with `svcenv vars set` (which checks references), or use `svcenv run --only` to pull only the keys you need',
  FORMAT_UNSUPPORTED:
    'that value cannot be written in this format (docker env-files hold no line breaks); use --format shell, json or dotenv, or change the value',
  RATE_LIMIT: 'wait a minute and try again',
  PRECONDITION_FAILED:
    'the environment changed on the server since it was compared; run `svcenv diff` to see what changed, then push again',
};
/* biome-ignore-end lint/suspicious/noTemplateCurlyInString: literal reference syntax */

export interface RequestOptions {
  method?: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** Send the access token (default: unless the endpoint is public, as the release endpoints are, D39). */
  auth?: boolean;
  headers?: Record<string, string>;
  /** Return a 304 answer instead of treating it as an error (conditional pulls, D29/D42). */
  notModified?: boolean;
  /** Milliseconds before the request counts as unanswered (default: the client's timeout). */
  timeoutMs?: number;
  /** Ends the request early (watch mode stopping on SIGINT/SIGTERM). */
  signal?: AbortSignal;
}

/** One request of an operation: its params, query and body as its schemas take them, and how to send it. */
export type CallOptions<O extends Endpoint> = RequestOf<O> & Omit<RequestOptions, 'method' | 'query' | 'body'>;
/** The options argument: optional when the operation needs no parameters and no body. */
type CallArgs<O extends Endpoint> = object extends CallOptions<O> ? [opts?: CallOptions<O>] : [opts: CallOptions<O>];

/** The client's default time for an answer: 60 s, or SVCENV_TIMEOUT for pull and run (D42). */
export const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * The server could not be reached or did not answer in time (refused, DNS failure, reset, timeout). `reason`
 * names what happened, for D42's warning; the message is the one printed when nothing falls back.
 */
export class NetworkError extends CliError {
  constructor(
    baseUrl: string,
    readonly reason: string,
  ) {
    super(
      'NETWORK',
      `cannot reach ${baseUrl} (${reason})`,
      'check SVCENV_API_URL (or the URL saved by `svcenv login --api-url`), and that the server is running',
    );
  }
}

/** The server answered with an error status; `status` decides D42's fallback (5xx, 429) and eviction (401, 403, 404). */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    hint?: string,
    /** The answer's JSON body (D67's `unresolved` list rides on it). */
    readonly body?: unknown,
  ) {
    super(code, message, hint);
  }
}

export class Api {
  readonly baseUrl: string;

  constructor(
    apiUrl: string,
    private readonly token: string | undefined,
    readonly timeoutMs: number = DEFAULT_TIMEOUT_MS,
  ) {
    this.baseUrl = checkApiUrl(apiUrl);
  }

  url(path: string, query?: Record<string, string | undefined>): URL {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    return url;
  }

  /** One operation, by its endpoint entry (contract/src/endpoints.ts): the answer, whatever its body. */
  async fetch<E extends Endpoint>(endpoint: E, ...[opts]: CallArgs<OperationOf<E>>): Promise<Response> {
    return (await this.send(endpoint, opts)).res;
  }

  private async send(endpoint: Endpoint, opts: object = {}): Promise<{ path: string; res: Response }> {
    const { params, query, ...rest } = opts as CallOptions<Endpoint> & { query?: RequestOptions['query'] };
    const path = expandPath(endpoint, params ?? {});
    const res = await this.fetchPath(path, { auth: endpoint.auth !== 'none', ...rest, method: endpoint.method, query });
    return { path, res };
  }

  /** A request to a path the server gave (a release asset's URL), or an operation's once filled in. */
  async fetchPath(path: string, opts: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { 'user-agent': 'svcenv-cli', ...opts.headers };
    if (opts.auth !== false && this.token) headers.authorization = `Bearer ${this.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      res = await fetch(this.url(path, opts.query), {
        method: opts.method ?? 'GET',
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout,
      });
    } catch (err) {
      throw this.networkError(err, timeoutMs);
    }
    if (res.status === 304 && opts.notModified) return res;
    if (!res.ok) throw await apiError(res);
    return res;
  }

  /**
   * A failed fetch (or a failed read of its body) as the error to print. An abort asked for by the caller
   * is passed on as it is; the timeout is named by its length.
   */
  networkError(err: unknown, timeoutMs: number = this.timeoutMs): unknown {
    // Node's fetch puts the system error code on `cause`, Bun's on the error itself.
    const e = err as { cause?: { code?: string }; code?: string | number; name?: string };
    if (e.name === 'AbortError') return err;
    if (e.name === 'TimeoutError') return new NetworkError(this.baseUrl, `no answer within ${timeoutMs / 1000} s`);
    const code = e.cause?.code ?? (typeof e.code === 'string' ? e.code : undefined) ?? e.name;
    return new NetworkError(this.baseUrl, String(code));
  }

  /** One operation's JSON answer, checked against its success schema. */
  async json<O extends Operation>(op: O, ...args: CallArgs<O>): Promise<ResponseOf<O>> {
    return (await this.jsonWithHeaders(op, ...args)).body;
  }

  /** `json`, with the answer's headers (push reads X-Svcenv-Revision, D44/D46). */
  async jsonWithHeaders<O extends Operation>(
    op: O,
    ...[opts]: CallArgs<O>
  ): Promise<{ body: ResponseOf<O>; headers: Headers }> {
    const { path, res } = await this.send(op, opts);
    const schema = Object.entries(op.responses ?? {}).find(([status]) => status.startsWith('2'))?.[1];
    const parsed = schema?.safeParse(await res.json().catch(() => undefined));
    if (!parsed?.success) {
      throw new CliError(
        'SERVER',
        `unexpected response from ${path}`,
        'is the API URL a svcenv server of a matching version?',
      );
    }
    return { body: parsed.data as ResponseOf<O>, headers: res.headers };
  }
}

async function apiError(res: Response): Promise<ApiError> {
  const body = (await res.json().catch(() => undefined)) as
    | { error?: { code?: string; message?: string; field?: string } | string; message?: string }
    | undefined;
  let code = `HTTP_${res.status}`;
  let message = res.statusText || 'request failed';
  if (body && typeof body.error === 'object' && body.error) {
    code = body.error.code ?? code;
    message = body.error.message ?? message;
    if (body.error.field) message += ` (field: ${body.error.field})`;
  } else if (body && typeof body.error === 'string') {
    // The flat pull reference error (spec variables rule 4).
    code = body.error;
    message = body.message ?? message;
  }
  return new ApiError(res.status, code, message, HINTS[code], body);
}
