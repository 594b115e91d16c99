/**
 * The dashboard's session cookie (ADR 0014), over HTTP on SQLite and PostgreSQL: set by
 * every answer that issues a session, httpOnly and SameSite=Strict, accepted only with the CSRF header,
 * never as an access token, cleared by logout.
 */
import { authResponse, sessionResponse } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createToken, dialectName, projectList, signupUser, startApp, type TestApp } from './harness.js';

describe(`session cookie (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  /** The svcenv_session cookie an answer sets, with its attributes, or undefined. */
  const sessionCookie = (headers: Headers) => headers.getSetCookie().find((c) => c.startsWith('svcenv_session='));

  it('is set by signup and login: httpOnly, SameSite=Strict, path /, the session lifetime, not Secure on loopback HTTP', async () => {
    const email = `cookie-${Date.now()}@example.test`;
    const signup = await app.request('POST', '/v1/auth/signup', {
      body: { name: 'Cookie', email, password: 'long-enough-password' },
      schema: authResponse,
    });
    const set = sessionCookie(signup.headers)!;
    expect(set).toBe(`svcenv_session=${signup.body.token}; Max-Age=604800; Path=/; HttpOnly; SameSite=Strict`);
    const login = await app.request('POST', '/v1/auth/login', { body: { email, password: 'long-enough-password' } });
    expect(sessionCookie(login.headers)).toMatch(
      /^svcenv_session=eyJ[^;]+; Max-Age=604800; Path=\/; HttpOnly; SameSite=Strict$/,
    );
    // A refused login sets nothing.
    const wrong = await app.request('POST', '/v1/auth/login', { body: { email, password: 'wrong-password-1' } });
    expect(sessionCookie(wrong.headers)).toBeUndefined();
  });

  it('authenticates with the CSRF header only, never as an access token, and yields to an Authorization header', async () => {
    const a = await signupUser(app, 'Anna');
    const b = await signupUser(app, 'Bert');
    const pa = await createProject(app, a.jwt, { name: 'anna-project' });
    const cookie = `svcenv_session=${a.jwt}`;
    const withCsrf = await app.request('GET', '/v1/projects', {
      headers: { cookie, 'x-svcenv-csrf': '1' },
      schema: projectList,
    });
    expect(withCsrf.body.projects.map((p) => p.id)).toEqual([pa.id]);
    for (const method of ['GET', 'POST'] as const) {
      const noCsrf = await app.request(method, '/v1/projects', {
        headers: { cookie },
        body: method === 'POST' ? { name: 'x' } : undefined,
      });
      expect(noCsrf.status, method).toBe(403);
      expect(noCsrf.error.message).toContain('x-svcenv-csrf');
    }
    // The Authorization header wins: Bert's session sees Bert's (empty) list.
    const both = await app.request('GET', '/v1/projects', {
      token: b.jwt,
      headers: { cookie, 'x-svcenv-csrf': '1' },
      schema: projectList,
    });
    expect(both.body.projects).toEqual([]);
    // Pull takes access tokens only: a cookie is no credential there.
    await createToken(app, a.jwt, { projectId: pa.id });
    const pull = await app.request('GET', `/v1/projects/${pa.id}/envs/dev/pull`, {
      headers: { cookie, 'x-svcenv-csrf': '1' },
    });
    expect(pull.status).toBe(401);
  });

  it('is set again by a workspace switch, and cleared by logout, which needs the CSRF header', async () => {
    const u = await signupUser(app, 'Switch');
    const session = await app.request('GET', '/v1/auth/session', { token: u.jwt, schema: sessionResponse });
    const wid = session.body.user.workspaceId;
    const sw = await app.request('POST', '/v1/auth/switch-workspace', { token: u.jwt, body: { workspaceId: wid } });
    expect(sw.status).toBe(200);
    expect(sessionCookie(sw.headers)).toMatch(/^svcenv_session=eyJ/);
    const refused = await app.request('POST', '/v1/auth/logout', { headers: { cookie: `svcenv_session=${u.jwt}` } });
    expect(refused.status).toBe(403);
    const out = await app.request('POST', '/v1/auth/logout', {
      headers: { cookie: `svcenv_session=${u.jwt}`, 'x-svcenv-csrf': '1' },
    });
    expect(out.status).toBe(204);
    const cleared = sessionCookie(out.headers)!;
    expect(cleared).toMatch(/^svcenv_session=; Max-Age=0; Path=\//);
    expect(cleared).toContain('HttpOnly');
    // The dashboard's sign of a session goes with it.
    expect(out.headers.getSetCookie().find((c) => c.startsWith('svcenv_signed_in='))).toMatch(
      /^svcenv_signed_in=; Max-Age=0; Path=\/;.*SameSite=Strict$/,
    );
  });

  it('comes with a script-readable sign of a session that holds no secret', async () => {
    const email = `signed-in-${Date.now()}@example.test`;
    const signup = await app.request('POST', '/v1/auth/signup', {
      body: { name: 'Marker', email, password: 'long-enough-password' },
    });
    expect(signup.headers.getSetCookie()).toContain('svcenv_signed_in=1; Max-Age=604800; Path=/; SameSite=Strict');
  });
});
