/**
 * D61: the CLI without a stored token. With SVCENV_IDENTITY (or `--identity`), the platform's identity
 * token (a JWT) is exchanged for a short-lived access token (D60, `POST /v1/auth/oidc`), which is kept
 * sealed in the D42 cache directory until 60 s before it expires and never written to the config file.
 * Neither the JWT nor the access token ever appears in a message.
 */
import { Api, ApiError, NetworkError } from './api.js';
import { fs } from './builtins.js';
import { PullCache } from './cache.js';
import { type Env, resolveOfflineSettings } from './config.js';
import { CliError } from './errors.js';
import { writeSecretFile } from './files.js';

/** Where a pod finds its service-account token. */
const K8S_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';
/** An identity's id (D60), as the server writes ids. */
const IDENTITY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** D61: an exchanged token is used until this long before it expires, then exchanged again. */
const RENEW_BEFORE_MS = 60_000;

export interface IdentityToken {
  token: string;
  expiresAt: string;
  identity: string;
  /** It came from the cache (not kept in it): a 401 then means the identity changed since, not a refusal. */
  cached?: boolean;
  /**
   * What D42's pull cache is keyed by in place of the token (not kept in the cache either): the identity and
   * the local secret, so that the cached pulls outlive each exchanged token and serve `--offline` and an
   * unreachable server as they do for a stored token. Undefined when there is no usable cache directory.
   */
  cacheKey?: string;
}

const nonEmpty = (v: string | undefined) => (v && v.trim() !== '' ? v.trim() : undefined);

function readTokenFile(file: string, what: string): string {
  let text: string;
  try {
    text = fs().readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError('CONFIG', `cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code}`);
  }
  const jwt = text.trim();
  if (!jwt) throw new CliError('CONFIG', `${what} ${file} is empty`);
  return jwt;
}

/**
 * The platform's JWT, from the first source that has one (D61's order). `SVCENV_TEST_K8S_TOKEN_FILE`
 * moves the Kubernetes file for the tests only: a pod's token is always at the fixed path.
 */
async function platformJwt(env: Env, apiUrl: string): Promise<string> {
  const direct = nonEmpty(env.SVCENV_OIDC_TOKEN);
  if (direct) return direct;
  const file = nonEmpty(env.SVCENV_OIDC_TOKEN_FILE);
  if (file) return readTokenFile(file, 'SVCENV_OIDC_TOKEN_FILE');
  const ghUrl = nonEmpty(env.ACTIONS_ID_TOKEN_REQUEST_URL);
  if (ghUrl) return githubActionsJwt(ghUrl, env, apiUrl);
  const k8s = nonEmpty(env.SVCENV_TEST_K8S_TOKEN_FILE) ?? K8S_TOKEN_FILE;
  if (fs().existsSync(k8s)) return readTokenFile(k8s, 'the Kubernetes service-account token');
  throw new CliError(
    'CONFIG',
    'SVCENV_IDENTITY is set but no identity token was found',
    'set SVCENV_OIDC_TOKEN or SVCENV_OIDC_TOKEN_FILE, run in GitHub Actions with `permissions: id-token: write`, or in a Kubernetes pod',
  );
}

/** GitHub Actions' OIDC endpoint: `&audience=` added to its URL, its bearer token, and `{value}` back. */
async function githubActionsJwt(raw: string, env: Env, apiUrl: string): Promise<string> {
  const bearer = nonEmpty(env.ACTIONS_ID_TOKEN_REQUEST_TOKEN);
  if (!bearer) {
    throw new CliError(
      'CONFIG',
      'ACTIONS_ID_TOKEN_REQUEST_URL is set but ACTIONS_ID_TOKEN_REQUEST_TOKEN is not',
      'give the job `permissions: id-token: write`',
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError('CONFIG', 'ACTIONS_ID_TOKEN_REQUEST_URL is not a URL');
  }
  url.searchParams.set('audience', nonEmpty(env.SVCENV_OIDC_AUDIENCE) ?? apiUrl);
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { authorization: `bearer ${bearer}`, accept: 'application/json', 'user-agent': 'svcenv-cli' },
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new CliError('NETWORK', `cannot get the GitHub Actions identity token (${(err as Error).name})`);
  }
  const body = (await res.json().catch(() => undefined)) as { value?: unknown } | undefined;
  if (!res.ok || typeof body?.value !== 'string' || body.value === '') {
    throw new CliError(
      'NETWORK',
      `GitHub Actions did not give an identity token (HTTP ${res.status})`,
      'give the job `permissions: id-token: write`',
    );
  }
  return body.value;
}

/**
 * The cache's key material: a random secret kept beside the entries (0600), so a sealed entry copied
 * elsewhere does not open; the identity id and API URL alone are nobody's secret.
 */
function localSecret(dir: string): string {
  const file = `${dir}/identity.key`;
  try {
    const existing = fs().readFileSync(file, 'utf8').trim();
    if (existing.length >= 64) return existing;
  } catch {
    // first use: made below
  }
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex');
  const { chmodSync, mkdirSync } = fs();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  writeSecretFile(file, secret);
  return secret;
}

async function cacheEntry(
  env: Env,
  apiUrl: string,
  identity: string,
): Promise<{ entry: PullCache; cacheKey: string } | undefined> {
  try {
    const { cacheDir } = resolveOfflineSettings({}, env);
    const secret = localSecret(cacheDir);
    const entry = await PullCache.open(cacheDir, apiUrl, 'identity', identity, secret);
    return { entry, cacheKey: `identity ${identity} ${secret}` };
  } catch {
    return undefined; // no writable cache: every command exchanges
  }
}

/** The server did not answer the exchange (D42's causes): an expired cached token still opens the cached pulls. */
const unanswered = (err: unknown) =>
  err instanceof NetworkError || (err instanceof ApiError && (err.status >= 500 || err.status === 429));

/**
 * The access token for `identity`: the cached one while it has more than 60 s left, else a new exchange.
 * `offline` (`--offline`, which makes no request) takes the cached one however old, as does an exchange the
 * server does not answer: the command then falls back on its cached pull (D42) or fails as it would.
 */
export async function identityToken(
  env: Env,
  apiUrl: string,
  identity: string,
  offline = false,
): Promise<IdentityToken> {
  // A JWT or a token pasted in place of the id is neither sent nor repeated.
  if (!IDENTITY_ID.test(identity)) {
    throw new CliError(
      'CONFIG',
      'the identity (--identity or SVCENV_IDENTITY) is not an identity id; it is not repeated',
      "use the identity's id (a UUID) from the dashboard",
    );
  }
  const api = new Api(apiUrl, undefined, resolveOfflineSettings({}, env).timeoutMs);
  const cache = await cacheEntry(env, api.baseUrl, identity);
  const entry = cache?.entry;
  const saved = (await entry?.read()) as Partial<IdentityToken> | undefined;
  const cached =
    typeof saved?.token === 'string' && typeof saved.expiresAt === 'string' && saved.identity === identity
      ? { token: saved.token, expiresAt: saved.expiresAt, identity, cached: true, cacheKey: cache?.cacheKey }
      : undefined;
  if (cached && (offline || Date.parse(cached.expiresAt) - RENEW_BEFORE_MS > Date.now())) return cached;
  if (offline) {
    throw new CliError(
      'OFFLINE',
      'no access token of this identity is cached',
      'run the command once without --offline',
    );
  }
  const jwt = await platformJwt(env, api.baseUrl);
  const { operations: ops } = await import('./schemas.js');
  let answer: { token: string; expiresAt: string };
  try {
    answer = await api.json(ops.oidcLogin, { body: { identity, token: jwt } });
  } catch (err) {
    if (cached && unanswered(err)) return cached;
    if (err instanceof ApiError) {
      entry?.remove();
      throw new ApiError(
        err.status,
        err.code,
        err.message,
        err.status === 401 || err.status === 404 || err.status === 400
          ? "check SVCENV_IDENTITY and that the identity's issuer, audience, subject and claims match this platform's token"
          : err.hint,
      );
    }
    throw err;
  }
  const out: IdentityToken = { token: answer.token, expiresAt: answer.expiresAt, identity };
  await entry?.write(out).catch(() => undefined);
  return { ...out, cacheKey: cache?.cacheKey };
}

/**
 * D60 refuses an issued token at once when its identity is updated or deleted: the cached copy is then
 * forgotten, so that the next exchange is not put off until it expires.
 */
export async function forgetIdentityToken(env: Env, apiUrl: string, identity: string): Promise<void> {
  (await cacheEntry(env, new Api(apiUrl, undefined).baseUrl, identity))?.entry.remove();
}
