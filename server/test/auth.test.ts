import { sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import { createToken, dialectName, loginSession, signupUser, startApp, type TestApp } from './harness.js';

describe(`identity and sessions (${dialectName})`, () => {
  let app: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    app = await startApp({ clock });
  });
  afterAll(() => app.stop());

  it('signs up, creating a workspace the user owns (D7)', async () => {
    const { jwt, user } = await signupUser(app, 'Grace');
    expect(jwt.startsWith('eyJ')).toBe(true);
    const s = await app.request('GET', '/v1/auth/session', { token: jwt, schema: sessionResponse });
    expect(s.status).toBe(200);
    expect(s.body.user).toMatchObject({
      id: user.id,
      name: 'Grace',
      wsRole: 'Owner',
      workspaceName: "Grace's workspace",
    });
    expect(s.body.user.emailVerifiedAt).toBeNull();
    const ws = await app.db.db
      .selectFrom('workspaces')
      .select(['slug', 'plan'])
      .where('id', '=', s.body.user.workspaceId)
      .executeTakeFirstOrThrow();
    expect(ws.slug).toMatch(/^grace-s-workspace/);
    expect(ws.plan).toBe('free');
  });

  it('refuses a duplicate email case-insensitively with 409 field email (D7)', async () => {
    const { email } = await signupUser(app);
    const res = await app.request('POST', '/v1/auth/signup', {
      body: { name: 'X', email: email.toUpperCase(), password: 'a-duplicate-try-9' },
    });
    expect(res.status).toBe(409);
    expect(res.error).toEqual({ code: 'CONFLICT', message: expect.any(String), field: 'email' });
  });

  it.each([
    ['short', 'seven77'],
    ['long', 'x'.repeat(129)],
  ])('refuses a %s password with 400 field password (D8)', async (_n, password) => {
    const res = await app.request('POST', '/v1/auth/signup', {
      body: { name: 'X', email: `p${Date.now()}@x.test`, password },
    });
    expect(res.status).toBe(400);
    expect(res.error).toMatchObject({ code: 'VALIDATION', field: 'password' });
  });

  it.each(['password', 'Password', 'PASSWORD123', 'iloveyou', 'qwertyuiop', '12345678'])(
    'refuses the common password %s at signup with 400 field password and a message that does not repeat it',
    async (password) => {
      const email = `common-${Date.now()}-${password.length}@x.test`;
      const res = await app.request('POST', '/v1/auth/signup', { body: { name: 'X', email, password } });
      expect(res.status, res.text).toBe(400);
      expect(res.error).toEqual({
        code: 'VALIDATION',
        field: 'password',
        message: expect.stringMatching(/commonly used passwords.*choose another/),
      });
      // (The message says "password" itself, so only the others can be looked for.)
      if (!/password/i.test(password)) expect(res.text).not.toContain(password);
      // Nothing was created: the same email signs up with a password of its own.
      const ok = await app.request('POST', '/v1/auth/signup', {
        body: { name: 'X', email, password: 'tulip-orbit-canal' },
      });
      expect(ok.status, ok.text).toBe(201);
    },
  );

  it('stores passwords with argon2id, never in plaintext (D8)', async () => {
    const { user, password } = await signupUser(app);
    const row = await app.db.db
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(row.password_hash.startsWith('$argon2id$')).toBe(true);
    expect(row.password_hash).not.toContain(password);
  });

  it('logs in; a wrong password and an unknown email give the same 401 (D8)', async () => {
    const { email, password, user } = await signupUser(app);
    const ok = await app.request('POST', '/v1/auth/login', {
      body: { email: email.toUpperCase(), password },
      schema: loginSession,
    });
    expect(ok.status).toBe(200);
    expect(ok.body.user.id).toBe(user.id);
    expect(ok.body.token.startsWith('eyJ')).toBe(true);
    const wrong = await app.request('POST', '/v1/auth/login', { body: { email, password: `${password}x` } });
    const unknown = await app.request('POST', '/v1/auth/login', { body: { email: `nobody-${email}`, password } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.error).toEqual(unknown.error);
    expect(wrong.error.code).toBe('UNAUTHORIZED');
  });

  it('expires a JWT after 7 days (injected clock)', async () => {
    const { jwt } = await signupUser(app);
    clock.advance(7 * 24 * 3600 * 1000 - 60_000);
    expect((await app.request('GET', '/v1/auth/session', { token: jwt })).status).toBe(200);
    clock.advance(120_000);
    expect((await app.request('GET', '/v1/auth/session', { token: jwt })).status).toBe(401);
    clock.set(new Date());
  });

  it('rejects forged JWTs: alg none, a foreign key, a garbage string (D9)', async () => {
    const { jwt } = await signupUser(app);
    const [, payload] = jwt.split('.');
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    const foreign = await new SignJWT(JSON.parse(Buffer.from(payload!, 'base64url').toString()))
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('not-the-server-key-not-the-server-key'));
    for (const bad of [none, foreign, 'eyJnot.a.jwt', `${jwt}x`]) {
      const res = await app.request('GET', '/v1/auth/session', { token: bad });
      expect(res.status, bad).toBe(401);
      expect(res.error.code).toBe('UNAUTHORIZED');
    }
  });

  it('answers an access token on a JWT-only endpoint with 401 (D10)', async () => {
    const { jwt } = await signupUser(app);
    const { token } = await createToken(app, jwt, { scope: 'write' });
    for (const [m, p] of [
      ['GET', '/v1/auth/session'],
      ['GET', '/v1/tokens'],
      ['POST', '/v1/auth/switch-workspace'],
    ] as const) {
      const res = await app.request(m, p, {
        token,
        body: m === 'POST' ? { workspaceId: crypto.randomUUID() } : undefined,
      });
      expect(res.status, p).toBe(401);
    }
  });

  it('switches to a workspace the caller belongs to, and 404s any other', async () => {
    const a = await signupUser(app);
    const b = await signupUser(app);
    const session = async (jwt: string) =>
      (await app.request('GET', '/v1/auth/session', { token: jwt, schema: sessionResponse })).body.user;
    const sa = await session(a.jwt);
    const sb = await session(b.jwt);
    const same = await app.request('POST', '/v1/auth/switch-workspace', {
      token: a.jwt,
      body: { workspaceId: sa.workspaceId },
      schema: switchWorkspaceResponse,
    });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ workspaceId: sa.workspaceId, workspaceName: sa.workspaceName });
    expect(same.body.token.startsWith('eyJ')).toBe(true);
    const other = await app.request('POST', '/v1/auth/switch-workspace', {
      token: a.jwt,
      body: { workspaceId: sb.workspaceId },
    });
    expect(other.status).toBe(404);
  });

  it('requires credentials: missing or malformed Authorization is 401', async () => {
    for (const h of [undefined, 'Basic abc', 'Bearer', 'Bearer tok_live_short']) {
      const res = await app.request('GET', '/v1/projects', { headers: h ? { authorization: h } : {} });
      expect(res.status, String(h)).toBe(401);
      expect(res.error.code).toBe('UNAUTHORIZED');
    }
  });

  it('accepts the Bearer scheme in any letter case (RFC 9110 11.1)', async () => {
    const { jwt } = await signupUser(app);
    for (const scheme of ['bearer', 'BEARER']) {
      const res = await app.request('GET', '/v1/auth/session', { headers: { authorization: `${scheme} ${jwt}` } });
      expect(res.status, scheme).toBe(200);
    }
  });
});
