/**
 * D43: long-poll pull (`wait=S` with a matching If-None-Match), over HTTP on SQLite and PostgreSQL, and across
 * two instances on one PostgreSQL database.
 */
import { randomBytes } from 'node:crypto';
import { auditPage } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  createToken,
  dialectName,
  freshPgSchema,
  rawConnection,
  signupUser,
  startApp,
  startServer,
  type TestApp,
  upsert,
} from './harness.js';

const since = (t: number) => Date.now() - t;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`long-poll pull (${dialectName})`, () => {
  let app: TestApp;
  let jwt: string;
  beforeAll(async () => {
    app = await startApp({ env: { DEFAULT_PLAN: 'enterprise', LONGPOLL_MAX_PER_TOKEN: '2' } });
    ({ jwt } = await signupUser(app));
  });
  afterAll(async () => {
    await app?.stop();
  });

  async function setup() {
    const p = await createProject(app, jwt);
    await upsert(app, jwt, p.id, ['dev', 'staging'], [{ key: 'A', value: 'one', type: 'plain' }]);
    const token = (await createToken(app, jwt, { projectId: p.id })).token;
    const url = `/v1/projects/${p.id}/envs/dev/pull?metadata=false`;
    const first = await app.request('GET', url, { token });
    return { p, token, url, etag: first.headers.get('etag')! };
  }

  it('answers at once without a matching If-None-Match; holds and wakes with the new body when the environment changes', async () => {
    const { p, token, url, etag } = await setup();
    const t0 = Date.now();
    const direct = await app.request('GET', `${url}&wait=30`, { token });
    expect([direct.status, direct.text]).toEqual([200, 'A=one\n']);
    expect(since(t0)).toBeLessThan(2000);

    const t1 = Date.now();
    const held = app.request('GET', `${url}&wait=30`, { token, headers: { 'if-none-match': etag } });
    await sleep(400);
    // A change elsewhere (another environment) does not answer it.
    await upsert(app, jwt, p.id, ['staging'], [{ key: 'A', value: 'elsewhere', type: 'plain' }]);
    await sleep(300);
    const tChange = Date.now();
    await app.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/A`, { token: jwt, body: { value: 'two' } });
    const res = await held;
    expect([res.status, res.text]).toEqual([200, 'A=two\n']);
    expect(res.headers.get('etag')).not.toBe(etag);
    expect(since(t1)).toBeGreaterThanOrEqual(650);
    expect(since(tChange)).toBeLessThan(1000);
  });

  it('answers 304 when the time is up, and one audit row per answer', async () => {
    const { p, token, url, etag } = await setup();
    const t0 = Date.now();
    const res = await app.request('GET', `${url}&wait=1`, { token, headers: { 'if-none-match': etag } });
    expect(res.status).toBe(304);
    expect(since(t0)).toBeGreaterThanOrEqual(950);
    const audit = await app.request('GET', `/v1/projects/${p.id}/audit?limit=50`, { token: jwt, schema: auditPage });
    const pulls = audit.body.logs.filter((l) => l.action === 'vars.pull');
    expect(pulls).toHaveLength(2);
    expect(pulls[0]?.detail).toMatchObject({ wait: 1 });
    for (const bad of ['0', '61', 'x', '1.5']) {
      const r = await app.request('GET', `${url}&wait=${bad}`, { token });
      expect(r.error, bad).toMatchObject({ code: 'VALIDATION', field: 'wait' });
    }
  });

  it('checks the credential again before a held pull answers: a token revoked meanwhile gets 401', async () => {
    const { p, url, etag } = await setup();
    const tok = await createToken(app, jwt, { projectId: p.id });
    const held = app.request('GET', `${url}&wait=30`, { token: tok.token, headers: { 'if-none-match': etag } });
    await sleep(300);
    await app.request('DELETE', `/v1/tokens/${tok.id}`, { token: jwt });
    await app.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/A`, { token: jwt, body: { value: 'after-revoke' } });
    const res = await held;
    expect(res.status).toBe(401);
    expect(res.text).not.toContain('after-revoke');
  });

  it('holds at most LONGPOLL_MAX_PER_TOKEN pulls of one token; beyond, a pull answers at once', async () => {
    const { token, url, etag } = await setup();
    const headers = { 'if-none-match': etag };
    const a = app.request('GET', `${url}&wait=3`, { token, headers });
    const b = app.request('GET', `${url}&wait=3`, { token, headers });
    await sleep(300);
    const t0 = Date.now();
    const c = await app.request('GET', `${url}&wait=3`, { token, headers });
    expect(c.status).toBe(304);
    expect(since(t0)).toBeLessThan(1000);
    expect((await a).status).toBe(304);
    expect((await b).status).toBe(304);
  });
});

describe.skipIf(dialectName !== 'postgres')('long-poll across two instances on PostgreSQL', () => {
  it('wakes a pull held by one instance within a second of a write on the other', async () => {
    const schema = await freshPgSchema();
    const masterKey = randomBytes(32);
    const a = await startApp({ databaseUrl: schema.url, masterKey });
    const b = await startApp({ databaseUrl: schema.url, masterKey });
    try {
      const { jwt } = await signupUser(a);
      const p = await createProject(a, jwt);
      await upsert(a, jwt, p.id, ['dev'], [{ key: 'A', value: 'one', type: 'plain' }]);
      const token = (await createToken(a, jwt, { projectId: p.id })).token;
      const url = `/v1/projects/${p.id}/envs/dev/pull?metadata=false`;
      const etag = (await a.request('GET', url, { token })).headers.get('etag')!;
      const held = a.request('GET', `${url}&wait=30`, { token, headers: { 'if-none-match': etag } });
      await sleep(500);
      const t0 = Date.now();
      await b.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/A`, { token: jwt, body: { value: 'from-b' } });
      const res = await held;
      expect([res.status, res.text]).toEqual([200, 'A=from-b\n']);
      expect(since(t0)).toBeLessThan(1000);
    } finally {
      await a.stop();
      await b.stop();
      await schema.drop();
    }
  });
});

describe('long-poll while the server drains (the server process)', () => {
  it('answers a held pull 304 at once on SIGTERM', async () => {
    const srv = await startServer({ env: { DRAIN_GRACE_MS: '2000' } });
    const { jwt } = await signupUser(srv);
    const p = await createProject(srv, jwt);
    await upsert(srv, jwt, p.id, ['dev'], [{ key: 'A', value: 'one', type: 'plain' }]);
    const token = (await createToken(srv, jwt, { projectId: p.id })).token;
    const path = `/v1/projects/${p.id}/envs/dev/pull?metadata=false`;
    const etag = (await srv.request('GET', path, { token })).headers.get('etag')!;
    const socket = rawConnection(srv.url);
    socket.write(
      `GET ${path}&wait=60 HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\nif-none-match: ${etag}\r\n\r\n`,
    );
    await sleep(500);
    const t0 = Date.now();
    const code = srv.stop('SIGTERM');
    for (let i = 0; i < 100 && !socket.text().includes('HTTP/1.1'); i++) await sleep(20);
    expect(socket.text()).toMatch(/^HTTP\/1\.1 304 /);
    expect(since(t0)).toBeLessThan(1500);
    expect(await code).toBe(0);
  });
});
