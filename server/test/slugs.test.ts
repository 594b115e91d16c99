/**
 * Project slugs (D48) and slugs in paths (D58), over HTTP on SQLite and PostgreSQL.
 */
import { listVarsResponse, project as projectSchema } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  createToken,
  dialectName,
  projectList,
  signupUser,
  startApp,
  type TestApp,
  upsert,
} from './harness.js';

describe(`project slugs (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ env: { DEFAULT_PLAN: 'enterprise' } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('derives the slug from the name (the D28 rule) with -2, -3 on a collision, and shows it wherever a project is', async () => {
    const { jwt } = await signupUser(app);
    const a = await createProject(app, jwt, { name: 'Shop API (EU)!' });
    expect(a.slug).toBe('shop-api-eu');
    const b = await createProject(app, jwt, { name: 'shop api eu' });
    const c = await createProject(app, jwt, { name: '--Shop--API--EU--' });
    expect([b.slug, c.slug]).toEqual(['shop-api-eu-2', 'shop-api-eu-3']);
    expect((await createProject(app, jwt, { name: '¡¿!' })).slug).toBe('project');
    expect((await createProject(app, jwt, { name: 'x'.repeat(100) })).slug).toBe('x'.repeat(63));
    const list = await app.request('GET', '/v1/projects', { token: jwt, schema: projectList });
    expect(list.body.projects.map((p) => p.slug)).toContain('shop-api-eu-3');
    // Another workspace may use the same slug.
    const other = await signupUser(app, 'Other');
    expect((await createProject(app, other.jwt, { name: 'Shop API EU' })).slug).toBe('shop-api-eu');
  });

  it('is changed by a project Admin; a duplicate is 409, a bad or uuid-shaped one 400', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt, { name: 'Billing' });
    await createProject(app, jwt, { name: 'Taken' });
    const renamed = await app.request('PATCH', `/v1/projects/${p.id}`, {
      token: jwt,
      body: { slug: 'billing-core' },
      schema: projectSchema,
    });
    expect(renamed.body.slug).toBe('billing-core');
    const dup = await app.request('PATCH', `/v1/projects/${p.id}`, { token: jwt, body: { slug: 'taken' } });
    expect(dup.error).toMatchObject({ code: 'CONFLICT', field: 'slug' });
    for (const bad of ['Upper', '-lead', 'a_b', 'x'.repeat(64), '0b4cc1a4-1b2c-4d5e-8f90-123456789abc']) {
      const res = await app.request('PATCH', `/v1/projects/${p.id}`, { token: jwt, body: { slug: bad } });
      expect(res.error, bad).toMatchObject({ code: 'VALIDATION', field: 'slug' });
    }
    // Setting the slug it already has is no conflict.
    const same = await app.request('PATCH', `/v1/projects/${p.id}`, { token: jwt, body: { slug: 'billing-core' } });
    expect(same.status).toBe(200);
  });

  it('is accepted in place of the id on every project path, only within the caller workspace (D58)', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt, { name: 'Payments' });
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: 'one', type: 'plain' }]);
    const got = await app.request('GET', '/v1/projects/payments', { token: jwt, schema: projectSchema });
    expect(got.body.id).toBe(p.id);
    const vars = await app.request('GET', '/v1/projects/payments/envs/dev/vars', {
      token: jwt,
      schema: listVarsResponse,
    });
    expect(vars.body.vars.map((v) => v.key)).toEqual(['A']);
    const put = await app.request('PUT', '/v1/projects/payments/envs/dev/vars/A', {
      token: jwt,
      body: { value: 'two' },
    });
    expect(put.status).toBe(200);
    const token = (await createToken(app, jwt, { projectId: p.id })).token;
    const pulled = await app.request('GET', '/v1/projects/payments/envs/dev/pull?metadata=false', { token });
    expect([pulled.status, pulled.text]).toEqual([200, 'A=two\n']);
    // The audit rows hold the project's id, however it was addressed; the answer adds the project's current
    // name and slug beside each entry (joined when read), and nothing else of it says the slug.
    const audit = await app.request('GET', `/v1/projects/payments/audit`, { token: jwt });
    expect(audit.status).toBe(200);
    const logs = (JSON.parse(audit.text) as { logs: { project: { id: string; slug: string } | null }[] }).logs;
    expect(logs.length).toBeGreaterThan(0);
    for (const entry of logs) expect(entry.project).toEqual({ id: p.id, name: 'Payments', slug: 'payments' });
    expect(JSON.stringify(logs.map(({ project: _, ...rest }) => rest))).not.toContain('"payments"');
    // A slug of another workspace, or none at all, is 404 like any project the caller cannot see (D23).
    const stranger = await signupUser(app, 'Stranger');
    expect((await app.request('GET', '/v1/projects/payments', { token: stranger.jwt })).error.code).toBe('NOT_FOUND');
    expect((await app.request('GET', '/v1/projects/no-such-project', { token: jwt })).error.code).toBe('NOT_FOUND');
    const invalid = await app.request('GET', '/v1/projects/Not_A_Slug', { token: jwt });
    expect(invalid.error).toMatchObject({ code: 'VALIDATION', field: 'id' });
  });
});
