/**
 * Versions of a whole environment (D44 revisions, D45 rollback, D46 check-and-set) over HTTP, on SQLite and
 * on PostgreSQL.
 */
import {
  auditPage,
  createWebhookResponse,
  historyResponse,
  listVarsResponse,
  revisionsResponse,
  rollbackResponse,
  type Variable,
} from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';
import { type Receiver, startReceiver } from './receiver.js';

describe(`environment revisions (${dialectName})`, () => {
  let app: TestApp;
  let jwt: string;
  let receiver: Receiver;

  beforeAll(async () => {
    app = await startApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', DEFAULT_PLAN: 'enterprise' } });
    receiver = await startReceiver();
    ({ jwt } = await signupUser(app));
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.stop();
  });

  const base = (projectId: string, env = 'dev') => `/v1/projects/${projectId}/envs/${env}`;
  /** The listing (plaintext) with the revision it shows. */
  async function snapshot(projectId: string, revision?: number) {
    const q = revision === undefined ? '' : `&revision=${revision}`;
    const res = await app.request('GET', `${base(projectId)}/vars?reveal=true${q}`, {
      token: jwt,
      schema: listVarsResponse,
    });
    expect(res.status, res.text).toBe(200);
    const state = res.body.vars.map((v: Variable) => [v.key, v.value, v.type, v.expiresAt] as const);
    return { revision: Number(res.headers.get('x-svcenv-revision')), state };
  }
  const put = (projectId: string, key: string, value: string, headers: Record<string, string> = {}) =>
    app.request('PUT', `${base(projectId)}/vars/${key}`, { token: jwt, body: { value }, headers });

  it('refuses a revision beyond the 32-bit revision numbers as input, on every database (400, not 500)', async () => {
    // Found by server/test/fuzz.test.ts: PostgreSQL refused 2147483648 for the integer column with an error.
    const p = await createProject(app, jwt);
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: '0', type: 'plain' }]);
    const { token } = await createToken(app, jwt, { scope: 'read' });
    const cursor = (n: number) => Buffer.from(String(n)).toString('base64url');
    for (const n of [2_147_483_648, 9_007_199_254_740_991, 99_999_999_999]) {
      const cases = [
        [await app.request('GET', `${base(p.id)}/vars?revision=${n}`, { token: jwt }), 'revision'],
        [await app.request('GET', `${base(p.id)}/pull?revision=${n}`, { token }), 'revision'],
        [await app.request('GET', `${base(p.id)}/revisions?cursor=${cursor(n)}`, { token: jwt }), 'cursor'],
        [await app.request('POST', `${base(p.id)}/rollback`, { token: jwt, body: { revision: n } }), 'revision'],
      ] as const;
      for (const [res, field] of cases) {
        expect(res.status, `${n} ${field}: ${res.text}`).toBe(400);
        expect(res.error).toMatchObject({ code: 'VALIDATION', field });
      }
    }
    // The largest is a revision number still: one this environment has not reached.
    const max = 2_147_483_647;
    expect((await app.request('GET', `${base(p.id)}/vars?revision=${max}`, { token: jwt })).status).toBe(404);
    expect((await app.request('POST', `${base(p.id)}/rollback`, { token: jwt, body: { revision: max } })).status).toBe(
      404,
    );
    const page = await app.request('GET', `${base(p.id)}/revisions?cursor=${cursor(max)}`, {
      token: jwt,
      schema: revisionsResponse,
    });
    expect(page.body.revisions.map((r) => r.revision)).toEqual([1]);
  });

  it('numbers revisions 1, 2, 3 with no gap or duplicate under concurrent writers, and lists who, what and which keys', async () => {
    const p = await createProject(app, jwt);
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: '0', type: 'plain' }]);
    const writes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? put(p.id, 'A', `put-${i}`)
          : app.request('POST', `/v1/projects/${p.id}/vars`, {
              token: jwt,
              body: { envs: ['dev'], items: [{ key: `K${i}`, value: String(i), type: 'secret' }] },
            }),
      ),
    );
    for (const w of writes) expect(w.status, w.text).toBe(200);
    // D44: a pull says which revision it shows, too.
    const token = (await createToken(app, jwt, { projectId: p.id })).token;
    const pulled = await app.request('GET', `${base(p.id)}/pull`, { token });
    expect(pulled.headers.get('x-svcenv-revision')).toBe('21');
    const numbers = writes.map((w) => Number(w.headers.get('x-svcenv-revision'))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    const list = await app.request('GET', `${base(p.id)}/revisions?limit=200`, {
      token: jwt,
      schema: revisionsResponse,
    });
    expect(list.body.revisions.map((r) => r.revision)).toEqual(Array.from({ length: 21 }, (_, i) => 21 - i));
    expect(list.body.nextCursor).toBe('');
    expect(list.body.revisions.at(-1)).toMatchObject({
      revision: 1,
      action: 'vars.bulk_upsert',
      created: ['A'],
      actor: 'Ada',
    });
    const aPut = list.body.revisions.find((r) => r.action === 'var.update');
    expect(aPut).toMatchObject({ updated: ['A'], created: [], deleted: [] });
    // Paging with the cursor walks the same list.
    const first = await app.request('GET', `${base(p.id)}/revisions?limit=5`, {
      token: jwt,
      schema: revisionsResponse,
    });
    const second = await app.request('GET', `${base(p.id)}/revisions?limit=5&cursor=${first.body.nextCursor}`, {
      token: jwt,
      schema: revisionsResponse,
    });
    expect(second.body.revisions.map((r) => r.revision)).toEqual([16, 15, 14, 13, 12]);
  });

  it('lists the environment as it was right after each revision, and 404 for an unknown one', async () => {
    const p = await createProject(app, jwt);
    const states = new Map<number, Awaited<ReturnType<typeof snapshot>>['state']>();
    const record = async () => {
      const s = await snapshot(p.id);
      states.set(s.revision, s.state);
    };
    await upsert(
      app,
      jwt,
      p.id,
      ['dev'],
      [
        { key: 'DB_PASSWORD', value: 'first', type: 'secret' },
        { key: 'PORT', value: '80', type: 'plain' },
      ],
    );
    await record();
    await put(p.id, 'PORT', '8080');
    await record();
    await app.request('PUT', `${base(p.id)}/vars/DB_PASSWORD`, {
      token: jwt,
      body: { expiresAt: '2030-01-01T00:00:00.000Z' },
    });
    await record();
    await app.request('DELETE', `${base(p.id)}/vars/PORT`, { token: jwt });
    await record();
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'PORT', value: '9090', type: 'secret' }]);
    await record();
    // D44: pull at a revision: the same state, rendered; the answer says which revision it shows.
    const token = (await createToken(app, jwt, { projectId: p.id })).token;
    const first = [...states.keys()][0]!;
    const pulledAt = await app.request('GET', `${base(p.id)}/pull?metadata=false&revision=${first}`, { token });
    expect([pulledAt.status, pulledAt.text]).toEqual([200, 'DB_PASSWORD=first\nPORT=80\n']);
    expect(pulledAt.headers.get('x-svcenv-revision')).toBe(String(first));
    const unknownPull = await app.request('GET', `${base(p.id)}/pull?revision=999`, { token });
    expect(unknownPull.status).toBe(404);
    for (const [revision, state] of states)
      expect((await snapshot(p.id, revision)).state, `revision ${revision}`).toEqual(state);
    // Masked as usual without reveal.
    const masked = await app.request('GET', `${base(p.id)}/vars?revision=1`, { token: jwt, schema: listVarsResponse });
    expect(masked.body.vars.find((v) => v.key === 'DB_PASSWORD')?.value).toBe('***');
    for (const bad of ['99', '0']) {
      const res = await app.request('GET', `${base(p.id)}/vars?revision=${bad}`, { token: jwt });
      expect(res.status, bad).toBe(404);
      expect(res.error.code).toBe('NOT_FOUND');
    }
    const malformed = await app.request('GET', `${base(p.id)}/vars?revision=1e2`, { token: jwt });
    expect(malformed.error).toMatchObject({ code: 'VALIDATION', field: 'revision' });
  });

  it('rolls back in one revision with history, audit and a webhook event, and rolls forward again', async () => {
    const p = await createProject(app, jwt);
    const hook = await app.request('POST', '/v1/workspace/webhooks', {
      token: jwt,
      body: { name: 'rb', url: receiver.url(`/rb-${p.id}`), events: ['env.rollback'] },
      schema: createWebhookResponse,
    });
    expect(hook.status).toBe(201);
    await upsert(
      app,
      jwt,
      p.id,
      ['dev'],
      [
        { key: 'KEEP', value: 'same', type: 'plain' },
        { key: 'CHANGED', value: 'v1', type: 'secret' },
        { key: 'REMOVED_LATER', value: 'here', type: 'plain' },
      ],
    );
    const good = await snapshot(p.id);
    await put(p.id, 'CHANGED', 'v2');
    await app.request('DELETE', `${base(p.id)}/vars/REMOVED_LATER`, { token: jwt });
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'ADDED_LATER', value: 'new', type: 'plain' }]);
    const bad = await snapshot(p.id);

    const back = await app.request('POST', `${base(p.id)}/rollback`, {
      token: jwt,
      body: { revision: good.revision },
      schema: rollbackResponse,
    });
    expect(back.status, back.text).toBe(200);
    expect(back.body).toEqual({
      revision: bad.revision + 1,
      created: ['REMOVED_LATER'],
      updated: ['CHANGED'],
      deleted: ['ADDED_LATER'],
    });
    expect(back.headers.get('x-svcenv-revision')).toBe(String(bad.revision + 1));
    expect((await snapshot(p.id)).state.map(([k, v, t]) => [k, v, t])).toEqual(
      good.state.map(([k, v, t]) => [k, v, t]),
    );
    const history = await app.request('GET', `${base(p.id)}/vars/CHANGED/history?reveal=true`, {
      token: jwt,
      schema: historyResponse,
    });
    expect(history.body.history[0]).toMatchObject({ action: 'restored', value: 'v1' });
    const addedHistory = await app.request('GET', `${base(p.id)}/vars/ADDED_LATER/history`, {
      token: jwt,
      schema: historyResponse,
    });
    expect(addedHistory.body.history[0]?.action).toBe('deleted');
    const revs = await app.request('GET', `${base(p.id)}/revisions?limit=1`, { token: jwt, schema: revisionsResponse });
    expect(revs.body.revisions[0]).toMatchObject({
      action: 'env.rollback',
      updated: ['CHANGED'],
      deleted: ['ADDED_LATER'],
    });
    const audit = await app.request('GET', `/v1/projects/${p.id}/audit?limit=20`, { token: jwt, schema: auditPage });
    const rolled = audit.body.logs.filter((l) => l.action === 'env.rollback');
    expect(rolled).toHaveLength(1);
    expect(rolled[0]).toMatchObject({ targetEnv: 'dev', detail: { toRevision: good.revision } });
    expect(JSON.stringify(rolled[0])).not.toContain('v1');
    const [delivery] = await receiver.waitFor(1, (r) => r.path === `/rb-${p.id}`);
    expect(delivery!.body).toMatchObject({
      event: 'env.rollback',
      env: 'dev',
      created: ['REMOVED_LATER'],
      updated: ['CHANGED'],
    });
    expect([...delivery!.body.keys].sort()).toEqual(['ADDED_LATER', 'CHANGED', 'REMOVED_LATER']);

    // Rolling back to the state it already has changes nothing and makes no revision.
    const noop = await app.request('POST', `${base(p.id)}/rollback`, {
      token: jwt,
      body: { revision: good.revision },
      schema: rollbackResponse,
    });
    expect(noop.body).toEqual({ revision: bad.revision + 1, created: [], updated: [], deleted: [] });
    // Forward again, to the state before the rollback.
    const forward = await app.request('POST', `${base(p.id)}/rollback`, {
      token: jwt,
      body: { revision: bad.revision },
      schema: rollbackResponse,
    });
    expect(forward.status).toBe(200);
    expect((await snapshot(p.id)).state.map(([k, v, t]) => [k, v, t])).toEqual(bad.state.map(([k, v, t]) => [k, v, t]));
    const unknown = await app.request('POST', `${base(p.id)}/rollback`, { token: jwt, body: { revision: 999 } });
    expect(unknown.error.code).toBe('NOT_FOUND');
  });

  it('check-and-set: If-Match "rev:<n>" writes only at revision n, 412 otherwise, and one of two racing writers wins', async () => {
    const p = await createProject(app, jwt);
    await upsert(app, jwt, p.id, ['dev', 'staging'], [{ key: 'A', value: '1', type: 'plain' }]);
    const { revision } = await snapshot(p.id);
    const ok = await put(p.id, 'A', '2', { 'if-match': `"rev:${revision}"` });
    expect(ok.status, ok.text).toBe(200);
    const stale = await put(p.id, 'A', '3', { 'if-match': `"rev:${revision}"` });
    expect(stale.status).toBe(412);
    expect(stale.error).toMatchObject({ code: 'PRECONDITION_FAILED', field: 'revision' });
    expect((await snapshot(p.id)).state[0]?.[1]).toBe('2');
    for (const [method, path, body] of [
      ['DELETE', `${base(p.id)}/vars/A`, undefined],
      ['POST', `${base(p.id)}/vars:bulkDelete`, { keys: ['A'] }],
      ['POST', `${base(p.id)}/vars/A/restore`, { versionId: 1 }],
      ['POST', `${base(p.id)}/rollback`, { revision: 1 }],
      ['POST', `/v1/projects/${p.id}/vars`, { envs: ['dev'], items: [{ key: 'A', value: 'x' }] }],
    ] as const) {
      const res = await app.request(method, path, { token: jwt, body, headers: { 'if-match': '"rev:1"' } });
      expect(res.status, `${method} ${path}`).toBe(412);
    }
    expect((await snapshot(p.id)).state[0]?.[1]).toBe('2');
    const several = await app.request('POST', `/v1/projects/${p.id}/vars`, {
      token: jwt,
      body: { envs: ['dev', 'staging'], items: [{ key: 'A', value: 'x' }] },
      headers: { 'if-match': '"rev:1"' },
    });
    expect(several.error).toMatchObject({ code: 'VALIDATION', field: 'envs' });
    const malformed = await put(p.id, 'A', 'x', { 'if-match': 'rev:1' });
    expect(malformed.error).toMatchObject({ code: 'VALIDATION', field: 'If-Match' });

    const at = (await snapshot(p.id)).revision;
    const race = await Promise.all(['left', 'right'].map((v) => put(p.id, 'A', v, { 'if-match': `"rev:${at}"` })));
    expect(race.map((r) => r.status).sort()).toEqual([200, 412]);
    expect((await snapshot(p.id)).revision).toBe(at + 1);
  });
});
