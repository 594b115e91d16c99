import { createHmac, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { identity as identitySchema, listTokensResponse, oidcLoginResponse } from '@svcenv/contract';
import { operations as ops } from '@svcenv/contract/operations';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import type { Resolver } from '../src/lib/net-guard.js';
import { createProject, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';
import { type Issuer, newSigningKey, startIssuer } from './oidc-issuer.js';
import { startReceiver } from './receiver.js';

/**
 * D60 workload identities against a real issuer on loopback (real RS256 and ES256 keys, real JWTs), and the
 * attacks on the exchange, each refused by its own guard.
 */
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

describe(`workload identities (${dialectName})`, () => {
  let app: TestApp;
  let issuer: Issuer;
  let jwt: string;
  let projectId: string;
  const clock = new ManualClock(new Date('2026-12-01T10:00:00.000Z'));
  const nowS = () => Math.floor(clock.now().getTime() / 1000);
  const AUD = 'https://svcenv.example/aud-secret-value';

  beforeAll(async () => {
    issuer = await startIssuer();
    app = await startApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    ({ jwt } = await signupUser(app, 'Owner'));
    projectId = (await createProject(app, jwt, { name: 'Payments API' })).id;
    await upsert(app, jwt, projectId, ['dev', 'prod'], [{ key: 'A', value: 'one', type: 'plain' }]);
  }, 60_000);
  afterAll(async () => {
    await app.stop();
    await issuer.stop();
  });

  const create = async (body: Record<string, unknown> = {}, token = jwt) =>
    app.call(
      ops.createIdentity,
      {
        body: {
          name: `ci-${randomBytes(4).toString('hex')}`,
          issuer: issuer.url,
          audience: AUD,
          envs: ['dev'],
          projectId,
          ...body,
        } as never,
      },
      token,
    );
  const made = async (body: Record<string, unknown> = {}) => {
    const res = await create(body);
    if (res.status !== 201) throw new Error(`create identity: ${res.status} ${res.text}`);
    return res.body;
  };
  const claims = (over: Record<string, unknown> = {}) => ({
    iss: issuer.url,
    aud: AUD,
    sub: 'repo:acme/payments:ref:refs/heads/main',
    repository: 'acme/payments',
    iat: nowS(),
    exp: nowS() + 300,
    ...over,
  });
  const login = (identity: string, token: string, headers: Record<string, string> = {}) =>
    app.call(ops.oidcLogin, { body: { identity, token }, headers });
  const audit = async (action: string) => {
    const res = await app.request('GET', `/v1/workspace/audit?action=${action}&limit=200`, { token: jwt });
    return (res.body as { logs: { actorName: string | null; actorType: string; detail: Record<string, unknown> }[] })
      .logs;
  };

  it('lets an Owner create, list, read, change and delete identities, with defaults, 409 and audit', async () => {
    const res = await create({ name: 'deploy', projectId: 'payments-api', subject: 'repo:acme/*', claims: {} });
    expect(res.status).toBe(201);
    const id = res.body;
    expect(identitySchema.strict().parse(id)).toEqual({
      id: expect.any(String),
      name: 'deploy',
      issuer: issuer.url,
      audience: AUD,
      subject: 'repo:acme/*',
      claims: {},
      scope: 'read',
      projectId, // the slug was accepted (D58) and stored as the id
      envs: ['dev'],
      ttlSeconds: 900,
      trustedCidrs: [],
      createdAt: clock.now().toISOString(),
      lastLoginAt: null,
    });
    expect((await create({ name: 'deploy' })).error).toMatchObject({ code: 'CONFLICT', field: 'name' });
    const list = await app.call(ops.listIdentities, {}, jwt);
    expect(list.body.identities.map((i) => i.name)).toContain('deploy');
    expect((await app.call(ops.getIdentity, { params: { id: id.id } }, jwt)).body).toEqual(id);
    const patched = await app.call(
      ops.updateIdentity,
      { params: { id: id.id }, body: { ttlSeconds: 3600, trustedCidrs: ['10.0.0.0/8', '2001:db8::/32'] } },
      jwt,
    );
    expect(patched.body).toMatchObject({ ttlSeconds: 3600, trustedCidrs: ['10.0.0.0/8', '2001:db8::/32'] });
    expect((await app.call(ops.deleteIdentity, { params: { id: id.id } }, jwt)).status).toBe(204);
    expect((await app.call(ops.getIdentity, { params: { id: id.id } }, jwt)).status).toBe(404);
    // The name is free again once deleted.
    expect((await create({ name: 'deploy' })).status).toBe(201);
    for (const action of ['identity.create', 'identity.update', 'identity.delete']) {
      const [entry] = await audit(action);
      expect(entry, action).toBeDefined();
    }
  });

  it('refuses bad fields with 400 naming them', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(65) }, 'name'],
      [{ issuer: 'not a url' }, 'issuer'],
      [{ issuer: 'ftp://127.0.0.1/' }, 'issuer'],
      [{ issuer: `${issuer.url}/?x=1` }, 'issuer'],
      [{ issuer: 'https://169.254.169.254/' }, 'issuer'], // metadata: refused in every configuration (D5)
      [{ audience: '' }, 'audience'],
      [{ scope: 'deploy' }, 'scope'],
      [{ envs: [] }, 'envs'],
      [{ envs: ['*', 'dev'] }, 'envs'],
      [{ ttlSeconds: 59 }, 'ttlSeconds'],
      [{ ttlSeconds: 43_201 }, 'ttlSeconds'],
      [{ trustedCidrs: ['10.0.0.0/33'] }, 'trustedCidrs'],
      [{ trustedCidrs: ['not-an-address'] }, 'trustedCidrs'],
      [{ trustedCidrs: Array.from({ length: 21 }, (_, i) => `10.0.0.${i}`) }, 'trustedCidrs'],
      [{ projectId: 'Not A Slug!' }, 'projectId'],
      [{ projectId: 'no-such-project' }, 'projectId'],
      [{ projectId: '00000000-0000-4000-8000-000000000000' }, 'projectId'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error.field, JSON.stringify(body)).toBe(field);
    }
    expect((await create({ ttlSeconds: 60, trustedCidrs: ['127.0.0.1', '::1'] })).status).toBe(201);
    expect((await create({ ttlSeconds: 43_200 })).status).toBe(201);
  });

  it('is for Owners with a session only', async () => {
    const member = await signupUser(app, 'Member');
    const inv = await app.request('POST', '/v1/workspace/invites', {
      token: jwt,
      body: { email: member.email, wsRole: 'Member' },
    });
    // An existing account is added at once (200); its session then switches to this workspace.
    expect(inv.status).toBe(200);
    const session = await app.request('GET', '/v1/auth/session', { token: jwt });
    const workspaceId = (session.body as { user: { workspaceId: string } }).user.workspaceId;
    const switched = await app.request('POST', '/v1/auth/switch-workspace', {
      token: member.jwt,
      body: { workspaceId },
    });
    const memberJwt = (switched.body as { token: string }).token;
    expect((await create({}, memberJwt)).status).toBe(403);
    expect((await app.call(ops.listIdentities, {}, memberJwt)).status).toBe(403);
    const tok = await app.call(ops.createToken, { body: { name: 't', envs: ['*'], scope: 'write' } }, jwt);
    expect((await app.call(ops.listIdentities, {}, tok.body.token)).status).toBe(401);
  });

  it('exchanges RS256 and ES256 tokens for a short-lived token with the identity’s access alone', async () => {
    const receiver = await startReceiver();
    const hook = await app.request('POST', '/v1/workspace/webhooks', {
      token: jwt,
      body: { name: 'h', url: receiver.url('/h'), events: ['vars.bulk_upsert'] },
    });
    expect(hook.status).toBe(201);
    const id = await made({
      name: 'writer',
      scope: 'write',
      subject: 'repo:acme/payments:*',
      claims: { repository: 'acme/*' },
    });
    for (const alg of ['RS256', 'ES256'] as const) {
      const platformJwt = await issuer.sign(claims(), { alg });
      const res = await login(id.id, platformJwt);
      expect(res.status, res.text).toBe(201);
      expect(oidcLoginResponse.strict().parse(res.body)).toEqual({
        token: expect.stringMatching(/^tok_live_[0-9A-Za-z]{38}$/),
        expiresAt: new Date(clock.now().getTime() + 900_000).toISOString(),
        scope: 'write',
        envs: ['dev'],
        projectId,
      });
    }
    const { token } = (await login(id.id, await issuer.sign(claims()))).body;
    const pull = await app.request('GET', `/v1/projects/${projectId}/envs/dev/pull?metadata=false`, { token });
    expect(pull.text).toBe('A=one\n');
    // Only its environments.
    expect((await app.request('GET', `/v1/projects/${projectId}/envs/prod/pull`, { token })).status).toBe(403);
    // Not listed with the access tokens.
    const list = await app.request('GET', '/v1/tokens', { token: jwt, schema: listTokensResponse });
    expect(list.body.tokens.map((t) => t.name).join()).not.toContain('identity:');
    // It describes itself and names its identity.
    const self = await app.call(ops.describeOwnToken, {}, token);
    expect(self.body).toMatchObject({ name: 'identity:writer', identity: { id: id.id, name: 'writer' } });
    // Its writes are the identity's, in the audit log and in webhooks.
    await upsert(app, token, projectId, ['dev'], [{ key: 'B', value: 'two', type: 'plain' }]);
    const [write] = await audit('vars.bulk_upsert');
    expect(write).toMatchObject({ actorType: 'token', actorName: 'identity:writer' });
    const [delivery] = await receiver.waitFor(1);
    expect(delivery!.body.actor).toBe('identity:writer');
    await receiver.stop();
    // Each login audited with the name and sub, never the JWT; lastLoginAt set.
    const logins = await audit('identity.login');
    expect(logins[0]).toMatchObject({ actorName: 'identity:writer', detail: { name: 'writer', sub: claims().sub } });
    expect(JSON.stringify(logins)).not.toContain('eyJ');
    expect((await app.call(ops.getIdentity, { params: { id: id.id } }, jwt)).body.lastLoginAt).toBe(
      clock.now().toISOString(),
    );
    // Refused once it expires.
    clock.advance(901_000);
    const late = await app.request('GET', `/v1/projects/${projectId}/envs/dev/pull`, { token });
    expect(late.status).toBe(401);
  });

  it('refuses every forged or mismatched token with 401 naming the check, never the expected value', async () => {
    const id = await made({ subject: 'repo:acme/payments:*', claims: { repository: 'acme/payments' } });
    const attacker = await newSigningKey('RS256', 'rsa-1'); // the issuer's kid, the attacker's key
    const attackerJwk = attacker.publicJwk;
    // A server the attacker controls, to see whether the API ever fetches a jku or x5u.
    let attackerHits = 0;
    const evil = createServer((_req, res) => {
      attackerHits++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [attackerJwk] }));
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/jwks`;
    const rsaPublic = issuer.keys.find((k) => k.alg === 'RS256')!.publicJwk;
    const hs256 = (secret: Buffer | string) => {
      const head = b64({ alg: 'HS256', kid: 'rsa-1', typ: 'JWT' });
      const body = b64(claims());
      return `${head}.${body}.${createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url')}`;
    };
    const { createPublicKey } = await import('node:crypto');
    const pem = createPublicKey({ key: rsaPublic as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const signedByAttacker = (header: Record<string, unknown>) =>
      new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: 'rsa-1', ...header }).sign(attacker.privateKey);
    const cases: [string, string | Promise<string>, string][] = [
      ['alg none', `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}.`, 'algorithm'],
      ['HS256 with the public key (PEM) as secret', hs256(String(pem)), 'algorithm'],
      ['HS256 with the JWK as secret', hs256(JSON.stringify(rsaPublic)), 'algorithm'],
      ['embedded jwk', signedByAttacker({ jwk: attackerJwk }), 'signature'],
      ['jku', signedByAttacker({ jku: evilUrl, kid: 'evil' }), 'no signing key'],
      ['x5u', signedByAttacker({ x5u: evilUrl }), 'signature'],
      ['x5c', signedByAttacker({ x5c: ['MIIBIjANBgkq'] }), 'signature'],
      ['not a JWT', 'abc.def', 'well-formed'],
      ['wrong iss', issuer.sign(claims({ iss: 'https://evil.example' })), 'issuer does not match'],
      ['wrong aud string', issuer.sign(claims({ aud: 'https://other' })), 'audience does not match'],
      ['wrong aud array', issuer.sign(claims({ aud: ['a', 'b'] })), 'audience does not match'],
      ['wrong sub', issuer.sign(claims({ sub: 'repo:evil/payments:ref:main' })), 'subject does not match'],
      ['wrong claim', issuer.sign(claims({ repository: 'acme/payments-fork' })), 'claim "repository" does not match'],
      ['missing claim', issuer.sign(claims({ repository: undefined })), 'claim "repository" does not match'],
      ['non-string claim', issuer.sign(claims({ repository: ['acme/payments'] })), 'claim "repository"'],
      ['expired past leeway', issuer.sign(claims({ exp: nowS() - 61 })), 'expired'],
      ['no exp', issuer.sign(claims({ exp: undefined })), 'expiry'],
      ['nbf past leeway', issuer.sign(claims({ nbf: nowS() + 61 })), 'nbf'],
      ['iat past leeway', issuer.sign(claims({ iat: nowS() + 61 })), 'iat'],
    ];
    for (const [name, token, message] of cases) {
      const res = await login(id.id, await token);
      expect(res.status, name).toBe(401);
      expect(res.error.message, name).toContain(message);
      expect(res.error.message, name).not.toContain(AUD);
      expect(res.error.message, name).not.toContain(issuer.url);
      expect(res.error.message, name).not.toContain('acme');
    }
    expect(attackerHits, 'a jku or x5u was fetched').toBe(0);
    await new Promise<void>((r) => evil.close(() => r()));
    // The edges inside the leeway pass; an aud array that contains the audience passes.
    for (const over of [
      { exp: nowS() - 59 },
      { nbf: nowS() + 59 },
      { iat: nowS() + 59 },
      { aud: ['https://other', AUD] },
    ]) {
      expect((await login(id.id, await issuer.sign(claims(over)))).status, JSON.stringify(over)).toBe(201);
    }
    const failed = await audit('identity.login_failed');
    expect(failed.length).toBeGreaterThanOrEqual(cases.length);
    expect(failed[0]!.detail).toEqual({ name: id.name, check: 'iat' });
    expect(JSON.stringify(failed)).not.toContain('eyJ');
    // An unknown identity says so, without an audit entry in anyone's workspace.
    const unknown = await login('00000000-0000-4000-8000-000000000000', await issuer.sign(claims()));
    expect(unknown.status).toBe(401);
  });

  it('refuses a 10 MB token (400) and a 10 MB JWKS (401), in bounded time', async () => {
    const id = await made();
    const big = await login(id.id, 'a'.repeat(10_000_000));
    expect(big.status).toBe(400);
    expect(big.error.field).toBe('token');
    const other = await startIssuer();
    try {
      other.setMode('huge');
      const id2 = await made({ issuer: other.url });
      const started = Date.now();
      const res = await login(id2.id, await other.sign({ ...claims(), iss: other.url }));
      expect(res.status).toBe(401);
      expect(res.error.message).toContain('could not be fetched');
      expect(Date.now() - started).toBeLessThan(6_000);
    } finally {
      await other.stop();
    }
  });

  it('refetches the JWKS once for a new kid, at most once per 60 s per issuer, once for 200 concurrent logins', async () => {
    const rot = await startIssuer();
    try {
      const ids = await Promise.all([0, 1, 2, 3].map(() => made({ issuer: rot.url })));
      const c = (over: Record<string, unknown> = {}) => claims({ iss: rot.url, ...over });
      expect((await login(ids[0]!.id, await rot.sign(c()))).status).toBe(201);
      expect(rot.counts.jwks).toBe(1);
      const next = await rot.rotate('rsa-2');
      const tokens = await Promise.all(ids.map(() => rot.sign(c(), { key: next })));
      // 200 logins at once, 50 per identity (under the 60 per minute per address and identity).
      const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => login(ids[i % 4]!.id, tokens[i % 4]!)));
      expect(answers.map((a) => a.status).filter((s) => s !== 201)).toEqual([]);
      expect(rot.counts.jwks).toBe(2);
      // A made-up kid within 60 s of that refetch: refused without a fetch.
      const stranger = await newSigningKey('RS256', 'rsa-made-up');
      const res = await login(ids[0]!.id, await rot.sign(c(), { key: stranger }));
      expect(res.status).toBe(401);
      expect(res.error.message).toContain('no signing key');
      expect(rot.counts.jwks).toBe(2);
      clock.advance(61_000);
      await login(ids[0]!.id, await rot.sign(c(), { key: stranger }));
      expect(rot.counts.jwks).toBe(3);
    } finally {
      await rot.stop();
    }
  }, 60_000);

  it('answers within bounded time when the issuer is unreachable or hangs, and other requests go on', async () => {
    const closed = await startIssuer();
    const deadUrl = closed.url;
    await closed.stop();
    const dead = await made({ issuer: deadUrl });
    let started = Date.now();
    const res = await login(dead.id, await issuer.sign(claims({ iss: deadUrl })));
    expect(res.status).toBe(401);
    expect(res.error.message).toContain('could not be fetched');
    expect(Date.now() - started).toBeLessThan(2_000);

    const slow = await startIssuer();
    try {
      slow.setMode('hang');
      const id = await made({ issuer: slow.url });
      started = Date.now();
      const pending = login(id.id, await slow.sign({ ...claims(), iss: slow.url }));
      // Meanwhile the server answers everyone else at once.
      await new Promise((r) => setTimeout(r, 500));
      const t0 = Date.now();
      expect((await app.request('GET', '/healthz')).status).toBe(200);
      expect(Date.now() - t0).toBeLessThan(500);
      const answer = await pending;
      expect(answer.status).toBe(401);
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(4_900);
      expect(took).toBeLessThan(7_000);
    } finally {
      await slow.stop();
    }
  }, 30_000);

  it('ends the tokens of an identity at once when it is updated or deleted', async () => {
    const id = await made();
    const first = (await login(id.id, await issuer.sign(claims()))).body.token;
    const pull = (t: string) => app.request('GET', `/v1/projects/${projectId}/envs/dev/pull`, { token: t });
    expect((await pull(first)).status).toBe(200);
    await app.call(ops.updateIdentity, { params: { id: id.id }, body: { ttlSeconds: 120 } }, jwt);
    expect((await pull(first)).status).toBe(401);
    const second = (await login(id.id, await issuer.sign(claims()))).body.token;
    expect((await pull(second)).status).toBe(200);
    await app.call(ops.deleteIdentity, { params: { id: id.id } }, jwt);
    expect((await pull(second)).status).toBe(401);
    expect((await login(id.id, await issuer.sign(claims()))).status).toBe(401);
  });

  it('limits sign-ins to 60 per minute per address and identity', async () => {
    const id = await made();
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++) statuses.push((await login(id.id, 'x.y.z')).status);
    expect(statuses.slice(0, 60).every((s) => s === 401)).toBe(true);
    const last = await login(id.id, 'x.y.z');
    expect(last.status).toBe(429);
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another identity from the same address is counted on its own.
    const other = await made();
    expect((await login(other.id, await issuer.sign(claims()))).status).toBe(201);
  });
});

describe(`workload identity issuers on D5's address rules (${dialectName})`, () => {
  it('refuses private and metadata issuers without WEBHOOK_ALLOW_PRIVATE, at creation and at sign-in', async () => {
    const issuer = await startIssuer();
    // A name that resolves to a public address when the identity is made, and to loopback later (rebinding).
    let answer = '93.184.216.34';
    const resolve: Resolver = async () => [{ address: answer, family: 4 }];
    const app = await startApp({ resolve });
    try {
      const { jwt } = await signupUser(app, 'Owner');
      const body = (issuerUrl: string) => ({
        body: { name: `i-${randomBytes(3).toString('hex')}`, issuer: issuerUrl, audience: 'a', envs: ['*'] },
      });
      for (const url of [
        issuer.url,
        'https://127.0.0.1/',
        'https://10.1.2.3/',
        'https://169.254.169.254/',
        'https://[::1]/',
      ]) {
        const res = await app.call(ops.createIdentity, body(url), jwt);
        expect(res.status, url).toBe(400);
        expect(res.error.field).toBe('issuer');
      }
      const made = await app.call(ops.createIdentity, body('https://issuer.example.test'), jwt);
      expect(made.status).toBe(201);
      answer = '127.0.0.1';
      const res = await app.call(ops.oidcLogin, { body: { identity: made.body.id, token: 'a.b.c' } });
      expect(res.status).toBe(401);
      const signed = await issuer.sign({ iss: 'https://issuer.example.test', aud: 'a', exp: Date.now() / 1000 + 60 });
      const again = await app.call(ops.oidcLogin, { body: { identity: made.body.id, token: signed } });
      expect(again.status).toBe(401);
      expect(again.error.message).toContain('could not be fetched');
      expect(issuer.counts.discovery + issuer.counts.jwks + issuer.counts.other).toBe(0);
    } finally {
      await app.stop();
      await issuer.stop();
    }
  });
});
