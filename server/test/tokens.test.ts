import { auditPage, createTokenResponse, listTokensResponse, rotateTokenResponse } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import { tokenChecksumValid } from '../src/lib/ids.js';
import {
  createProject,
  createToken,
  dialectName,
  loginSession,
  projectList,
  signupUser,
  startApp,
  type TestApp,
  upsert,
} from './harness.js';

describe(`access tokens (${dialectName})`, () => {
  let app: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    app = await startApp({ clock });
  });
  afterAll(() => app.stop());

  it('creates a token shown once, in the D33 format, storing only bcrypt(SHA-256)', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    const res = await app.request('POST', '/v1/tokens', {
      token: jwt,
      body: { name: 'ci', envs: ['dev'], projectId: p.id, expiresIn: 30 },
      schema: createTokenResponse,
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      token: expect.any(String),
      name: 'ci',
      scope: 'read',
      envs: ['dev'],
      projectId: p.id,
      expiresAt: expect.any(String),
      trustedCidrs: [],
    });
    expect(res.body.token).toMatch(/^tok_live_[0-9A-Za-z]{38}$/);
    expect(tokenChecksumValid(res.body.token)).toBe(true);
    expect(Date.parse(res.body.expiresAt!) - clock.now().getTime()).toBeCloseTo(30 * 86400_000, -4);
    const row = await app.db.db
      .selectFrom('access_tokens')
      .selectAll()
      .where('id', '=', res.body.id)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).toMatch(/^\$2[aby]\$10\$/);
    expect(JSON.stringify(row)).not.toContain(res.body.token);
    const list = await app.request('GET', '/v1/tokens', { token: jwt, schema: listTokensResponse });
    expect(list.body.tokens).toEqual([
      {
        id: res.body.id,
        name: 'ci',
        tokenPrefix: res.body.token.slice(0, 16),
        scope: 'read',
        envs: ['dev'],
        projectId: p.id,
        lastUsedAt: null,
        expiresAt: res.body.expiresAt,
        createdAt: expect.any(String),
        trustedCidrs: [],
      },
    ]);
    expect(list.text).not.toContain(res.body.token);
  });

  it('validates expiresIn, scope and envs (D31)', async () => {
    const { jwt } = await signupUser(app);
    for (const [body, field] of [
      [{ name: 'x', envs: ['*'], expiresIn: 7 }, 'expiresIn'],
      [{ name: 'x', envs: ['*'], scope: 'admin' }, 'scope'],
      [{ name: 'x', envs: [] }, 'envs'],
      [{ name: 'x' }, 'envs'],
      [{ name: 'x', envs: ['*', 'dev'] }, 'envs'],
    ] as const) {
      const res = await app.request('POST', '/v1/tokens', { token: jwt, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error.field).toBe(field);
    }
    for (const expiresIn of [90, 365, null]) {
      expect(
        (await app.request('POST', '/v1/tokens', { token: jwt, body: { name: 'x', envs: ['*'], expiresIn } })).status,
      ).toBe(201);
    }
  });

  it('enforces scope, environment and project restrictions (spec, D32)', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    const other = await createProject(app, jwt);
    const devOnly = await createToken(app, jwt, { envs: ['dev'], projectId: p.id });
    expect((await app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token: devOnly.token })).status).toBe(200);
    const prod = await app.request('GET', `/v1/projects/${p.id}/envs/prod/pull`, { token: devOnly.token });
    expect(prod.status).toBe(403);
    expect(prod.error.code).toBe('FORBIDDEN');
    expect((await app.request('GET', `/v1/projects/${other.id}/envs/dev/pull`, { token: devOnly.token })).status).toBe(
      403,
    );
    const listed = await app.request('GET', '/v1/projects', { token: devOnly.token, schema: projectList });
    expect(listed.body.projects.map((x) => x.id)).toEqual([p.id]);
    const push = await app.request('POST', `/v1/projects/${p.id}/vars`, {
      token: devOnly.token,
      body: { envs: ['dev'], items: [{ key: 'A', value: 'b' }] },
    });
    expect(push.status).toBe(403);
    for (const scope of ['read', 'deploy']) {
      const t = await createToken(app, jwt, { scope });
      expect((await app.request('GET', `/v1/projects/${p.id}/envs/prod/pull`, { token: t.token })).status).toBe(200);
      expect(
        (
          await app.request('POST', `/v1/projects/${p.id}/vars`, {
            token: t.token,
            body: { envs: ['dev'], items: [{ key: 'A', value: 'b' }] },
          })
        ).status,
      ).toBe(403);
    }
    const write = await createToken(app, jwt, { scope: 'write' });
    expect(
      (
        await app.request('POST', `/v1/projects/${p.id}/vars`, {
          token: write.token,
          body: { envs: ['dev'], items: [{ key: 'A', value: 'b' }] },
        })
      ).status,
    ).toBe(200);
  });

  it('rotates: the old token fails at once, the new one has the same settings', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    const old = await createToken(app, jwt, { envs: ['dev'], scope: 'deploy' });
    const url = `/v1/projects/${p.id}/envs/dev/pull`;
    expect((await app.request('GET', url, { token: old.token })).status).toBe(200);
    const rot = await app.request('POST', `/v1/tokens/${old.id}/rotate`, { token: jwt, schema: rotateTokenResponse });
    expect(rot.status).toBe(200);
    expect(rot.body).toEqual({
      id: expect.any(String),
      token: expect.stringMatching(/^tok_live_/),
      name: expect.any(String),
      scope: 'deploy',
      envs: ['dev'],
      trustedCidrs: [],
    });
    expect((await app.request('GET', url, { token: old.token })).status).toBe(401);
    expect((await app.request('GET', url, { token: rot.body.token })).status).toBe(200);
    expect((await app.request('POST', `/v1/tokens/${old.id}/rotate`, { token: jwt })).status).toBe(404);
  });

  it('refuses to rotate an expired token (the new one would be born expired); rotate takes no input', async () => {
    const owner = await signupUser(app);
    const t = await createToken(app, owner.jwt, { expiresIn: 30 });
    const withInput = await app.request('POST', `/v1/tokens/${t.id}/rotate`, { token: owner.jwt, body: { x: 1 } });
    expect(withInput.status).toBe(400);
    expect(withInput.error).toMatchObject({ code: 'VALIDATION', field: 'x' });
    clock.advance(31 * 86400_000);
    try {
      const login = await app.request('POST', '/v1/auth/login', {
        body: { email: owner.email, password: owner.password },
        schema: loginSession,
      });
      const res = await app.request('POST', `/v1/tokens/${t.id}/rotate`, { token: login.body.token });
      expect(res.status).toBe(409);
      expect(res.error).toEqual({ code: 'CONFLICT', message: expect.stringContaining('expired'), field: '' });
    } finally {
      clock.set(new Date());
    }
  });

  it('revokes immediately; an expired token is 401; a mistyped token is 401', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    const url = `/v1/projects/${p.id}/envs/dev/pull`;
    const t = await createToken(app, jwt);
    expect((await app.request('GET', url, { token: t.token })).status).toBe(200);
    expect((await app.request('DELETE', `/v1/tokens/${t.id}`, { token: jwt })).status).toBe(204);
    expect((await app.request('GET', url, { token: t.token })).status).toBe(401);
    expect((await app.request('DELETE', `/v1/tokens/${t.id}`, { token: jwt })).status).toBe(404);
    const exp = await createToken(app, jwt, { expiresIn: 30 });
    expect((await app.request('GET', url, { token: exp.token })).status).toBe(200);
    clock.advance(31 * 86400_000);
    expect((await app.request('GET', url, { token: exp.token })).status).toBe(401);
    clock.set(new Date());
    const mistyped = `${exp.token.slice(0, -1)}${exp.token.endsWith('A') ? 'B' : 'A'}`;
    expect((await app.request('GET', url, { token: mistyped })).status).toBe(401);
  });

  it('records lastUsedAt, at most once a minute (D33)', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    const t = await createToken(app, jwt);
    await app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token: t.token });
    await new Promise((r) => setTimeout(r, 50));
    const list = await app.request('GET', '/v1/tokens', { token: jwt, schema: listTokensResponse });
    expect(list.body.tokens.find((x) => x.id === t.id)?.lastUsedAt).toEqual(expect.any(String));
  });

  it('lets a write token of the Owner manage variables across the project', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    const w = await createToken(app, jwt, { scope: 'write' });
    await upsert(app, w.token, p.id, ['dev', 'prod'], [{ key: 'K', value: 'v', type: 'plain' }]);
    const audit = await app.request('GET', `/v1/projects/${p.id}/audit`, { token: jwt, schema: auditPage });
    expect(audit.body.logs[0]).toMatchObject({ action: 'vars.bulk_upsert', actorType: 'token', actorId: w.id });
  });
});
