/**
 * D52: /metrics in Prometheus text behind METRICS_TOKEN, on SQLite and PostgreSQL: what an operator needs to
 * watch, and nothing a label must not carry (values, key names, tokens).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';

const METRICS_TOKEN = 'metrics-token-for-the-test-0123456789';

describe(`metrics (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ env: { METRICS_TOKEN } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const scrape = async () => {
    const res = await app.request('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return res.text;
  };
  /** The value of one sample line, or 0 when the series is absent. */
  const sample = (text: string, series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : 0;
  };

  it('counts requests, pulls and 304s, failed logins and 429s, times audit commits, and reads jobs', async () => {
    const { jwt, email } = await signupUser(app);
    const p = await createProject(app, jwt);
    const SECRET = 'metric-canary-secret-value';
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'CANARY_KEY_NAME', value: SECRET, type: 'secret' }]);
    const token = (await createToken(app, jwt, { projectId: p.id })).token;
    const pullPath = `/v1/projects/${p.id}/envs/dev/pull`;
    const first = await app.request('GET', pullPath, { token });
    const etag = first.headers.get('etag')!;
    await app.request('GET', pullPath, { token, headers: { 'if-none-match': etag } });
    for (let i = 0; i < 11; i++) {
      await app.request('POST', '/v1/auth/login', { body: { email, password: 'wrong-password-123' } });
    }
    const text = await scrape();
    expect(sample(text, 'svcenv_pulls_total{status="200"}')).toBe(1);
    expect(sample(text, 'svcenv_pulls_total{status="304"}')).toBe(1);
    expect(sample(text, 'svcenv_failed_logins_total')).toBe(10);
    expect(sample(text, 'svcenv_rate_limited_total{route="/v1/auth/login"}')).toBe(1);
    expect(
      sample(text, 'svcenv_http_requests_total{route="/v1/projects/:id/envs/:env/pull",method="GET",status="200"}'),
    ).toBe(1);
    expect(text).toMatch(
      /svcenv_http_request_duration_seconds_bucket\{le="0\.005",route="\/v1\/projects",method="POST"\}/,
    );
    expect(sample(text, 'svcenv_audit_commit_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/svcenv_jobs\{kind="[a-z.-]+",state="(pending|running|done)"\} \d+/);
    expect(text).toContain('svcenv_process_resident_memory_bytes');
    // No label carries a value, a key name, a token, an id or an email.
    for (const leak of [SECRET, 'CANARY_KEY_NAME', token, jwt, p.id, email]) expect(text).not.toContain(leak);
  });

  it('refuses a missing or wrong token with 401 in the error shape, and is absent without METRICS_TOKEN', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-of-some-length', `Bearer ${METRICS_TOKEN}x`]) {
      const res = await app.request('GET', '/metrics', { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(res.error.code).toBe('UNAUTHORIZED');
    }
    const plain = await startApp();
    try {
      const res = await plain.request('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(res.status).toBe(404);
      expect(res.error.code).toBe('NOT_FOUND');
    } finally {
      await plain.stop();
    }
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN/);
  });
});
