import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SSO_ERRORS, ssoConfig } from '@svcenv/contract';
import { operations as ops } from '@svcenv/contract/operations';
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import { type Client, dialectName, freshPgSchema, signupUser, startApp, startServer, type TestApp } from './harness.js';
import { claimsOf, type StartedProvider, startProvider } from './oidc-provider.js';

/**
 * D63 single sign-on against a real OpenID Connect provider (oidc-provider on loopback): the code flow with
 * PKCE through the real server, and the attacks on the callback, each refused by its own guard with a
 * redirect whose reason comes from the closed list.
 */
const PUBLIC = 'http://svcenv.test:8080';
const CALLBACK = `${PUBLIC}/v1/auth/sso/callback`;
const CLIENT_SECRET = 'client-secret-value-9f8e7d6c5b4a';
const LOGIN_ERROR = new RegExp(`^${PUBLIC.replace(/\./g, '\\.')}/login\\?sso_error=(${SSO_ERRORS.join('|')})$`);

/** A browser: a cookie jar for svcenv, whatever instance answers (they share PUBLIC_URL). */
function browser() {
  const jar = new Map<string, string>();
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const get = async (server: Client, pathAndQuery: string) => {
    const res = await fetch(server.url + pathAndQuery, { headers: { cookie: cookie() }, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const value = pair!.slice(eq + 1).trim();
      if (value === '') jar.delete(pair!.slice(0, eq).trim());
      else jar.set(pair!.slice(0, eq).trim(), value);
    }
    return { status: res.status, location: res.headers.get('location') ?? '', text: await res.text() };
  };
  return { jar, get };
}

/** The svcenv path of a URL under PUBLIC_URL. */
const local = (url: string) => {
  expect(url.startsWith(`${PUBLIC}/`)).toBe(true);
  return url.slice(PUBLIC.length);
};

describe(`single sign-on (${dialectName})`, () => {
  let app: TestApp;
  let provider: StartedProvider;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  let workspaceId: string;
  const clock = new ManualClock(new Date());

  beforeAll(async () => {
    provider = await startProvider({
      clients: [
        { clientId: 'svcenv-app', clientSecret: CLIENT_SECRET, redirectUris: [CALLBACK] },
        { clientId: 'other-app', clientSecret: 'other-secret', redirectUris: [CALLBACK] },
      ],
      accounts: {
        alice: { email: 'alice@acme.test', emailVerified: true, name: 'Alice Liddell' },
        bob: { email: 'Bob@Acme.test', emailVerified: true },
        eve: { email: 'eve@acme.test', emailVerified: false },
        zed: { email: 'zed@elsewhere.test', emailVerified: true },
        carol: { email: 'carol@acme.test', emailVerified: true },
        seat: { email: 'seat@acme.test', emailVerified: true },
      },
    });
    app = await startApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true', PUBLIC_URL: PUBLIC } });
    // The instance's first account: its administrator (D69), who may claim any domain (ADR 0025).
    owner = await signupUser(app, 'Owner');
    const session = await app.call(ops.getSession, {}, owner.jwt);
    workspaceId = session.body.user.workspaceId;
    // Room for every member these tests add (D15's free plan has 3 seats; the seat test sets it back).
    await app.db.db.updateTable('workspaces').set({ plan: 'enterprise' }).where('id', '=', workspaceId).execute();
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    await provider?.close();
  });

  const put = (body: Record<string, unknown>, token = owner.jwt) =>
    app.call(ops.putSso, { body: body as never }, token);
  const configure = async (over: Record<string, unknown> = {}) => {
    const res = await put({
      issuer: provider.issuer,
      clientId: 'svcenv-app',
      clientSecret: CLIENT_SECRET,
      domains: ['acme.test'],
      enforce: false,
      ...over,
    });
    if (res.status !== 200) throw new Error(`put sso: ${res.status} ${res.text}`);
    return res;
  };
  /** Start → the provider's form → back: the callback URL the provider sent the browser to, and the browser. */
  const toProvider = async (login: string, start = '/v1/auth/sso/start?email=alice%40acme.test', b = browser()) => {
    const s = await b.get(app, start);
    expect(s.status, s.text).toBe(302);
    expect(s.location.startsWith(`${provider.issuer}/auth?`)).toBe(true);
    return { b, back: await provider.signIn(s.location, login), authorizationUrl: s.location };
  };
  const signIn = async (login: string) => {
    const { b, back } = await toProvider(login);
    const cb = await b.get(app, local(back));
    expect(cb.status).toBe(302);
    return { location: cb.location, session: b.jar.get('svcenv_session'), b, back };
  };
  const audit = async (action: string) => {
    const res = await app.request('GET', `/v1/workspace/audit?action=${action}&limit=200`, { token: owner.jwt });
    return { text: res.text, logs: (res.body as { logs: { detail: Record<string, unknown> }[] }).logs };
  };

  it('stores the settings for Owners: 404 before, first PUT needs the secret, never answered, audited', async () => {
    expect((await app.call(ops.getSso, {}, owner.jwt)).error).toMatchObject({ code: 'NOT_FOUND' });
    const noSecret = await put({ issuer: provider.issuer, clientId: 'svcenv-app', domains: ['acme.test'] });
    expect(noSecret.error).toMatchObject({ code: 'VALIDATION', field: 'clientSecret' });
    expect((await put({ issuer: provider.issuer, clientId: 'x', clientSecret: 'y', domains: [] })).error).toMatchObject(
      { code: 'VALIDATION', field: 'domains' },
    );
    const res = await configure({ domains: ['ACME.test'] });
    expect(ssoConfig.strict().parse(res.body)).toMatchObject({
      issuer: provider.issuer,
      clientId: 'svcenv-app',
      domains: ['acme.test'],
      enforce: false,
      redirectUri: CALLBACK,
    });
    expect(res.body.loginUrl).toMatch(/^http:\/\/svcenv\.test:8080\/v1\/auth\/sso\/start\?workspace=/);
    const got = await app.call(ops.getSso, {}, owner.jwt);
    for (const text of [res.text, got.text]) {
      expect(text).not.toContain(CLIENT_SECRET);
      expect(text).not.toContain('clientSecret');
    }
    // Sealed at rest.
    const row = await app.db.db.selectFrom('workspace_sso').selectAll().executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(CLIENT_SECRET);
    // An update without the secret keeps the stored one (the sign-ins below use it).
    const kept = await put({ issuer: provider.issuer, clientId: 'svcenv-app', domains: ['acme.test'], enforce: false });
    expect(kept.status).toBe(200);
    const { logs, text } = await audit('workspace.sso_update');
    expect(logs[0]!.detail).toMatchObject({ domains: ['acme.test'], clientSecretChanged: false });
    expect(logs[1]!.detail).toMatchObject({ clientSecretChanged: true });
    expect(text).not.toContain(CLIENT_SECRET);
  });

  it('signs a new person in: account and Member membership made, the session works, no duplicate later', async () => {
    const first = await signIn('alice');
    expect(first.location).toBe(`${PUBLIC}/`);
    expect(first.session).toBeTruthy();
    const me = await app.request('GET', '/v1/me', { token: first.session });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ user: { email: 'alice@acme.test', name: 'Alice Liddell' } });
    const session = await app.call(ops.getSession, {}, first.session);
    expect(session.body.user).toMatchObject({ workspaceId, wsRole: 'Member' });
    expect(session.body.user.emailVerifiedAt).not.toBeNull();
    // The same session through the cookie, as the dashboard sends it.
    const viaCookie = await app.request('GET', '/v1/auth/session', {
      headers: { cookie: `svcenv_session=${first.session}`, 'x-svcenv-csrf': '1' },
    });
    expect(viaCookie.status).toBe(200);

    const again = await signIn('alice');
    expect(again.location).toBe(`${PUBLIC}/`);
    const users = await app.db.db.selectFrom('users').select('id').where('email', '=', 'alice@acme.test').execute();
    expect(users).toHaveLength(1);
    const members = await app.call(ops.listMembers, {}, owner.jwt);
    expect(members.body.members.filter((m) => m.email === 'alice@acme.test')).toHaveLength(1);

    const { logs, text } = await audit('auth.sso_login');
    expect(logs[0]!.detail).toMatchObject({ email: 'alice@acme.test', accountCreated: false });
    expect(logs[1]!.detail).toMatchObject({ email: 'alice@acme.test', accountCreated: true, joinedAs: 'Member' });
    // No secret, code or token in the audit log.
    const [code] = new URL(first.back).searchParams.getAll('code');
    expect(text).not.toContain(code);
    expect(text).not.toContain(CLIENT_SECRET);
    expect(text).not.toContain(provider.idTokens.at(-1)!.split('.')[1]);
  });

  it('an account made by single sign-on has no password: password login is refused as a wrong one', async () => {
    for (const password of ['svcenv-dummy-password', '!sso-no-password', '']) {
      const res = await app.call(ops.login, { body: { email: 'alice@acme.test', password } });
      expect(res.error).toMatchObject({ code: 'UNAUTHORIZED' });
    }
  });

  it('signs in an existing account (made with a password) and lands it in the SSO workspace (D68)', async () => {
    const carol = await app.call(ops.signup, {
      body: { name: 'Carol', email: 'carol@acme.test', password: 'carol-password-123' },
    });
    expect(carol.status).toBe(201);
    const { location, session } = await signIn('carol');
    expect(location).toBe(`${PUBLIC}/`);
    const s = await app.call(ops.getSession, {}, session);
    expect(s.body.user).toMatchObject({ id: carol.body.user.id, workspaceId, wsRole: 'Member' });
    // D68: the next password login lands there too.
    const login = await app.call(ops.login, { body: { email: 'carol@acme.test', password: 'carol-password-123' } });
    expect(login.body).toMatchObject({ user: { workspaceId } });
  });

  it('refuses a replayed state, an expired one, and a callback in another browser (login CSRF)', async () => {
    const done = await signIn('alice');
    expect(done.location).toBe(`${PUBLIC}/`);
    const replay = await done.b.get(app, local(done.back));
    expect(replay.location).toBe(`${PUBLIC}/login?sso_error=invalid_state`);

    const late = await toProvider('alice');
    clock.advance(11 * 60_000);
    const expired = await late.b.get(app, local(late.back));
    expect(expired.location).toBe(`${PUBLIC}/login?sso_error=expired`);
    expect(late.b.jar.has('svcenv_session')).toBe(false);

    const csrf = await toProvider('alice');
    const victim = browser();
    const other = await victim.get(app, local(csrf.back));
    expect(other.location).toBe(`${PUBLIC}/login?sso_error=invalid_state`);
    expect(victim.jar.has('svcenv_session')).toBe(false);
    const { logs } = await audit('auth.sso_failed');
    expect(logs.map((l) => l.detail.reason)).toEqual(expect.arrayContaining(['expired', 'invalid_state']));
  });

  it('refuses an ID token of another flow (nonce), of another client (aud), or not signed by the provider', async () => {
    const a = await signIn('alice');
    expect(a.location).toBe(`${PUBLIC}/`);
    const tokenOfA = provider.idTokens.at(-1)!;
    const attacker = (await generateKeyPair('RS256')).privateKey;
    const cases: [string, (genuine: string) => Promise<string> | string][] = [
      ['nonce', () => tokenOfA],
      ['aud', (g) => provider.sign({ ...claimsOf(g), aud: 'other-app' })],
      [
        'signature',
        (g) => new SignJWT(claimsOf(g)).setProtectedHeader({ alg: 'RS256', kid: 'test-rs256' }).sign(attacker),
      ],
      ['issuer', (g) => provider.sign({ ...claimsOf(g), iss: 'http://127.0.0.1:1' })],
      ['expired', (g) => provider.sign({ ...claimsOf(g), exp: Math.floor(clock.now().getTime() / 1000) - 3600 })],
    ];
    try {
      for (const [name, tamper] of cases) {
        provider.tamperIdToken(tamper);
        const res = await signIn('alice');
        expect(res.location, name).toBe(`${PUBLIC}/login?sso_error=invalid_id_token`);
        expect(res.session, name).toBeUndefined();
      }
      // The same machinery untampered signs in (the refusals above are the guards', not the harness's).
      provider.tamperIdToken((g) => provider.sign(claimsOf(g)));
      expect((await signIn('alice')).location).toBe(`${PUBLIC}/`);
    } finally {
      provider.tamperIdToken(null);
    }
  });

  it("refuses another flow's code (PKCE binds the code to the flow that asked for it)", async () => {
    const a = await toProvider('alice');
    const b = await toProvider('alice');
    const codeA = new URL(a.back).searchParams.get('code')!;
    const stateB = new URL(b.back).searchParams.get('state')!;
    const mixed = await b.b.get(
      app,
      `/v1/auth/sso/callback?code=${encodeURIComponent(codeA)}&state=${encodeURIComponent(stateB)}`,
    );
    expect(mixed.location).toBe(`${PUBLIC}/login?sso_error=token_exchange_failed`);
    expect(b.b.jar.has('svcenv_session')).toBe(false);
  });

  it('refuses an unverified address and one outside the claimed domains', async () => {
    const eve = await signIn('eve');
    expect(eve.location).toBe(`${PUBLIC}/login?sso_error=email_not_verified`);
    const zed = await signIn('zed');
    expect(zed.location).toBe(`${PUBLIC}/login?sso_error=domain_not_allowed`);
    for (const email of ['eve@acme.test', 'zed@elsewhere.test']) {
      expect(await app.db.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst()).toBe(
        undefined,
      );
    }
    const { logs } = await audit('auth.sso_failed');
    expect(logs[0]!.detail).toEqual({ reason: 'domain_not_allowed', email: 'zed@elsewhere.test' });
  });

  it('answers every callback failure with a reason of the closed list, never what the request carried', async () => {
    const cancelled = await toProvider('alice');
    const { b } = cancelled;
    // The person cancels at the provider: access_denied.
    const s = await b.get(app, '/v1/auth/sso/start?email=alice%40acme.test');
    const aborted = await provider.signIn(s.location, 'alice', { abort: true });
    expect(new URL(aborted).searchParams.get('error')).toBe('access_denied');
    expect((await b.get(app, local(aborted))).location).toBe(`${PUBLIC}/login?sso_error=idp_error`);

    const fresh = await b.get(app, '/v1/auth/sso/start?email=alice%40acme.test');
    const state = new URL(fresh.location).searchParams.get('state')!;
    const crafted = [
      `?error=access_denied&error_description=${encodeURIComponent('<script>alert(1)</script>')}&state=${state}&sso_error=${encodeURIComponent('https://evil.example/')}`,
      `?sso_error=${encodeURIComponent('https://evil.example/')}&state=nope`,
      `?sso_error=${encodeURIComponent('<script>')}`,
      '',
      '?state=a&state=b&code=c',
      `?state=${'x'.repeat(5000)}`,
      `?code=${encodeURIComponent('<script>')}&state=${encodeURIComponent('"><img src=x>')}`,
    ];
    for (const q of crafted) {
      const res = await b.get(app, `/v1/auth/sso/callback${q}`);
      expect(res.status, q).toBe(302);
      expect(res.location, q).toMatch(LOGIN_ERROR);
      expect(res.location).not.toContain('evil');
      expect(res.location).not.toContain('script');
    }
    expect(b.jar.has('svcenv_session')).toBe(false);
  });

  it('starts by workspace slug; an unclaimed domain or unknown slug is 404; bad input 400', async () => {
    const cfg = await app.call(ops.getSso, {}, owner.jwt);
    const slug = new URL(cfg.body.loginUrl).searchParams.get('workspace')!;
    const { b, back } = await toProvider('alice', `/v1/auth/sso/start?workspace=${slug}`);
    expect((await b.get(app, local(back))).location).toBe(`${PUBLIC}/`);
    const start = (query: Record<string, string>) => app.call(ops.ssoStart, { query });
    expect((await start({ email: 'someone@unclaimed.test' })).error).toMatchObject({ code: 'NOT_FOUND' });
    expect((await start({ workspace: 'no-such-workspace' })).error).toMatchObject({ code: 'NOT_FOUND' });
    expect((await start({})).error).toMatchObject({ code: 'VALIDATION' });
    expect((await start({ email: 'a@acme.test', workspace: slug })).error).toMatchObject({ code: 'VALIDATION' });
    // The authorization request (D63): code, scopes, client, redirect, state, nonce, PKCE S256.
    const s = await browser().get(app, '/v1/auth/sso/start?email=x%40acme.test');
    const q = new URL(s.location).searchParams;
    expect(Object.fromEntries(q)).toMatchObject({
      response_type: 'code',
      scope: 'openid email profile',
      client_id: 'svcenv-app',
      redirect_uri: CALLBACK,
      code_challenge_method: 'S256',
    });
    expect(q.get('state')).toMatch(/^[\w-]{43}$/);
    expect(q.get('nonce')).toMatch(/^[\w-]{43}$/);
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    // The state is stored hashed only.
    const rows = await app.db.db.selectFrom('sso_flows').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(q.get('state'));
  });

  it('keeps Owners to the settings routes (others 403)', async () => {
    const { session } = await signIn('alice');
    expect((await app.call(ops.getSso, {}, session)).error).toMatchObject({ code: 'FORBIDDEN' });
    expect(
      (await put({ issuer: provider.issuer, clientId: 'x', domains: ['acme.test'] }, session!)).error,
    ).toMatchObject({
      code: 'FORBIDDEN',
    });
    expect((await app.call(ops.testSso, { body: { issuer: provider.issuer } }, session)).error).toMatchObject({
      code: 'FORBIDDEN',
    });
    expect((await app.call(ops.deleteSso, {}, session)).error).toMatchObject({ code: 'FORBIDDEN' });
  });

  it('409 for a domain another workspace claims; a non-administrator claims only their verified domain', async () => {
    const other = await signupUser(app, 'Rival');
    const body = { issuer: provider.issuer, clientId: 'other-app', clientSecret: 'other-secret', enforce: false };
    // Not an administrator, address not verified: no foreign domain (ADR 0025).
    expect((await put({ ...body, domains: ['rival.test'] }, other.jwt)).error).toMatchObject({
      code: 'FORBIDDEN',
      field: 'domains',
    });
    await app.db.db
      .updateTable('users')
      .set({ email_verified_at: clock.now().toISOString() })
      .where('id', '=', other.user.id)
      .execute();
    expect((await put({ ...body, domains: ['acme.test'] }, other.jwt)).error).toMatchObject({ code: 'FORBIDDEN' });
    await app.db.db.updateTable('users').set({ instance_admin: 1 }).where('id', '=', other.user.id).execute();
    const taken = await put({ ...body, domains: ['rival.test', 'acme.test'] }, other.jwt);
    expect(taken.error).toMatchObject({ code: 'CONFLICT', field: 'domains' });
    expect(taken.error.message).toContain('acme.test');
    expect((await put({ ...body, domains: ['rival.test'] }, other.jwt)).status).toBe(200);
    expect((await app.call(ops.deleteSso, {}, other.jwt)).status).toBe(204);
    expect((await app.call(ops.getSso, {}, other.jwt)).status).toBe(404);
    expect((await app.call(ops.deleteSso, {}, other.jwt)).status).toBe(404);
  });

  it('tests the connection: a good issuer, a bad one, a refused address; stores nothing', async () => {
    const good = await app.call(ops.testSso, { body: { issuer: provider.issuer, clientId: 'svcenv-app' } }, owner.jwt);
    expect(good.body).toEqual({
      ok: true,
      authorizationEndpoint: `${provider.issuer}/auth`,
      tokenEndpoint: `${provider.issuer}/token`,
      jwksKeys: 1,
      redirectUri: CALLBACK,
    });
    const nothing = await app.call(ops.testSso, { body: { issuer: 'http://127.0.0.1:1' } }, owner.jwt);
    expect(nothing.body).toMatchObject({ ok: false, reason: 'discovery_failed' });
    const mismatch = await app.call(ops.testSso, { body: { issuer: `${provider.issuer}/` } }, owner.jwt);
    expect(mismatch.body).toMatchObject({ ok: false, reason: 'issuer_mismatch' });
    const metadata = await app.call(ops.testSso, { body: { issuer: 'http://169.254.169.254' } }, owner.jwt);
    expect(metadata.body).toMatchObject({ ok: false, reason: 'issuer_refused' });
    const cfg = await app.call(ops.getSso, {}, owner.jwt);
    expect(cfg.body.issuer).toBe(provider.issuer);
  });

  it('takes a discovery document silent on PKCE (as Entra ID serves it), not one that lists S256 out', async () => {
    // ADR 0025: a document without code_challenge_methods_supported is OpenID Connect's code flow; S256 is sent
    // all the same. One that lists only `plain` says the provider cannot do S256.
    let methods: string[] | undefined;
    const issuerServer = createServer((req, res) => {
      const url = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
      res.writeHead(200, { 'content-type': 'application/json' });
      // The test counts the keys, it does not use them.
      if (req.url === '/jwks') return res.end('{"keys":[{"kty":"RSA","kid":"k1","n":"AQAB","e":"AQAB"}]}');
      res.end(
        JSON.stringify({
          issuer: url,
          authorization_endpoint: `${url}/authorize`,
          token_endpoint: `${url}/token`,
          jwks_uri: `${url}/jwks`,
          response_types_supported: ['code', 'id_token'],
          ...(methods ? { code_challenge_methods_supported: methods } : {}),
        }),
      );
    });
    await new Promise<void>((r) => issuerServer.listen(0, '127.0.0.1', r));
    const issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
    try {
      const silent = await app.call(ops.testSso, { body: { issuer } }, owner.jwt);
      expect(silent.body).toMatchObject({ ok: true, authorizationEndpoint: `${issuer}/authorize` });
      methods = ['plain'];
      // Discovery documents are cached per issuer for 10 minutes; the test fetches anew (ADR 0025).
      const plainOnly = await app.call(ops.testSso, { body: { issuer } }, owner.jwt);
      expect(plainOnly.body).toMatchObject({ ok: false, reason: 'unsupported' });
    } finally {
      issuerServer.close();
    }
  });

  it('refuses a private or metadata issuer by D5, and a metadata one in every configuration', async () => {
    expect(
      (await put({ issuer: 'https://169.254.169.254/', clientId: 'x', domains: ['acme.test'] })).error,
    ).toMatchObject({ code: 'VALIDATION', field: 'issuer' });
    const strict = await startApp({ env: { PUBLIC_URL: PUBLIC } });
    try {
      const o = await signupUser(strict, 'Strict');
      for (const issuer of [provider.issuer, 'https://10.0.0.1', 'https://169.254.169.254', 'http://example.com']) {
        const res = await strict.call(
          ops.putSso,
          { body: { issuer, clientId: 'x', clientSecret: 'y', domains: ['strict.test'], enforce: false } },
          o.jwt,
        );
        expect(res.error, issuer).toMatchObject({ code: 'VALIDATION', field: 'issuer' });
      }
      const t = await strict.call(ops.testSso, { body: { issuer: provider.issuer } }, o.jwt);
      expect(t.body).toMatchObject({ ok: false, reason: 'issuer_refused' });
    } finally {
      await strict.stop();
    }
  });

  it('fails with seat_limit when the plan has no seat left, and makes nothing', async () => {
    await app.db.db.updateTable('workspaces').set({ plan: 'free' }).where('id', '=', workspaceId).execute();
    try {
      const res = await signIn('seat');
      expect(res.location).toBe(`${PUBLIC}/login?sso_error=seat_limit`);
      expect(
        await app.db.db.selectFrom('users').select('id').where('email', '=', 'seat@acme.test').executeTakeFirst(),
      ).toBe(undefined);
    } finally {
      await app.db.db.updateTable('workspaces').set({ plan: 'enterprise' }).where('id', '=', workspaceId).execute();
    }
  });

  it('with enforce: password login in the domains is SSO_REQUIRED except for Owners; signup too', async () => {
    // Dave has a password account in the domain and is a Member; Carol is made an Owner.
    const dave = await app.call(ops.signup, {
      body: { name: 'Dave', email: 'dave@acme.test', password: 'dave-password-123' },
    });
    expect(dave.status).toBe(201);
    const members = await app.call(ops.listMembers, {}, owner.jwt);
    const carol = members.body.members.find((m) => m.email === 'carol@acme.test')!;
    await app.call(ops.updateMember, { params: { userId: carol.id }, body: { wsRole: 'Owner' } }, owner.jwt);
    await configure({ enforce: true });

    const login = (email: string, password: string) => app.call(ops.login, { body: { email, password } });
    expect((await login('dave@acme.test', 'dave-password-123')).error).toMatchObject({ code: 'SSO_REQUIRED' });
    // The same answer whatever the password, and for an unknown address: nothing is told.
    expect((await login('dave@acme.test', 'wrong-password')).error).toMatchObject({ code: 'SSO_REQUIRED' });
    expect((await login('nobody@acme.test', 'wrong-password')).error).toMatchObject({ code: 'SSO_REQUIRED' });
    expect((await login('carol@acme.test', 'wrong-password')).error).toMatchObject({ code: 'SSO_REQUIRED' });
    // An Owner of the workspace keeps password login (a broken provider never locks it out).
    const carolLogin = await login('carol@acme.test', 'carol-password-123');
    expect(carolLogin.status).toBe(200);
    // Outside the domains nothing changes.
    expect((await login(owner.email, owner.password)).status).toBe(200);
    const signup = await app.call(ops.signup, {
      body: { name: 'New', email: 'new@acme.test', password: 'new-password-123' },
    });
    expect(signup.error).toMatchObject({ code: 'SSO_REQUIRED' });
    // Single sign-on itself still works for them.
    const sso = await signIn('alice');
    expect(sso.location).toBe(`${PUBLIC}/`);
    await configure({ enforce: false });
    expect((await login('dave@acme.test', 'dave-password-123')).status).toBe(200);
  });

  it('redirects with idp_unavailable or not_configured when the provider or the settings went away', async () => {
    const { b, back } = await toProvider('alice');
    expect((await app.call(ops.deleteSso, {}, owner.jwt)).status).toBe(204);
    // Deleting the settings ends the flows in progress.
    expect((await b.get(app, local(back))).location).toBe(`${PUBLIC}/login?sso_error=invalid_state`);
    const start = await app.call(ops.ssoStart, { query: { email: 'alice@acme.test' } });
    expect(start.error).toMatchObject({ code: 'NOT_FOUND' });
    await configure();
  });
});

describe(`single sign-on across instances (${dialectName})`, () => {
  it('finishes on one server process a flow started on another', async () => {
    const provider = await startProvider({
      clients: [{ clientId: 'svcenv-app', clientSecret: CLIENT_SECRET, redirectUris: [CALLBACK] }],
      accounts: { alice: { email: 'alice@multi.test', emailVerified: true } },
    });
    const pg = process.env.TEST_DATABASE_URL ? await freshPgSchema() : null;
    const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-sso-multi-'));
    const env: Record<string, string> = {
      WEBHOOK_ALLOW_PRIVATE: 'true',
      PUBLIC_URL: PUBLIC,
      ...(pg ? { DATABASE_URL: pg.url, MASTER_KEY: randomBytes(32).toString('base64') } : {}),
    };
    const a = await startServer({ dataDir, env });
    const b = await startServer({ dataDir, env });
    try {
      const owner = await signupUser(a, 'Owner');
      const put = await a.call(
        ops.putSso,
        {
          body: {
            issuer: provider.issuer,
            clientId: 'svcenv-app',
            clientSecret: CLIENT_SECRET,
            domains: ['multi.test'],
            enforce: false,
          },
        },
        owner.jwt,
      );
      expect(put.status, put.text).toBe(200);
      const br = browser();
      const s = await br.get(a, '/v1/auth/sso/start?email=alice%40multi.test');
      expect(s.status).toBe(302);
      const back = await provider.signIn(s.location, 'alice');
      const cb = await br.get(b, local(back));
      expect(cb.location).toBe(`${PUBLIC}/`);
      const session = br.jar.get('svcenv_session');
      expect((await a.request('GET', '/v1/me', { token: session })).body).toMatchObject({
        user: { email: 'alice@multi.test' },
      });
      // Single use across instances: the same callback on the first instance is refused.
      expect((await br.get(a, local(back))).location).toBe(`${PUBLIC}/login?sso_error=invalid_state`);
    } finally {
      await a.stop();
      await b.stop();
      await provider.close();
      await pg?.drop();
    }
  }, 90_000);
});
