/**
 * D66: a pull answered 304 (D29), and a held pull that ends unchanged (D43), is audited once per credential,
 * environment and revision per hour; every 200 is audited. On SQLite and PostgreSQL, with the harness's
 * injectable clock; and on PostgreSQL across two instances answering at once.
 */
import { randomBytes } from 'node:crypto';
import { auditPage } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import {
  type Client,
  createProject,
  createToken,
  dialectName,
  freshPgSchema,
  signupUser,
  startApp,
  TEST_DATABASE_URL,
  type TestApp,
  upsert,
} from './harness.js';

const HOUR = 3_600_000;

async function pullEntries(c: Client, jwt: string, projectId: string) {
  const res = await c.request('GET', `/v1/projects/${projectId}/audit?limit=200&action=vars.pull`, {
    token: jwt,
    schema: auditPage,
  });
  expect(res.status).toBe(200);
  return res.body.logs;
}

describe(`unchanged pulls audited once an hour (${dialectName})`, () => {
  const clock = new ManualClock();
  let app: TestApp;
  let jwt: string;
  beforeAll(async () => {
    app = await startApp({ clock, env: { DEFAULT_PLAN: 'enterprise', WEBHOOK_ALLOW_PRIVATE: 'true' } });
    ({ jwt } = await signupUser(app));
  });
  afterAll(async () => {
    await app?.stop();
  });

  async function setup() {
    const p = await createProject(app, jwt);
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: 'one', type: 'plain' }]);
    const token = (await createToken(app, jwt, { projectId: p.id })).token;
    const url = `/v1/projects/${p.id}/envs/dev/pull?metadata=false`;
    const first = await app.request('GET', url, { token });
    expect(first.status).toBe(200);
    return { p, token, url, etag: first.headers.get('etag')! };
  }
  const count = async (projectId: string) => {
    const logs = await pullEntries(app, jwt, projectId);
    return {
      ok: logs.filter((l) => !(l.detail as { notModified?: boolean }).notModified).length,
      unchanged: logs.filter((l) => (l.detail as { notModified?: boolean }).notModified === true).length,
    };
  };

  it('writes one entry for the first 304 of the hour, none for the next, one again after the hour', async () => {
    const { p, token, url, etag } = await setup();
    const cond = { token, headers: { 'if-none-match': etag } };
    expect((await app.request('GET', url, cond)).status).toBe(304);
    expect(await count(p.id)).toEqual({ ok: 1, unchanged: 1 });
    const [entry] = (await pullEntries(app, jwt, p.id)).filter(
      (l) => (l.detail as { notModified?: boolean }).notModified,
    );
    expect(entry).toMatchObject({ actorType: 'token', targetEnv: 'dev', detail: { notModified: true } });

    for (let i = 0; i < 3; i++) expect((await app.request('GET', url, cond)).status).toBe(304);
    // A held pull that ends unchanged is a 304 too.
    expect((await app.request('GET', `${url}&wait=1`, cond)).status).toBe(304);
    clock.advance(HOUR - 60_000);
    expect((await app.request('GET', url, cond)).status).toBe(304);
    expect(await count(p.id)).toEqual({ ok: 1, unchanged: 1 });

    clock.advance(60_000);
    expect((await app.request('GET', url, cond)).status).toBe(304);
    expect((await app.request('GET', url, cond)).status).toBe(304);
    expect(await count(p.id)).toEqual({ ok: 1, unchanged: 2 });
  });

  it('audits every 200, and a new revision or another credential starts its own hour', async () => {
    const { p, token, url, etag } = await setup();
    expect((await app.request('GET', url, { token, headers: { 'if-none-match': etag } })).status).toBe(304);
    for (let i = 0; i < 3; i++) expect((await app.request('GET', url, { token })).status).toBe(200);
    expect(await count(p.id)).toEqual({ ok: 4, unchanged: 1 });

    // Another token of the same environment and revision.
    const other = (await createToken(app, jwt, { projectId: p.id })).token;
    for (let i = 0; i < 2; i++) {
      expect((await app.request('GET', url, { token: other, headers: { 'if-none-match': etag } })).status).toBe(304);
    }
    expect(await count(p.id)).toEqual({ ok: 4, unchanged: 2 });

    // A change moves the revision: its first 304 is audited although the hour of the old one is not over.
    await app.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/A`, { token: jwt, body: { value: 'two' } });
    const fresh = await app.request('GET', url, { token });
    expect([fresh.status, fresh.text]).toEqual([200, 'A=two\n']);
    const cond = { token, headers: { 'if-none-match': fresh.headers.get('etag')! } };
    for (let i = 0; i < 2; i++) expect((await app.request('GET', url, cond)).status).toBe(304);
    expect(await count(p.id)).toEqual({ ok: 5, unchanged: 3 });

    // The same answer in another format is the same triple.
    const json = await app.request('GET', `${url}&format=json`, { token });
    const jsonCond = { token, headers: { 'if-none-match': json.headers.get('etag')! } };
    expect((await app.request('GET', `${url}&format=json`, jsonCond)).status).toBe(304);
    expect(await count(p.id)).toEqual({ ok: 6, unchanged: 3 });
  });

  it('sends the vars.pull webhook event with the audit entry: not for a 304 already audited this hour', async () => {
    const hook = await app.request('POST', '/v1/workspace/webhooks', {
      token: jwt,
      body: { name: 'pulls', url: 'http://127.0.0.1:9/hook', events: ['vars.pull'] },
    });
    expect(hook.status).toBe(201);
    const deliveries = async () =>
      (await app.db.db.selectFrom('jobs').select('id').where('kind', '=', 'webhook.deliver').execute()).length;
    const before = await deliveries();
    const { token, url, etag } = await setup();
    const cond = { token, headers: { 'if-none-match': etag } };
    for (let i = 0; i < 3; i++) expect((await app.request('GET', url, cond)).status).toBe(304);
    expect((await app.request('GET', url, { token })).status).toBe(200);
    // The first 200 (in setup), the first 304, the last 200.
    expect((await deliveries()) - before).toBe(3);
    await app.request('DELETE', `/v1/workspace/webhooks/${(hook.body as { id: string }).id}`, { token: jwt });
  });

  it('keeps the database untouched by a 304 already audited this hour (no commit on the hot path)', async () => {
    const { p, token, url, etag } = await setup();
    const cond = { token, headers: { 'if-none-match': etag } };
    expect((await app.request('GET', url, cond)).status).toBe(304);
    // The row that decides between instances is there; removing it behind the server's back shows that the
    // next 304s of the hour are decided by the process's memory alone (they write no second entry, and no row).
    await app.db.db.deleteFrom('unchanged_pull_audits').execute();
    for (let i = 0; i < 3; i++) expect((await app.request('GET', url, cond)).status).toBe(304);
    expect(await app.db.db.selectFrom('unchanged_pull_audits').selectAll().execute()).toEqual([]);
    expect(await count(p.id)).toEqual({ ok: 1, unchanged: 1 });
  });
});

describe.skipIf(!TEST_DATABASE_URL)('unchanged pulls across two instances on one PostgreSQL (D66, D2)', () => {
  it('writes one entry per triple and hour however many instances answer', async () => {
    const pg = await freshPgSchema();
    const clock = new ManualClock();
    const masterKey = randomBytes(32);
    const env = { DEFAULT_PLAN: 'enterprise' };
    const a = await startApp({ clock, databaseUrl: pg.url, masterKey, env });
    const b = await startApp({ clock, databaseUrl: pg.url, masterKey, env });
    try {
      const { jwt } = await signupUser(a);
      const p = await createProject(a, jwt);
      await upsert(a, jwt, p.id, ['dev'], [{ key: 'A', value: 'one', type: 'plain' }]);
      const token = (await createToken(a, jwt, { projectId: p.id })).token;
      const url = `/v1/projects/${p.id}/envs/dev/pull?metadata=false`;
      const etag = (await a.request('GET', url, { token })).headers.get('etag')!;
      const cond = { token, headers: { 'if-none-match': etag } };
      const unchanged = async () =>
        (await pullEntries(a, jwt, p.id)).filter((l) => (l.detail as { notModified?: boolean }).notModified).length;

      // Both instances answer at once, neither has seen the triple.
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? b : a).request('GET', url, cond)));
      expect(answers.map((r) => r.status)).toEqual(Array(8).fill(304));
      expect(await unchanged()).toBe(1);
      // Each instance now knows it, from its own claim or from the row the other one wrote.
      for (const c of [a, b, b, a]) expect((await c.request('GET', url, cond)).status).toBe(304);
      expect(await unchanged()).toBe(1);

      clock.advance(HOUR);
      const next = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).request('GET', url, cond)));
      expect(next.map((r) => r.status)).toEqual(Array(6).fill(304));
      expect(await unchanged()).toBe(2);
    } finally {
      await a.stop();
      await b.stop();
      await pg.drop();
    }
  });
});
