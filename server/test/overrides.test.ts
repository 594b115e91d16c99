import { operations as ops } from '@svcenv/contract/operations';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';

/** D75: personal overrides, their routes (set/get/delete, masking, protection, orphans, D49 references). */
describe(`personal overrides (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  it('sets, lists masked or revealed, and deletes one own override; shared value untouched (D75, D26)', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'API', value: 'shared', type: 'secret' }]);
    const key = { id: p.id, env: 'dev', key: 'API' };
    const put = await app.call(ops.putOverride, { params: key, body: { value: 'mine' } }, jwt);
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ key: 'API', value: '***', orphaned: false });
    const list = await app.call(ops.listOverrides, { params: { id: p.id, env: 'dev' } }, jwt);
    expect(list.body.overrides).toEqual([expect.objectContaining({ key: 'API', value: '***', orphaned: false })]);
    const shown = await app.call(
      ops.listOverrides,
      { params: { id: p.id, env: 'dev' }, query: { reveal: 'true' } },
      jwt,
    );
    expect(shown.body.overrides[0]?.value).toBe('mine');
    const vars = await app.call(ops.listVars, { params: { id: p.id, env: 'dev' }, query: { reveal: 'true' } }, jwt);
    expect(vars.body.vars.find((v) => v.key === 'API')?.value).toBe('shared');
    expect((await app.call(ops.deleteOverride, { params: key }, jwt)).status).toBe(204);
    expect((await app.call(ops.deleteOverride, { params: key }, jwt)).status).toBe(404);
    expect((await app.call(ops.listOverrides, { params: { id: p.id, env: 'dev' } }, jwt)).body.overrides).toEqual([]);
  });

  it('marks an override of a missing key orphaned; refuses protected environments and bad input', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    const put = await app.call(
      ops.putOverride,
      { params: { id: p.id, env: 'dev', key: 'GONE' }, body: { value: 'x' } },
      jwt,
    );
    expect(put.body.orphaned).toBe(true);
    const prod = await app.call(
      ops.putOverride,
      { params: { id: p.id, env: 'prod', key: 'A' }, body: { value: 'x' } },
      jwt,
    );
    expect(prod.status).toBe(403);
    expect(prod.error.code).toBe('FORBIDDEN');
    expect(prod.text).not.toContain('"x"');
    const bad = await app.request('PUT', `/v1/projects/${p.id}/envs/dev/overrides/A`, {
      token: jwt,
      body: { value: 1 },
    });
    expect(bad.status).toBe(400);
  });
});
