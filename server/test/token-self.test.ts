/**
 * D58: `GET /v1/auth/token`, the access token making the request describes itself (what `svcenv whoami`
 * shows): its id, name, display prefix, scope, environments, project and expiry, never the token.
 */
import { tokenSelfResponse } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp } from './harness.js';

describe(`an access token describes itself (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  it('answers the calling token’s own name, prefix, scope, envs, project and expiry, never the token', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    const restricted = await createToken(app, jwt, {
      name: 'deploy bot',
      scope: 'deploy',
      envs: ['staging', 'prod'],
      projectId: p.id,
      expiresIn: 90,
    });
    // A second token of the same user: the answer is the caller's, not the newest or the first.
    const wide = await createToken(app, jwt, { name: 'laptop', scope: 'write' });

    const res = await app.request('GET', '/v1/auth/token', { token: restricted.token, schema: tokenSelfResponse });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: restricted.id,
      name: 'deploy bot',
      tokenPrefix: restricted.token.slice(0, 16),
      scope: 'deploy',
      envs: ['staging', 'prod'],
      projectId: p.id,
      expiresAt: restricted.expiresAt,
      trustedCidrs: [],
    });
    expect(res.text).not.toContain(restricted.token);

    const other = await app.request('GET', '/v1/auth/token', { token: wide.token, schema: tokenSelfResponse });
    expect(other.status).toBe(200);
    expect(other.body).toMatchObject({ id: wide.id, name: 'laptop', scope: 'write', envs: ['*'], projectId: null });
    expect(other.body.expiresAt).toBeNull();
  });

  it('refuses a dashboard session (JWT) and a revoked token with 401', async () => {
    const { jwt } = await signupUser(app);
    const session = await app.request('GET', '/v1/auth/token', { token: jwt });
    expect(session.status).toBe(401);
    expect(session.error.code).toBe('UNAUTHORIZED');

    const tok = await createToken(app, jwt);
    expect((await app.request('GET', '/v1/auth/token', { token: tok.token })).status).toBe(200);
    const revoke = await app.request('DELETE', `/v1/tokens/${tok.id}`, { token: jwt });
    expect(revoke.status).toBe(204);
    const after = await app.request('GET', '/v1/auth/token', { token: tok.token });
    expect(after.status).toBe(401);
    expect(after.text).not.toContain(tok.token);
  });
});
