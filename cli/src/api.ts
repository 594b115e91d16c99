/**
 * The HTTP client: one request function, API errors turned into CliError with the API's code (D37a)
 * and a hint. Bodies of error responses are the server's, which never hold values; the token is sent
 * only in the Authorization header and never appears in a message.
 */
import type { z } from 'zod';
import { checkApiUrl } from './config.js';
import { CliError } from './errors.js';

/* biome-ignore-start lint/suspicious/noTemplateCurlyInString: literal reference syntax */
const HINTS: Record<string, string> = {
  UNAUTHORIZED:
    'check the access token (`svcenv login --token ...` or SVCENV_TOKEN); pull accepts access tokens, not dashboard sessions',
  FORBIDDEN: 'the token lacks access to this project or environment (push needs a write-scope token)',
  NOT_FOUND: 'check --project (see `svcenv projects`) and --env',
  CIRCULAR_REFERENCE: 'fix the ${...} references of that variable in the dashboard',
  REFERENCE_LIMIT: 'shorten the ${...} reference chain of that variable',
  RATE_LIMIT: 'wait a minute and try again',
};
/* biome-ignore-end lint/suspicious/noTemplateCurlyInString: literal reference syntax */

export interface RequestOptions {
  method?: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** Send the access token (default true). The release endpoints need none (D39). */
  auth?: boolean;
}

export class Api {
  readonly baseUrl: string;

  constructor(
    apiUrl: string,
    private readonly token: string | undefined,
  ) {
    this.baseUrl = checkApiUrl(apiUrl);
  }

  url(path: string, query?: Record<string, string | undefined>): URL {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    return url;
  }

  async fetch(path: string, opts: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { 'user-agent': 'svcenv-cli' };
    if (opts.auth !== false && this.token) headers.authorization = `Bearer ${this.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(this.url(path, opts.query), {
        method: opts.method ?? 'GET',
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: AbortSignal.timeout(60_000),
      });
    } catch (err) {
      // Node's fetch puts the system error code on `cause`, Bun's on the error itself.
      const e = err as { cause?: { code?: string }; code?: string; name?: string };
      const cause = e.cause?.code ?? e.code ?? e.name;
      throw new CliError(
        'NETWORK',
        `cannot reach ${this.baseUrl} (${cause})`,
        'check SVCENV_API_URL (or the URL saved by `svcenv login --api-url`), and that the server is running',
      );
    }
    if (!res.ok) throw await apiError(res);
    return res;
  }

  async text(path: string, opts?: RequestOptions): Promise<string> {
    return (await this.fetch(path, opts)).text();
  }

  async json<T extends z.ZodType>(schema: T, path: string, opts?: RequestOptions): Promise<z.infer<T>> {
    const res = await this.fetch(path, opts);
    const parsed = schema.safeParse(await res.json().catch(() => undefined));
    if (!parsed.success) {
      throw new CliError(
        'SERVER',
        `unexpected response from ${path}`,
        'is the API URL a svcenv server of a matching version?',
      );
    }
    return parsed.data;
  }
}

async function apiError(res: Response): Promise<CliError> {
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
  return new CliError(code, message, HINTS[code]);
}

export const pathOf = {
  projects: () => '/v1/projects',
  pull: (project: string, env: string) =>
    `/v1/projects/${encodeURIComponent(project)}/envs/${encodeURIComponent(env)}/pull`,
  vars: (project: string, env: string) =>
    `/v1/projects/${encodeURIComponent(project)}/envs/${encodeURIComponent(env)}/vars`,
  bulkUpsert: (project: string) => `/v1/projects/${encodeURIComponent(project)}/vars`,
  latest: () => '/v1/cli/latest',
};
