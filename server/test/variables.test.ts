import { operations as ops } from '@svcenv/contract/operations';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';

describe(`variables (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  async function setup() {
    const { jwt, user } = await signupUser(app);
    const p = await createProject(app, jwt);
    const base = `/v1/projects/${p.id}/envs/dev`;
    /** The environment `dev` of the project, and one of its keys, as path parameters. */
    const dev = { id: p.id, env: 'dev' };
    const key = (k: string) => ({ ...dev, key: k });
    return { jwt, user, p, base, dev, key };
  }

  it('bulk upserts across environments reporting created and updated', async () => {
    const { jwt, p, dev } = await setup();
    const first = await upsert(
      app,
      jwt,
      p.id,
      ['dev', 'staging'],
      [
        { key: 'DB_URL', value: 'postgres://x', type: 'secret' },
        { key: 'MODE', value: 'debug', type: 'plain' },
      ],
    );
    expect(first).toEqual({ created: ['DB_URL', 'MODE'], updated: [] });
    const second = await upsert(
      app,
      jwt,
      p.id,
      ['dev'],
      [
        { key: 'MODE', value: 'info', type: 'plain' },
        { key: 'NEW', value: 'n', type: 'plain' },
      ],
    );
    expect(second).toEqual({ created: ['NEW'], updated: ['MODE'] });
    const list = await app.call(ops.listVars, { params: dev }, jwt);
    expect(list.status).toBe(200);
    expect(list.body.vars.map((v) => [v.key, v.value, v.type])).toEqual([
      ['DB_URL', '***', 'secret'],
      ['MODE', 'info', 'plain'],
      ['NEW', 'n', 'plain'],
    ]);
    expect(list.body.vars[0]).toEqual({
      key: 'DB_URL',
      value: '***',
      type: 'secret',
      updatedAt: expect.any(String),
      expiresAt: null,
    });
    const revealed = await app.call(ops.listVars, { params: dev, query: { reveal: 'true' } }, jwt);
    expect(revealed.body.vars[0]?.value).toBe('postgres://x');
    const staging = await app.call(
      ops.listVars,
      { params: { id: p.id, env: 'staging' }, query: { reveal: 'true' } },
      jwt,
    );
    expect(staging.body.vars.find((v) => v.key === 'MODE')?.value).toBe('debug');
  });

  it('refuses bad keys, values, types and sizes with 400 naming the field, changing nothing (D24)', async () => {
    const { jwt, p, base, dev } = await setup();
    const cases: [unknown, string][] = [
      [{ envs: ['dev'], items: [{ key: '../etc', value: 'x', type: 'plain' }] }, 'items.0.key'],
      [{ envs: ['dev'], items: [{ key: 'A\u0000B', value: 'x', type: 'plain' }] }, 'items.0.key'],
      [{ envs: ['dev'], items: [{ key: 'АPI_KEY', value: 'x', type: 'plain' }] }, 'items.0.key'],
      [{ envs: ['dev'], items: [{ key: '1ABC', value: 'x', type: 'plain' }] }, 'items.0.key'],
      [{ envs: ['dev'], items: [{ key: 'K'.repeat(257), value: 'x', type: 'plain' }] }, 'items.0.key'],
      [{ envs: ['dev'], items: [{ key: 'A', value: 'x'.repeat(64 * 1024 + 1), type: 'plain' }] }, 'items.0.value'],
      [{ envs: ['dev'], items: [{ key: 'A', value: 5, type: 'plain' }] }, 'items.0.value'],
      [{ envs: ['dev'], items: [{ key: 'A', value: 'x', type: 'public' }] }, 'items.0.type'],
      [{ envs: ['dev'], items: [{ key: 'A', value: 'x', type: 'plain', extra: 1 }] }, 'items.0.extra'],
      [{ envs: ['dev'], items: [] }, 'items'],
      [{ envs: [], items: [{ key: 'A', value: 'x' }] }, 'envs'],
      [
        {
          envs: ['dev'],
          items: [
            { key: 'A', value: 'x' },
            { key: 'A', value: 'y' },
          ],
        },
        'items.1.key',
      ],
      [{ envs: ['dev'], items: Array.from({ length: 5001 }, (_, i) => ({ key: `K${i}`, value: 'v' })) }, 'items'],
    ];
    for (const [body, field] of cases) {
      const res = await app.request('POST', `/v1/projects/${p.id}/vars`, { token: jwt, body });
      expect(res.status, field).toBe(400);
      expect(res.error, field).toMatchObject({ code: 'VALIDATION', field });
    }
    const notJson = await app.request('POST', `/v1/projects/${p.id}/vars`, {
      token: jwt,
      rawBody: '{"envs":',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(400);
    expect(notJson.error.code).toBe('VALIDATION');
    const huge = await app.request('POST', `/v1/projects/${p.id}/vars`, {
      token: jwt,
      rawBody: `{"x":"${'a'.repeat(17 * 1024 * 1024)}"}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(huge.status).toBe(413);
    expect(huge.error.code).toBe('PAYLOAD_TOO_LARGE');
    const unknownEnv = await app.call(
      ops.bulkUpsert,
      { params: { id: p.id }, body: { envs: ['dev', 'nope'], items: [{ key: 'A', value: 'x' }] } },
      jwt,
    );
    expect(unknownEnv.status).toBe(404);
    expect((await app.call(ops.listVars, { params: dev }, jwt)).body.vars).toEqual([]);
    expect((await app.request('GET', `${base}/vars/..%2Fetc/history`, { token: jwt })).status).toBe(400);
  });

  it('updates value, type and expiry with PUT; 404 for a key that does not exist (D28b)', async () => {
    const { jwt, p, base, key } = await setup();
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'API_KEY', value: 'abc123456', type: 'secret' }]);
    const put = await app.call(
      ops.updateVar,
      { params: key('API_KEY'), body: { value: 'newvalue', type: 'plain', expiresAt: '2030-01-01T00:00:00Z' } },
      jwt,
    );
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      key: 'API_KEY',
      value: 'newvalue',
      type: 'plain',
      updatedAt: expect.any(String),
      expiresAt: '2030-01-01T00:00:00.000Z',
    });
    const cleared = await app.call(
      ops.updateVar,
      { params: key('API_KEY'), body: { clearExpiry: true, type: 'secret' } },
      jwt,
    );
    expect(cleared.body).toMatchObject({ value: '***', type: 'secret', expiresAt: null });
    expect((await app.call(ops.updateVar, { params: key('MISSING'), body: { value: 'x' } }, jwt)).status).toBe(404);
    expect(
      (await app.request('PUT', `${base}/vars/API_KEY`, { token: jwt, body: { expiresAt: 'tomorrow' } })).error.field,
    ).toBe('expiresAt');
    expect(
      (
        await app.request('PUT', `${base}/vars/API_KEY`, {
          token: jwt,
          body: { expiresAt: '2030-01-01T00:00:00Z', clearExpiry: true },
        })
      ).status,
    ).toBe(400);
    // An empty PUT changes nothing, so it is refused rather than recorded as an update.
    const historyBefore = (await app.call(ops.varHistory, { params: key('API_KEY') }, jwt)).body.history;
    const empty = await app.request('PUT', `${base}/vars/API_KEY`, { token: jwt, body: {} });
    expect(empty.status).toBe(400);
    expect(empty.error).toMatchObject({ code: 'VALIDATION', field: 'body' });
    const historyAfter = (await app.call(ops.varHistory, { params: key('API_KEY') }, jwt)).body.history;
    expect(historyAfter).toEqual(historyBefore);
  });

  it('deletes one key or many, keeping history restorable (D27)', async () => {
    const { jwt, p, dev, key } = await setup();
    await upsert(
      app,
      jwt,
      p.id,
      ['dev'],
      ['A', 'B', 'C', 'D'].map((key) => ({ key, value: `value-${key}`, type: 'secret' })),
    );
    expect((await app.call(ops.deleteVar, { params: key('A') }, jwt)).status).toBe(204);
    expect((await app.call(ops.deleteVar, { params: key('A') }, jwt)).status).toBe(404);
    const bulk = await app.call(ops.bulkDelete, { params: dev, body: { keys: ['B', 'C', 'ZZZ'] } }, jwt);
    expect(bulk.status).toBe(200);
    expect(bulk.body).toEqual({ deleted: 2 });
    expect((await app.call(ops.listVars, { params: dev }, jwt)).body.vars.map((v) => v.key)).toEqual(['D']);
    const hist = await app.call(ops.varHistory, { params: key('A'), query: { reveal: 'true' } }, jwt);
    expect(hist.body.history.map((h) => [h.action, h.value])).toEqual([
      ['deleted', 'value-A'],
      ['created', 'value-A'],
    ]);
    const restored = await app.call(
      ops.restoreVar,
      { params: key('A'), body: { versionId: hist.body.history[1]!.id } },
      jwt,
    );
    expect(restored.status).toBe(200);
    expect(restored.body).toEqual({ key: 'A', value: '***', type: 'secret', updatedAt: expect.any(String) });
    const list = await app.call(ops.listVars, { params: dev, query: { reveal: 'true' } }, jwt);
    expect(list.body.vars.find((v) => v.key === 'A')?.value).toBe('value-A');
  });

  it('keeps history masked unless reveal, with actions and restore of any version (D27)', async () => {
    const { jwt, p, base, user, key } = await setup();
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'S', value: 'first-secret', type: 'secret' }]);
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'S', value: 'second-secret', type: 'secret' }]);
    await app.call(ops.updateVar, { params: key('S'), body: { type: 'plain' } }, jwt);
    const masked = await app.call(ops.varHistory, { params: key('S') }, jwt);
    expect(masked.status).toBe(200);
    expect(masked.body.history.map((h) => [h.action, h.type, h.value])).toEqual([
      ['updated', 'plain', 'second-secret'],
      ['updated', 'secret', '***'],
      ['created', 'secret', '***'],
    ]);
    expect(masked.body.history[0]).toEqual({
      id: expect.any(Number),
      value: 'second-secret',
      type: 'plain',
      action: 'updated',
      changedBy: user.id,
      changedAt: expect.any(String),
    });
    const oldest = masked.body.history[2]!.id;
    const r = await app.call(ops.restoreVar, { params: key('S'), body: { versionId: oldest } }, jwt);
    expect(r.body).toMatchObject({ key: 'S', value: '***', type: 'secret' });
    const after = await app.call(ops.varHistory, { params: key('S'), query: { reveal: 'true' } }, jwt);
    expect(after.body.history[0]).toMatchObject({ action: 'restored', value: 'first-secret' });
    expect((await app.call(ops.restoreVar, { params: key('S'), body: { versionId: 999999 } }, jwt)).status).toBe(404);
    expect((await app.request('POST', `${base}/vars/S/restore`, { token: jwt, body: { versionId: 'x' } })).status).toBe(
      400,
    );
    expect((await app.call(ops.varHistory, { params: key('NEVER') }, jwt)).status).toBe(404);
  });

  it('restores the expiry of a version written by a bulk upsert, which keeps the expiry it found', async () => {
    const { jwt, p, dev, key } = await setup();
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'CERT', value: 'v1', type: 'secret' }]);
    const expiresAt = '2031-01-01T00:00:00.000Z';
    await app.call(ops.updateVar, { params: key('CERT'), body: { expiresAt } }, jwt);
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'CERT', value: 'v2', type: 'secret' }]);
    await app.call(ops.updateVar, { params: key('CERT'), body: { value: 'v3', clearExpiry: true } }, jwt);
    const history = (await app.call(ops.varHistory, { params: key('CERT'), query: { reveal: 'true' } }, jwt)).body
      .history;
    const bulkVersion = history.find((h) => h.value === 'v2')!.id;
    const r = await app.call(ops.restoreVar, { params: key('CERT'), body: { versionId: bulkVersion } }, jwt);
    expect(r.status).toBe(200);
    const list = await app.call(ops.listVars, { params: dev, query: { reveal: 'true' } }, jwt);
    expect(list.body.vars.find((v) => v.key === 'CERT')).toMatchObject({ value: 'v2', expiresAt });
  });

  it('resolves references: chains, fallbacks, missing, escapes and masking (spec, D25, D26)', async () => {
    const { jwt, p, dev } = await setup();
    await upsert(
      app,
      jwt,
      p.id,
      ['dev'],
      [
        { key: 'HOST', value: 'db.local', type: 'plain' },
        { key: 'PASS', value: 'hunter22', type: 'secret' },
        { key: 'URL', value: 'pg://${HOST}:5432', type: 'plain' },
        { key: 'DSN', value: '${URL}?p=${PASS}', type: 'plain' },
        { key: 'FB', value: '${NOPE:-fallback-${HOST}}', type: 'plain' },
        { key: 'EMPTY', value: '', type: 'plain' },
        { key: 'FB_EMPTY', value: '${EMPTY:-dflt}', type: 'plain' },
        { key: 'MISSING', value: 'x${NOPE}y', type: 'plain' },
        { key: 'ESC', value: '$${HOST}', type: 'plain' },
        { key: 'LOOP_A', value: '${LOOP_B}', type: 'plain' },
        { key: 'LOOP_B', value: '${LOOP_A}', type: 'plain' },
      ],
    );
    const byKey = async (reveal: boolean) =>
      Object.fromEntries(
        (await app.call(ops.listVars, { params: dev, query: reveal ? { reveal: 'true' } : {} }, jwt)).body.vars.map(
          (v) => [v.key, v],
        ),
      );
    const masked = await byKey(false);
    expect(masked.URL).toMatchObject({ value: 'pg://${HOST}:5432', resolvedValue: 'pg://db.local:5432' });
    expect(masked.DSN?.resolvedValue).toBe('***');
    expect(masked.FB?.resolvedValue).toBe('fallback-db.local');
    expect(masked.FB_EMPTY?.resolvedValue).toBe('dflt');
    expect(masked.MISSING?.resolvedValue).toBe('xy');
    expect(masked.ESC).not.toHaveProperty('resolvedValue');
    expect(masked.HOST).not.toHaveProperty('resolvedValue');
    expect(masked.LOOP_A).toMatchObject({ resolveError: 'LOOP_A: circular reference detected' });
    expect(masked.LOOP_A).not.toHaveProperty('resolvedValue');
    expect(masked.LOOP_B?.resolveError).toContain('circular');
    const revealed = await byKey(true);
    expect(revealed.DSN?.resolvedValue).toBe('pg://db.local:5432?p=hunter22');
  });

  it('reports a chain longer than 64 links as an error (D25)', async () => {
    const { jwt, p, dev } = await setup();
    const items = Array.from({ length: 66 }, (_, i) => ({
      key: `V${i}`,
      value: i === 65 ? 'end' : `\${V${i + 1}}`,
      type: 'plain',
    }));
    await upsert(app, jwt, p.id, ['dev'], items);
    const vars = Object.fromEntries(
      (await app.call(ops.listVars, { params: dev }, jwt)).body.vars.map((v) => [v.key, v]),
    );
    expect(vars.V0?.resolveError).toMatch(/chain longer than 64/);
    expect(vars.V1?.resolvedValue).toBe('end');
    expect(vars.V64?.resolvedValue).toBe('end');
  });

  it('needs write permission to reveal and to write; read tokens are refused (spec, D23)', async () => {
    const { jwt, p, base, dev } = await setup();
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'S', value: 'abcdefgh', type: 'secret' }]);
    const read = await createToken(app, jwt, { scope: 'read' });
    expect((await app.call(ops.listVars, { params: dev }, read.token)).status).toBe(200);
    for (const [m, path, body] of [
      ['GET', `${base}/vars?reveal=true`, undefined],
      ['GET', `${base}/vars/S/history?reveal=true`, undefined],
      ['POST', `/v1/projects/${p.id}/vars`, { envs: ['dev'], items: [{ key: 'X', value: 'y' }] }],
      ['PUT', `${base}/vars/S`, { value: 'x' }],
      ['DELETE', `${base}/vars/S`, undefined],
      ['POST', `${base}/vars:bulkDelete`, { keys: ['S'] }],
      ['POST', `${base}/vars/S/restore`, { versionId: 1 }],
      ['GET', `${base}/export?reveal=true`, undefined],
    ] as const) {
      const res = await app.request(m, path, { token: read.token, body });
      expect(res.status, `${m} ${path}`).toBe(403);
      expect(res.error.code).toBe('FORBIDDEN');
    }
    const write = await createToken(app, jwt, { scope: 'write', envs: ['dev'] });
    expect(
      (await app.call(ops.listVars, { params: dev, query: { reveal: 'true' } }, write.token)).body.vars[0]?.value,
    ).toBe('abcdefgh');
    const prod = await app.call(ops.listVars, { params: { id: p.id, env: 'prod' } }, write.token);
    expect(prod.status).toBe(403);
  });
});
