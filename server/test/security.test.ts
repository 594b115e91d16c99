import { historyResponse, listVarsResponse } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  createProject,
  createToken,
  dialectName,
  openApiDocument,
  type RequestOptions,
  rawConnection,
  signupUser,
  startApp,
  type TestApp,
  upsert,
} from './harness.js';

describe(`security (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  it('never writes a planted value, password or token to a log line, an error body or an audit entry', async () => {
    const CANARY = 'CANARY_7f3a9c_do_not_leak';
    const bodies: string[] = [];
    const call = async <S extends z.ZodType = z.ZodUnknown>(method: string, path: string, opts?: RequestOptions<S>) => {
      const res = await app.request(method, path, opts);
      if (res.status >= 400) bodies.push(res.text);
      return res;
    };
    const { jwt, email } = await signupUser(app);
    const p = await createProject(app, jwt);
    const base = `/v1/projects/${p.id}/envs/dev`;
    const write = await createToken(app, jwt, { scope: 'write' });
    await upsert(
      app,
      jwt,
      p.id,
      ['dev', 'prod'],
      [
        { key: 'SECRET', value: CANARY, type: 'secret' },
        { key: 'PLAIN', value: `plain-${CANARY}`, type: 'plain' },
        { key: 'REF', value: '${SECRET}', type: 'plain' },
      ],
    );
    await call('GET', `${base}/vars?reveal=true`, { token: jwt });
    await call('PUT', `${base}/vars/SECRET`, { token: jwt, body: { value: `${CANARY}-2` } });
    const hist = await call('GET', `${base}/vars/SECRET/history?reveal=true`, { token: jwt, schema: historyResponse });
    await call('POST', `${base}/vars/SECRET/restore`, { token: jwt, body: { versionId: hist.body.history[1]!.id } });
    await call('GET', `${base}/pull`, { token: write.token });
    await call('GET', `${base}/export?reveal=true&format=k8s`, { token: jwt });
    // Client mistakes that carry the canary: every error must leave it out.
    await call('POST', `/v1/projects/${p.id}/vars`, {
      token: jwt,
      body: { envs: ['dev'], items: [{ key: 'X', value: CANARY.repeat(3000), type: 'secret' }] },
    });
    await call('POST', `/v1/projects/${p.id}/vars`, {
      token: jwt,
      body: { envs: ['dev'], items: [{ key: 'X', value: CANARY, type: CANARY }] },
    });
    await call('PUT', `${base}/vars/SECRET`, { token: jwt, body: { value: CANARY, expiresAt: CANARY } });
    await call('PUT', `${base}/vars/SECRET`, {
      token: jwt,
      body: { value: CANARY, [`${CANARY}=${'x'.repeat(80)}`]: 1 },
    });
    await call('POST', '/v1/auth/login', { body: { email, password: CANARY } });
    await call('POST', '/v1/auth/signup', { body: { name: 'x', email: 'bad', password: CANARY } });
    await call('GET', `${base}/pull`, { token: `tok_live_${CANARY}` });
    await call('GET', `${base}/pull`, { token: `${write.token.slice(0, -2)}zz` });
    await call('DELETE', `${base}/vars/SECRET`, { token: write.token });
    await call('POST', `${base}/vars:bulkDelete`, { token: jwt, body: { keys: ['PLAIN'] } });
    await app.deps.auditBatcher.drain();

    expect(bodies.length).toBeGreaterThanOrEqual(8);
    for (const b of bodies) expect(b, b).not.toContain(CANARY);
    const logs = app.logs();
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(CANARY);
    expect(logs).not.toContain(write.token);
    expect(logs).not.toContain(jwt);
    const audit = await app.db.db.selectFrom('audit_logs').selectAll().execute();
    expect(JSON.stringify(audit)).not.toContain(CANARY);
    const stored = await app.db.db.selectFrom('variables').selectAll().execute();
    const history = await app.db.db.selectFrom('variable_history').selectAll().execute();
    expect(JSON.stringify([stored, history])).not.toContain(CANARY);
    expect(JSON.stringify(await app.db.db.selectFrom('projects').selectAll().execute())).not.toContain(CANARY);
  });

  it('never serves a value whose ciphertext was swapped into the row of another key (AAD binding)', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    await upsert(
      app,
      jwt,
      p.id,
      ['dev'],
      [
        { key: 'A', value: 'value-of-a', type: 'secret' },
        { key: 'B', value: 'value-of-b', type: 'secret' },
      ],
    );
    const env = await app.db.db
      .selectFrom('environments')
      .select('id')
      .where('project_id', '=', p.id)
      .where('name', '=', 'dev')
      .executeTakeFirstOrThrow();
    const rows = await app.db.db
      .selectFrom('variables')
      .select(['key', 'value_sealed'])
      .where('environment_id', '=', env.id)
      .orderBy('key')
      .execute();
    expect(rows).toHaveLength(2);
    await app.db.db
      .updateTable('variables')
      .set({ value_sealed: rows[1]!.value_sealed })
      .where('environment_id', '=', env.id)
      .where('key', '=', 'A')
      .execute();
    await app.db.db
      .updateTable('variables')
      .set({ value_sealed: rows[0]!.value_sealed })
      .where('environment_id', '=', env.id)
      .where('key', '=', 'B')
      .execute();
    // Neither opens under the other key: the listing marks both (d5385ec) and serves neither value.
    const res = await app.request('GET', `/v1/projects/${p.id}/envs/dev/vars?reveal=true`, {
      token: jwt,
      schema: listVarsResponse,
    });
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('value-of');
    expect(res.body.vars.map((v) => [v.key, v.value, v.valueError])).toEqual([
      ['A', '', 'DECRYPT_FAILED'],
      ['B', '', 'DECRYPT_FAILED'],
    ]);
  });

  it('fails the read when a ciphertext is moved to another environment', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    await upsert(app, jwt, p.id, ['dev', 'staging'], [{ key: 'A', value: 'same-key-different-env', type: 'secret' }]);
    const envs = await app.db.db
      .selectFrom('environments')
      .select(['id', 'name'])
      .where('project_id', '=', p.id)
      .execute();
    const dev = envs.find((e) => e.name === 'dev')!.id;
    const staging = envs.find((e) => e.name === 'staging')!.id;
    const devRow = await app.db.db
      .selectFrom('variables')
      .select('value_sealed')
      .where('environment_id', '=', dev)
      .executeTakeFirstOrThrow();
    await app.db.db
      .updateTable('variables')
      .set({ value_sealed: devRow.value_sealed })
      .where('environment_id', '=', staging)
      .execute();
    const token = (await createToken(app, jwt)).token;
    expect((await app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token })).status).toBe(200);
    expect((await app.request('GET', `/v1/projects/${p.id}/envs/staging/pull`, { token })).status).toBe(500);
  });

  it('sets security headers and a request id on every response', async () => {
    const { jwt } = await signupUser(app);
    for (const res of [
      await app.request('GET', '/v1/projects', { token: jwt }),
      await app.request('GET', '/v1/nowhere'),
    ]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
    const nf = await app.request('GET', '/v1/nowhere');
    expect(nf.status).toBe(404);
    expect(nf.error).toEqual({ code: 'NOT_FOUND', message: expect.any(String), field: '' });
  });

  it('answers wrong content types and methods in the error shape, never 500', async () => {
    const { jwt } = await signupUser(app);
    const text = await app.request('POST', '/v1/projects', {
      token: jwt,
      rawBody: 'name=x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(400);
    expect(text.error.code).toBe('VALIDATION');
    const arr = await app.request('POST', '/v1/projects', { token: jwt, body: ['x'] });
    expect(arr.status).toBe(400);
    const nul = await app.request('POST', '/v1/projects', { token: jwt, body: null });
    expect(nul.status).toBe(400);
    const proto = await app.request('POST', '/v1/projects', {
      token: jwt,
      rawBody: '{"name":"p","__proto__":{"x":1}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(proto.status).toBe(400);
    // An empty body with a JSON content type is no body: where none is needed the route answers as usual,
    // where one is needed the schema refuses it.
    const json = { 'content-type': 'application/json' };
    const p = await createProject(app, jwt);
    const del = await app.request('DELETE', `/v1/projects/${p.id}`, { token: jwt, rawBody: '', headers: json });
    expect(del.status).toBe(204);
    const create = await app.request('POST', '/v1/projects', { token: jwt, rawBody: '', headers: json });
    expect(create.status).toBe(400);
    expect(create.error).toMatchObject({ code: 'VALIDATION', field: 'body' });
    // Valid JSON, refused for its key (prototype poisoning): the message says so.
    expect(proto.error).toEqual({
      code: 'VALIDATION',
      message: expect.stringContaining('__proto__'),
      field: 'body',
    });
  });

  it('keeps the error shape and the headers for requests refused before routing', async () => {
    const { jwt } = await signupUser(app);
    // A percent-encoded `/v1` routes like `/v1`, so it is not cached either.
    const encoded = await app.request('GET', '/%761/projects', { token: jwt });
    expect(encoded.status).toBe(200);
    expect(encoded.headers.get('cache-control')).toBe('no-store');
    const badUrl = await app.request('GET', '/v1/projects/%zz');
    expect(badUrl.status).toBe(400);
    expect(badUrl.error).toEqual({ code: 'VALIDATION', message: 'malformed URL path', field: 'path' });
    expect(badUrl.headers.get('x-content-type-options')).toBe('nosniff');
    expect(badUrl.headers.get('cache-control')).toBe('no-store');
    // Node's HTTP parser refuses this one before Fastify sees it.
    const conn = rawConnection(app.url);
    conn.write('POST /v1/projects HTTP/1.1\r\nhost: x\r\ncontent-length: abc\r\n\r\n');
    await conn.closed;
    const raw = conn.text();
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toContain('x-content-type-options: nosniff');
    expect(raw).toContain('cache-control: no-store');
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({
      error: { code: 'VALIDATION', message: 'malformed HTTP request', field: '' },
    });
  });

  it('publishes an OpenAPI 3 document generated from the request schemas', async () => {
    const res = await app.request('GET', '/v1/openapi.json', { schema: openApiDocument });
    expect(res.status).toBe(200);
    const { paths } = res.body;
    expect(res.body.openapi).toMatch(/^3\./);
    const pull = paths['/v1/projects/{id}/envs/{env}/pull']?.get;
    expect(pull).toBeDefined();
    const upsertOp = paths['/v1/projects/{id}/vars']?.post;
    expect(JSON.stringify(upsertOp?.requestBody)).toContain('items');
    // What the routes answer besides their success: the error shape, the pull's flat 422, 204s without content.
    const errorSchema = upsertOp?.responses['4XX']?.content?.['application/json']?.schema;
    expect(errorSchema?.properties?.error?.required).toEqual(['code', 'message', 'field']);
    expect(pull?.responses['422']?.content?.['application/json']?.schema.properties).toHaveProperty('key');
    const del = paths['/v1/projects/{id}']?.delete?.responses;
    expect(del?.['204']).toEqual({ description: 'No Content' });
    expect(del?.['200']).toBeUndefined();
    // Public routes need no credential; the rest inherit the bearer scheme.
    expect(paths['/v1/auth/signup']?.post?.security).toEqual([]);
    expect(paths['/healthz']?.get?.security).toEqual([]);
    expect(pull?.security).toBeUndefined();
    expect(res.body.security).toEqual([{ bearer: [] }]);
    expect(paths['/v1/cli/latest']).toBeDefined();
  });
});
