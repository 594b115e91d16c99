import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOperations, createToken, dialectName, signupUser, startApp, type TestApp } from './harness.js';

/**
 * One security suite over every route the OpenAPI document lists, so a new route is covered the day it is
 * added: no credential and a forged credential are 401 in the error shape; an access token on a JWT-only
 * area (D10) is 401; a JWT on pull is 401 (spec variables rule 8).
 */
const PUBLIC = new Set([
  'POST /v1/auth/signup',
  'POST /v1/auth/login',
  'POST /v1/auth/verify-email',
  'POST /v1/auth/verify-mfa',
  'POST /v1/auth/forgot-password',
  'POST /v1/auth/reset-password',
  'GET /v1/auth/invite',
  // D60: the platform JWT is the credential
  'POST /v1/auth/oidc',
  'GET /v1/auth/options',
  // D63: single sign-on starts without a credential and ends by making one
  'GET /v1/auth/sso/start',
  'GET /v1/auth/sso/callback',
  'GET /healthz',
  'GET /readyz',
  'POST /v1/auth/logout',
  'GET /v1/cli/latest',
  'GET /v1/cli/download/{os}/{arch}',
]);
const JWT_ONLY = [
  /^\/v1\/me(\/|$)/,
  /^\/v1\/workspace(\/|$)/,
  /^\/v1\/tokens(\/|$)/,
  // D69: instance administration is done through a session.
  /^\/v1\/admin(\/|$)/,
  /^\/v1\/auth\/(session|switch-workspace|accept-invite|resend-verification)$/,
];

function concrete(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    if (name === 'env') return 'dev';
    if (name === 'key') return 'SOME_KEY';
    if (name === 'os') return 'linux';
    if (name === 'arch') return 'x64';
    return '00000000-0000-4000-8000-000000000000';
  });
}

describe(`every route's credential checks (${dialectName})`, () => {
  let app: TestApp;
  let routes: { method: string; path: string; url: string; public: boolean }[];
  let token: string;
  let jwt: string;
  beforeAll(async () => {
    app = await startApp();
    routes = (await apiOperations(app)).map((op) => ({ ...op, url: concrete(op.path) }));
    const u = await signupUser(app);
    jwt = u.jwt;
    token = (await createToken(app, jwt, { scope: 'write' })).token;
  });
  afterAll(() => app.stop());

  const guarded = () => routes.filter((r) => !PUBLIC.has(`${r.method} ${r.path}`));
  const body = (m: string) => (m === 'GET' || m === 'DELETE' ? undefined : {});

  it('lists the API in the OpenAPI document, marking exactly the public routes as needing no credential', () => {
    expect(routes.length).toBeGreaterThan(35);
    expect(guarded().length).toBeGreaterThan(30);
    expect(new Set(routes.filter((r) => r.public).map((r) => `${r.method} ${r.path}`))).toEqual(PUBLIC);
  });

  it('answers no credential and forged credentials with 401 in the error shape on every guarded route', async () => {
    const forged = [
      undefined,
      'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
      'Bearer tok_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      'Token abc',
    ];
    let checked = 0;
    for (const r of guarded()) {
      for (const auth of forged) {
        const res = await app.request(r.method, r.url, {
          headers: auth ? { authorization: auth } : {},
          body: body(r.method),
        });
        expect(res.status, `${r.method} ${r.path} with ${auth ?? 'nothing'}`).toBe(401);
        expect(res.error).toEqual({ code: 'UNAUTHORIZED', message: expect.any(String), field: '' });
        checked++;
      }
    }
    console.log(`route security: ${checked} route × credential checks`);
  });

  it('refuses an access token on JWT-only routes and a JWT on pull', async () => {
    for (const r of guarded().filter((x) => JWT_ONLY.some((re) => re.test(x.path)))) {
      const res = await app.request(r.method, r.url, { token, body: body(r.method) });
      expect(res.status, `${r.method} ${r.path}`).toBe(401);
    }
    const pull = routes.find((r) => r.path.endsWith('/pull'))!;
    expect((await app.request('GET', pull.url, { token: jwt })).status).toBe(401);
  });

  it('never answers 500 to a well-authenticated request with nonsense input', async () => {
    for (const r of guarded()) {
      const auth =
        JWT_ONLY.some((re) => re.test(r.path)) || r.path.endsWith('/export')
          ? jwt
          : r.path.endsWith('/pull')
            ? token
            : jwt;
      const bodies = r.method === 'GET' || r.method === 'DELETE' ? [undefined] : [undefined, {}, { x: 1 }, [], 'null'];
      for (const b of bodies) {
        const res = await app.request(r.method, r.url, {
          token: auth,
          ...(typeof b === 'string' ? { rawBody: b, headers: { 'content-type': 'application/json' } } : { body: b }),
        });
        expect(res.status, `${r.method} ${r.path} ${JSON.stringify(b)}`).toBeLessThan(500);
      }
    }
  });
});
