import { connections } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Client,
  createProject,
  createToken,
  dialectName,
  rawConnection,
  signupUser,
  startApp,
  type TestApp,
  upsert,
} from './harness.js';

/**
 * docs/kubernetes.md: the External Secrets Operator (ESO) reads an environment with its generic webhook
 * provider, `GET .../pull?format=json` (D55) with a static `Authorization: Bearer` header, `result.jsonPath:
 * "$"` and `dataFrom: - extract:`. This file sends the request ESO sends, byte for byte, and turns the answer
 * into the Secret's data the way ESO does. What is re-implemented here was read in
 * github.com/external-secrets/external-secrets at cc5bfbc2 (2026-08-08):
 *
 * - providers/v1/webhook/pkg/webhook/webhook.go: GetWebhookData (method "" → GET, the url and headers are Go
 *   templates, the body template is empty), executeRequest (headers added with Header.Add; 404 →
 *   NoSecretError, 304 → NotModifiedError, any other status outside 2xx → "endpoint gave error <status>";
 *   the body read whole), GetSecretMap (json.Unmarshal, jsonpath.Get, a string result parsed again as JSON,
 *   then a map is required and each value goes through esutils.GetByteValueFromMap), GetHTTPClient (a
 *   plain http.Client: no timeout unless `timeout:` is set, Go's default transport).
 * - providers/v1/webhook/webhook.go: GetSecretMap templates result.jsonPath first.
 * - runtime/esutils/utils.go: GetByteValue (string → its bytes, bool → "true"/"false", nil → empty,
 *   float64 → FormatFloat 'f' -1, map/array → json.Marshal), ConvertKeys (Default strategy: every rune
 *   that is not a letter, digit, '-', '.' or '_' becomes '_'), ValidateKeys (empty keys dropped, more than
 *   253 bytes refused).
 * - pkg/controllers/externalsecret/externalsecret_controller_secret.go: handleExtractSecrets (GetSecretMap,
 *   then rewrite or ConvertKeys, ValidateKeys, DecodeMap with strategy None) and GetProviderSecretData (a
 *   NoSecretError skips the source unless deletionPolicy is Retain, the default, which fails the sync).
 */

/** ESO's NoSecretError: the endpoint answered 404 (the secret is gone, deletionPolicy decides). */
class NoSecretError extends Error {}

/**
 * The request Go's net/http writes for ESO's GET (HTTP/1.1, plain http): Host, the default User-Agent, the
 * store's headers in sorted canonical form (Header.Add, then Header.writeSubset), the transport's own
 * `Accept-Encoding: gzip`, and neither Content-Length nor a body (an empty bytes.Reader makes http.NoBody,
 * and a GET with no body sends no length).
 */
function goRequest(url: string, pathAndQuery: string, storeHeaders: Record<string, string>): string {
  const canonical = (key: string) =>
    key
      .split('-')
      .map((part) => part.charAt(0).toUpperCase() + part.slice(1).toLowerCase())
      .join('-');
  const headers = Object.entries(storeHeaders)
    .map(([k, v]) => [canonical(k), v] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}: ${v}\r\n`);
  return [
    `GET ${pathAndQuery} HTTP/1.1\r\n`,
    `Host: ${new URL(url).host}\r\n`,
    'User-Agent: Go-http-client/1.1\r\n',
    ...headers,
    'Accept-Encoding: gzip\r\n',
    '\r\n',
  ].join('');
}

interface RawAnswer {
  statusLine: string;
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** Sends `request` on its own keep-alive connection, as Go's transport does, and reads one answer. */
async function send(c: Client, request: string): Promise<RawAnswer> {
  const conn = rawConnection(c.url);
  conn.write(request);
  try {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const answer = complete(conn.text());
      if (answer) return answer;
      if (Date.now() > deadline) throw new Error(`no complete answer:\n${conn.text()}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    conn.end();
  }
}

function complete(text: string): RawAnswer | null {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers = new Map(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as const),
  );
  const body = text.slice(end + 4);
  const status = Number(statusLine.split(' ')[1]);
  // Go would also read a chunked or gzip body; the server sends neither, which keeps this reader short.
  expect(headers.has('transfer-encoding') || headers.has('content-encoding'), statusLine).toBe(false);
  const length = status === 304 ? 0 : Number(headers.get('content-length'));
  if (Number.isNaN(length)) throw new Error(`no content-length on ${statusLine}`);
  if (Buffer.byteLength(body) < length) return null;
  return { statusLine, status, headers, body };
}

/** executeRequest's status handling: the body, or ESO's error for the status. */
function esoBody(answer: RawAnswer): string {
  if (answer.status === 404) throw new NoSecretError('Secret does not exist');
  if (answer.status === 304) throw new Error('not modified');
  // resp.Status is the status line after the version, e.g. "401 Unauthorized".
  if (answer.status < 200 || answer.status >= 300)
    throw new Error(`endpoint gave error ${answer.statusLine.split(' ').slice(1).join(' ')}`);
  return answer.body;
}

/** esutils.GetByteValue for what json.Unmarshal into `any` can produce. */
function byteValue(v: unknown): Buffer {
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  if (typeof v === 'boolean') return Buffer.from(String(v));
  if (v === null) return Buffer.alloc(0);
  // FormatFloat(f, 'f', -1, 64) is JavaScript's shortest form wherever that has no exponent.
  if (typeof v === 'number' && !/e/i.test(String(v))) return Buffer.from(String(v));
  // A map or array is json.Marshal'ed (sorted keys, HTML-escaped); svcenv never sends one, see the test.
  throw new Error(`value outside this re-implementation: ${JSON.stringify(v)}`);
}

/**
 * ESO's GetSecretMap with `result.jsonPath: "$"`, then handleExtractSecrets with no rewrite and the default
 * conversion and decoding strategies: the Secret's data, key → bytes.
 */
function esoExtract(body: string, jsonPath = '$'): Map<string, Buffer> {
  // PaesslerAG/jsonpath: "$" is the whole document; other paths are not used by docs/kubernetes.md.
  if (jsonPath !== '$') throw new Error('only jsonPath "$" is re-implemented');
  let data: unknown = JSON.parse(body);
  if (typeof data === 'string') data = JSON.parse(data);
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new Error(`failed to get response (wrong type: ${Array.isArray(data) ? '[]interface {}' : typeof data})`);
  const out = new Map<string, Buffer>();
  for (const [key, value] of Object.entries(data)) {
    const converted = key.replace(/[^\p{L}\p{N}._-]/gu, '_');
    if (out.has(converted)) throw new Error(`secret name collision during conversion: ${converted}`);
    out.set(converted, byteValue(value));
  }
  for (const key of out.keys()) {
    if (key.length === 0) out.delete(key);
    else if (Buffer.byteLength(key) > 253) throw new Error(`key has length ${Buffer.byteLength(key)} but max is 253`);
  }
  return out;
}

/** The Secret's data as text, for comparing with the variables. */
const asText = (data: Map<string, Buffer>) => Object.fromEntries([...data].map(([k, v]) => [k, v.toString('utf8')]));

/* biome-ignore-start lint/suspicious/noTemplateCurlyInString: svcenv references, not templates */
const ITEMS = [
  { key: 'LOG_LEVEL', value: 'info', type: 'plain' },
  { key: 'DB_HOST', value: 'db.internal', type: 'plain' },
  { key: 'DB_PASSWORD', value: 'p@ss "w0rd" $HOME \\ 🔑', type: 'secret' },
  { key: 'DATABASE_URL', value: 'postgres://app:${DB_PASSWORD}@${DB_HOST}/app', type: 'secret' },
  { key: 'TLS_CERT', value: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n', type: 'secret' },
  { key: 'GREETING', value: 'héllo ☃ 日本 \u2028', type: 'plain' },
  { key: 'EMPTY', value: '', type: 'plain' },
];
/* biome-ignore-end lint/suspicious/noTemplateCurlyInString: svcenv references, not templates */
const RESOLVED = {
  LOG_LEVEL: 'info',
  DB_HOST: 'db.internal',
  DB_PASSWORD: 'p@ss "w0rd" $HOME \\ 🔑',
  DATABASE_URL: 'postgres://app:p@ss "w0rd" $HOME \\ 🔑@db.internal/app',
  TLS_CERT: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
  GREETING: 'héllo ☃ 日本 \u2028',
  EMPTY: '',
};

describe(`the External Secrets Operator's webhook provider (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  /** A project with ITEMS in prod and the read token docs/kubernetes.md creates: this project, prod only. */
  async function setup() {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt, { name: 'Shop API' });
    await upsert(app, jwt, p.id, ['prod'], ITEMS);
    const tok = await createToken(app, jwt, { name: 'eso-prod', scope: 'read', projectId: p.id, envs: ['prod'] });
    return { jwt, p, tok };
  }

  /** What docs/kubernetes.md's SecretStore makes ESO send, with the token its Secret holds. */
  const esoGet = (path: string, token: string) =>
    send(app, goRequest(app.url, path, { Authorization: `Bearer ${token}`, 'X-Svcenv-Client': 'operator' }));

  it('turns the pull into Secret data equal to the resolved variables, context variables included (D55, D28a)', async () => {
    const { jwt, p, tok } = await setup();
    const answer = await esoGet(`/v1/projects/${p.slug}/envs/prod/pull?format=json`, tok.token);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    // Every value is a JSON string, so GetByteValue's conversions of numbers, booleans or objects never apply.
    expect(Object.values(JSON.parse(answer.body)).every((v) => typeof v === 'string')).toBe(true);
    const data = esoExtract(esoBody(answer));
    expect(asText(data)).toEqual({
      ...RESOLVED,
      SVCENV_PROJECT: p.id,
      SVCENV_ENV: 'prod',
      SVCENV_PROJECT_NAME: 'Shop API',
    });
    // The bytes are the values' UTF-8, as a pod's environment gets them through envFrom.
    expect(data.get('GREETING')).toEqual(Buffer.from(RESOLVED.GREETING, 'utf8'));
    expect(data.get('EMPTY')).toEqual(Buffer.alloc(0));
    // Spec variables rule 7, D18: the header the store sends shows ESO as the workspace's operator.
    const conn = await app.request('GET', '/v1/workspace/connections', { token: jwt, schema: connections });
    expect(conn.body.operator.connected).toBe(true);
  });

  it('leaves the context variables out with metadata=false (spec variables rule 5)', async () => {
    const { p, tok } = await setup();
    const answer = await esoGet(`/v1/projects/${p.id}/envs/prod/pull?format=json&metadata=false`, tok.token);
    expect(asText(esoExtract(esoBody(answer)))).toEqual(RESOLVED);
    // The same answer as the plain pull a person would make with the token.
    const viaFetch = await app.request('GET', `/v1/projects/${p.id}/envs/prod/pull?format=json&metadata=false`, {
      token: tok.token,
    });
    expect(viaFetch.text).toBe(answer.body);
  });

  it('answers a missing environment with 404, which ESO treats as a deleted secret', async () => {
    const { jwt, p, tok } = await setup();
    const everyEnv = await createToken(app, jwt, { scope: 'read', projectId: p.id, envs: ['*'] });
    const unknown = await esoGet(`/v1/projects/${p.slug}/envs/nope/pull?format=json`, everyEnv.token);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).error.code).toBe('NOT_FOUND');
    expect(() => esoBody(unknown)).toThrow(NoSecretError);
    // The environment the store's token was made for, deleted after the Secret was first written.
    expect((await app.request('DELETE', `/v1/projects/${p.id}/envs/prod`, { token: jwt })).status).toBe(204);
    const deleted = await esoGet(`/v1/projects/${p.slug}/envs/prod/pull?format=json`, tok.token);
    expect(deleted.status).toBe(404);
    expect(() => esoBody(deleted)).toThrow(NoSecretError);
  });

  it('answers a revoked token with 401 and a token without the environment with 403, both sync errors for ESO', async () => {
    const { jwt, p, tok } = await setup();
    const path = `/v1/projects/${p.slug}/envs/staging/pull?format=json`;
    const other = await esoGet(path, tok.token);
    expect(other.status).toBe(403);
    expect(JSON.parse(other.body).error.code).toBe('FORBIDDEN');
    expect(() => esoBody(other)).toThrow('endpoint gave error 403 Forbidden');

    expect((await app.request('DELETE', `/v1/tokens/${tok.id}`, { token: jwt })).status).toBe(204);
    const revoked = await esoGet(`/v1/projects/${p.slug}/envs/prod/pull?format=json`, tok.token);
    expect(revoked.status).toBe(401);
    expect(JSON.parse(revoked.body).error.code).toBe('UNAUTHORIZED');
    // Not a NoSecretError: whatever the deletionPolicy, ESO keeps the Secret it wrote last.
    expect(() => esoBody(revoked)).toThrow('endpoint gave error 401 Unauthorized');
    expect(revoked.body).not.toContain(tok.token);
  });

  it('shows where ESO is stricter than svcenv: a key longer than 253 characters fails the whole sync (D24)', async () => {
    const { jwt, p, tok } = await setup();
    const long = `K${'_'.repeat(253)}`;
    await upsert(app, jwt, p.id, ['prod'], [{ key: long, value: 'x', type: 'plain' }]);
    const answer = await esoGet(`/v1/projects/${p.slug}/envs/prod/pull?format=json`, tok.token);
    expect(answer.status).toBe(200);
    expect(() => esoExtract(esoBody(answer))).toThrow('key has length 254 but max is 253');
  });
});
