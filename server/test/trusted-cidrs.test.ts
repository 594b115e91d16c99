import { operations as ops } from '@svcenv/contract/operations';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';
import { type Issuer, startIssuer } from './oidc-issuer.js';

/**
 * D62: access tokens and workload identities bound to networks. The tests speak to the server from
 * 127.0.0.1; with TRUST_PROXY and TRUSTED_PROXIES=127.0.0.1 the test client is the proxy, and the address is
 * the entry that proxy appended to X-Forwarded-For (the right-most), never one the client wrote before it.
 */
describe(`network binding (${dialectName})`, () => {
  let direct: TestApp;
  let proxied: TestApp;
  let issuer: Issuer;

  beforeAll(async () => {
    issuer = await startIssuer();
    direct = await startApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    proxied = await startApp({
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', TRUST_PROXY: 'true', TRUSTED_PROXIES: '127.0.0.1' },
    });
  }, 60_000);
  afterAll(async () => {
    await direct.stop();
    await proxied.stop();
    await issuer.stop();
  });

  const setup = async (app: TestApp) => {
    const { jwt } = await signupUser(app, 'Owner');
    const p = await createProject(app, jwt);
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: 'one', type: 'plain' }]);
    return { jwt, p };
  };
  const denied = async (app: TestApp, jwt: string) => {
    const res = await app.request('GET', '/v1/workspace/audit?action=token.denied_address', { token: jwt });
    return (res.body as { logs: { detail: { address: string } }[] }).logs;
  };

  it('takes trustedCidrs on tokens, shows them on every token answer, and refuses bad entries', async () => {
    const { jwt } = await setup(direct);
    const tok = await createToken(direct, jwt, { trustedCidrs: ['10.0.0.0/8', '2001:db8::1'] });
    expect(tok.trustedCidrs).toEqual(['10.0.0.0/8', '2001:db8::1']);
    const list = await direct.call(ops.listTokens, {}, jwt);
    expect(list.body.tokens.find((t) => t.id === tok.id)?.trustedCidrs).toEqual(['10.0.0.0/8', '2001:db8::1']);
    const rotated = await direct.call(ops.rotateToken, { params: { id: tok.id } }, jwt);
    expect(rotated.body.trustedCidrs).toEqual(['10.0.0.0/8', '2001:db8::1']);
    for (const bad of [['10.0.0.0/40'], ['10.0.0'], ['::ffff:10.0.0.1'], Array.from({ length: 21 }, () => '::1')]) {
      const res = await direct.call(ops.createToken, { body: { name: 'x', envs: ['*'], trustedCidrs: bad } }, jwt);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.error.field).toBe('trustedCidrs');
    }
  });

  it('refuses a bound token from elsewhere with 403, changing nothing, audited with the address', async () => {
    const { jwt, p } = await setup(direct);
    const away = await createToken(direct, jwt, { scope: 'write', trustedCidrs: ['10.0.0.0/8'] });
    const home = await createToken(direct, jwt, { scope: 'write', trustedCidrs: ['127.0.0.0/8', '::1'] });
    const write = (token: string, value: string) =>
      direct.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/A`, { token, body: { value } });
    const res = await write(away.token, 'changed');
    expect(res.status).toBe(403);
    expect(res.error).toEqual({ code: 'FORBIDDEN', message: 'token not allowed from this address', field: '' });
    const pull = await direct.request('GET', `/v1/projects/${p.id}/envs/dev/pull?metadata=false`, {
      token: home.token,
    });
    expect(pull.text).toBe('A=one\n');
    expect((await write(home.token, 'two')).status).toBe(200);
    const [entry] = await denied(direct, jwt);
    expect(entry?.detail).toEqual({ address: '127.0.0.1' });
  });

  it('takes the address the trusted proxy appended, not one the client wrote, nor one from an untrusted peer', async () => {
    const { jwt, p } = await setup(proxied);
    const tok = await createToken(proxied, jwt, { trustedCidrs: ['10.0.0.0/8'] });
    const pull = (xff: string, app = proxied, token = tok.token) =>
      app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token, headers: { 'x-forwarded-for': xff } });
    expect((await pull('10.1.2.3')).status).toBe(200);
    // A client that writes 10.1.2.3 itself: the proxy appends the real address, and that is the one used.
    expect((await pull('10.1.2.3, 203.0.113.9')).status).toBe(403);
    expect((await denied(proxied, jwt))[0]?.detail).toEqual({ address: '203.0.113.9' });
    // Without TRUST_PROXY (the direct server), X-Forwarded-For is nobody's word.
    const d = await setup(direct);
    const dtok = await createToken(direct, d.jwt, { trustedCidrs: ['10.0.0.0/8'] });
    const res = await direct.request('GET', `/v1/projects/${d.p.id}/envs/dev/pull`, {
      token: dtok.token,
      headers: { 'x-forwarded-for': '10.1.2.3' },
    });
    expect(res.status).toBe(403);
  });

  it('binds an identity: its sign-in and the tokens it issued work only from its ranges', async () => {
    const { jwt, p } = await setup(proxied);
    const res = await proxied.call(
      ops.createIdentity,
      {
        body: {
          name: 'bound',
          issuer: issuer.url,
          audience: 'svcenv',
          envs: ['dev'],
          projectId: p.id,
          trustedCidrs: ['10.0.0.0/8'],
        },
      },
      jwt,
    );
    expect(res.status).toBe(201);
    const now = Math.floor(Date.now() / 1000);
    const platform = await issuer.sign({ iss: issuer.url, aud: 'svcenv', sub: 's', exp: now + 60 });
    const login = (xff: string) =>
      proxied.call(ops.oidcLogin, {
        body: { identity: res.body.id, token: platform },
        headers: { 'x-forwarded-for': xff },
      });
    const outside = await login('10.9.9.9, 198.51.100.7');
    expect(outside.status).toBe(403);
    expect(outside.error.message).toBe('token not allowed from this address');
    const inside = await login('10.9.9.9');
    expect(inside.status).toBe(201);
    const pull = (xff: string) =>
      proxied.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, {
        token: inside.body.token,
        headers: { 'x-forwarded-for': xff },
      });
    expect((await pull('10.1.1.1')).status).toBe(200);
    expect((await pull('198.51.100.7')).status).toBe(403);
    const addresses = (await denied(proxied, jwt)).map((e) => e.detail.address);
    expect(addresses).toEqual(['198.51.100.7', '198.51.100.7']);
  });
});
