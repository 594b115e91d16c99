import { meResponse, myWorkspacesResponse, sessionResponse } from '@svcenv/contract';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import { JWT_LIFETIME_S } from '../src/services/identity/authn.js';
import { loginFrom } from './account-helpers.js';
import { createToken, dialectName, loginSession, signupUser, startApp, type TestApp } from './harness.js';

describe(`account endpoints /v1/me (${dialectName})`, () => {
  let app: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    app = await startApp({ clock, env: { TRUST_PROXY: 'true' } });
  });
  afterAll(() => app.stop());

  it('GET /v1/me answers the session fields (D12)', async () => {
    const u = await signupUser(app, 'Linus');
    const me = await app.request('GET', '/v1/me', { token: u.jwt, schema: meResponse });
    expect(me.status).toBe(200);
    const session = await app.request('GET', '/v1/auth/session', { token: u.jwt, schema: sessionResponse });
    expect(me.body).toEqual(session.body);
    expect(me.body.user).toMatchObject({
      id: u.user.id,
      name: 'Linus',
      email: u.email,
      wsRole: 'Owner',
      workspaceName: "Linus's workspace",
      emailVerifiedAt: null,
    });
  });

  it('PATCH /v1/me renames the user; a bad name is 400 and changes nothing', async () => {
    const u = await signupUser(app);
    const res = await app.request('PATCH', '/v1/me', {
      token: u.jwt,
      body: { name: '  Margaret  ' },
      schema: meResponse,
    });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ id: u.user.id, name: 'Margaret', wsRole: 'Owner' });
    for (const body of [{ name: '' }, { name: '   ' }, { name: 'x'.repeat(101) }, {}, { name: 'A', email: 'x@y.z' }]) {
      const bad = await app.request('PATCH', '/v1/me', { token: u.jwt, body });
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.error.code).toBe('VALIDATION');
      expect(bad.error.field).toBeTruthy();
    }
    expect((await app.request('GET', '/v1/me', { token: u.jwt, schema: meResponse })).body.user.name).toBe('Margaret');
  });

  it('GET /v1/me/workspaces lists every membership with its role (D12)', async () => {
    const u = await signupUser(app, 'Barbara');
    const other = await signupUser(app, 'Edsger');
    const otherWs = (await app.request('GET', '/v1/me', { token: other.jwt, schema: meResponse })).body.user
      .workspaceId;
    // A second membership, as accepting an invite would make it.
    await app.db.db
      .insertInto('workspace_members')
      .values({ workspace_id: otherWs, user_id: u.user.id, ws_role: 'Member', joined_at: clock.now().toISOString() })
      .execute();
    const res = await app.request('GET', '/v1/me/workspaces', { token: u.jwt, schema: myWorkspacesResponse });
    expect(res.status).toBe(200);
    expect(res.body.workspaces).toHaveLength(2);
    expect(res.body.workspaces).toContainEqual({
      id: otherWs,
      name: "Edsger's workspace",
      slug: expect.stringMatching(/^edsger-s-workspace/),
      wsRole: 'Member',
    });
    expect(res.body.workspaces).toContainEqual(
      expect.objectContaining({ name: "Barbara's workspace", wsRole: 'Owner' }),
    );
    for (const w of res.body.workspaces) expect(Object.keys(w).sort()).toEqual(['id', 'name', 'slug', 'wsRole']);
  });

  it('answers an access token on every /v1/me endpoint with 401 (D10)', async () => {
    const u = await signupUser(app);
    const { token } = await createToken(app, u.jwt, { scope: 'write' });
    for (const [method, path, body] of [
      ['GET', '/v1/me', undefined],
      ['PATCH', '/v1/me', { name: 'X' }],
      ['POST', '/v1/me/password', { currentPassword: u.password, newPassword: 'another-password' }],
      ['GET', '/v1/me/workspaces', undefined],
      ['POST', '/v1/me/mfa/setup', undefined],
    ] as const) {
      const res = await app.request(method, path, { token, body });
      expect(res.status, path).toBe(401);
      expect(res.error.code).toBe('UNAUTHORIZED');
    }
    const unauth = await app.request('GET', '/v1/me');
    expect(unauth.status).toBe(401);
    // The password did not change.
    expect((await loginFrom(app, u.email, u.password)).status).toBe(200);
  });

  it('changes the password and ends every older session (D9, D12)', async () => {
    const u = await signupUser(app);
    const second = (await loginFrom(app, u.email, u.password, loginSession)).body.token;
    const wrong = await app.request('POST', '/v1/me/password', {
      token: u.jwt,
      body: { currentPassword: `${u.password}x`, newPassword: 'new-password-123' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.error).toMatchObject({ code: 'UNAUTHORIZED', field: 'currentPassword' });
    const short = await app.request('POST', '/v1/me/password', {
      token: u.jwt,
      body: { currentPassword: u.password, newPassword: 'seven77' },
    });
    expect(short.status).toBe(400);
    expect(short.error).toMatchObject({ code: 'VALIDATION', field: 'newPassword' });
    const common = await app.request('POST', '/v1/me/password', {
      token: u.jwt,
      body: { currentPassword: u.password, newPassword: 'password' },
    });
    expect(common.status).toBe(400);
    expect(common.error).toMatchObject({ code: 'VALIDATION', field: 'newPassword' });
    expect(common.error.message).toMatch(/commonly used passwords/);
    // Neither attempt changed anything.
    expect((await app.request('GET', '/v1/me', { token: u.jwt })).status).toBe(200);

    const ok = await app.request('POST', '/v1/me/password', {
      token: u.jwt,
      body: { currentPassword: u.password, newPassword: 'new-password-123' },
    });
    expect(ok.status).toBe(204);
    expect(ok.text).toBe('');
    for (const old of [u.jwt, second]) {
      expect((await app.request('GET', '/v1/me', { token: old })).status).toBe(401);
      expect((await app.request('GET', '/v1/auth/session', { token: old })).status).toBe(401);
    }
    expect((await loginFrom(app, u.email, u.password)).status).toBe(401);
    const fresh = await loginFrom(app, u.email, 'new-password-123', loginSession);
    expect(fresh.status).toBe(200);
    expect((await app.request('GET', '/v1/me', { token: fresh.body.token })).status).toBe(200);
    await app.deps.auditBatcher.drain();
    const audit = await app.db.db
      .selectFrom('audit_logs')
      .select(['action', 'detail'])
      .where('actor_id', '=', u.user.id)
      .execute();
    expect(audit.map((a) => a.action)).toContain('auth.password_change');
    expect(JSON.stringify(audit)).not.toContain('new-password-123');
  });

  it('refuses forged JWTs: alg none, a foreign key, expired, another session version, another workspace (D9)', async () => {
    const a = await signupUser(app, 'Alan');
    const b = await signupUser(app, 'Betty');
    const workspaceOf = async (jwt: string) =>
      (await app.request('GET', '/v1/me', { token: jwt, schema: meResponse })).body.user.workspaceId;
    const aWs = await workspaceOf(a.jwt);
    const bWs = await workspaceOf(b.jwt);
    // A ends its first session: its session version is now 1, while B's is still 0.
    await app.request('POST', '/v1/me/password', {
      token: a.jwt,
      body: { currentPassword: a.password, newPassword: 'alan-new-password' },
    });
    const now = clock.now();
    // The server's own lifetime: it tells a session's issue time from its expiry (a session older than the
    // membership is refused), so a shorter one would read as issued before the member joined.
    const mint = (claims: Record<string, unknown>) => app.deps.authn.jwt.issue(claims, now, JWT_LIFETIME_S);
    const valid = mint({ sub: a.user.id, wid: aWs, sv: 1, typ: 'session' });
    // The control: a token the server itself would issue is accepted, so each refusal below is about its one flaw.
    expect((await app.request('GET', '/v1/me', { token: valid })).status).toBe(200);

    const [, payload] = valid.split('.');
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    const foreign = await new SignJWT(JSON.parse(Buffer.from(payload!, 'base64url').toString()))
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('not-the-server-key-not-the-server-key'));
    const expired = app.deps.authn.jwt.issue(
      { sub: a.user.id, wid: aWs, sv: 1, typ: 'session' },
      new Date(now.getTime() - 8 * 24 * 3600 * 1000),
      7 * 24 * 3600,
    );
    const bVersion = mint({ sub: a.user.id, wid: aWs, sv: 0, typ: 'session' });
    const otherWorkspace = mint({ sub: a.user.id, wid: bWs, sv: 1, typ: 'session' });
    const notSession = mint({ sub: a.user.id, wid: aWs, sv: 1, typ: 'mfa' });
    for (const [name, bad] of Object.entries({
      none,
      foreign,
      expired,
      bVersion,
      otherWorkspace,
      notSession,
      old: a.jwt,
    })) {
      const res = await app.request('GET', '/v1/me', { token: bad });
      expect(res.status, name).toBe(401);
      expect(res.error.code, name).toBe('UNAUTHORIZED');
    }
  });

  it('expires a session JWT after 7 days on /v1/me (injected clock)', async () => {
    const u = await signupUser(app);
    clock.advance(7 * 24 * 3600 * 1000 - 1_000);
    expect((await app.request('GET', '/v1/me', { token: u.jwt })).status).toBe(200);
    clock.advance(1_000);
    expect((await app.request('GET', '/v1/me', { token: u.jwt })).status).toBe(401);
  });
});
