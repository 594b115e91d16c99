import { sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import { operations as ops } from '@svcenv/contract/operations';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** D75: personal overrides, their routes (set/get/delete, masking, protection, orphans, D49 references). */
describe(`personal overrides (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  it('sets, lists masked or revealed, and deletes one own override (D75, D26)', async () => {
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
    // D75: the owner's own listing shows their value, marked; the shared value is another person's view.
    expect(vars.body.vars.find((v) => v.key === 'API')).toMatchObject({ value: 'mine', overridden: true });
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

  /** An owner's workspace and project, and a second member (Developer) of it. */
  async function team() {
    const owner = await signupUser(app, 'Owner');
    const session = await app.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    const workspaceId = session.body.user.workspaceId;
    const p = await createProject(app, owner.jwt, { envs: ['dev', 'staging', 'prod'] });
    const u = await signupUser(app, 'Member');
    const inv = await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: u.email, wsRole: 'Member' },
    });
    expect(inv.status).toBe(200);
    const sw = await app.request('POST', '/v1/auth/switch-workspace', {
      token: u.jwt,
      body: { workspaceId },
      schema: switchWorkspaceResponse,
    });
    const added = await app.request('PUT', `/v1/projects/${p.id}/members/${u.user.id}`, {
      token: owner.jwt,
      body: { role: 'Developer' },
    });
    expect(added.status).toBe(200);
    return { owner: owner.jwt, p, member: { id: u.user.id, jwt: sw.body.token } };
  }
  const pullPath = (id: string, env = 'dev') => `/v1/projects/${id}/envs/${env}/pull?metadata=false`;

  it("applies to the owner's pulls (every format), tokens they created and their listing; nobody else's (D75)", async () => {
    const { owner, p, member } = await team();
    await upsert(
      app,
      owner,
      p.id,
      ['dev'],
      [
        { key: 'DB', value: 'shared-db', type: 'secret' },
        { key: 'URL', value: 'db=${DB}', type: 'plain' },
        { key: 'PLAIN', value: 'p', type: 'plain' },
      ],
    );
    const memberTok = (await createToken(app, member.jwt, { projectId: p.id })).token;
    const ownerTok = (await createToken(app, owner, { projectId: p.id })).token;
    const before = await app.request('GET', pullPath(p.id), { token: memberTok });
    expect(before.text).toBe('DB=shared-db\nPLAIN=p\nURL=db=shared-db\n');
    const etag = before.headers.get('etag')!;
    const otherEtag = (await app.request('GET', pullPath(p.id), { token: ownerTok })).headers.get('etag');
    const revs = (await app.call(ops.listRevisions, { params: { id: p.id, env: 'dev' } }, owner)).body;
    const history = (await app.call(ops.varHistory, { params: { id: p.id, env: 'dev', key: 'DB' } }, owner)).body;

    const put = await app.request('PUT', `/v1/projects/${p.id}/envs/dev/overrides/DB`, {
      token: member.jwt,
      body: { value: 'my-db' },
    });
    expect(put.status).toBe(200);
    expect(put.text).not.toContain('my-db');

    // The owner (a token they created): their value, also through ${DB} (D73-D75 details); ETag moved.
    const mine = await app.request('GET', pullPath(p.id), { token: memberTok, headers: { 'if-none-match': etag } });
    expect([mine.status, mine.text]).toEqual([200, 'DB=my-db\nPLAIN=p\nURL=db=my-db\n']);
    expect(mine.headers.get('etag')).not.toBe(etag);
    const json = await app.request('GET', `${pullPath(p.id)}&format=json`, { token: memberTok });
    expect(JSON.parse(json.text)).toMatchObject({ DB: 'my-db', URL: 'db=my-db' });
    for (const format of ['shell', 'docker']) {
      const r = await app.request('GET', `${pullPath(p.id)}&format=${format}`, { token: memberTok });
      expect(r.text).toContain('my-db');
    }
    const k8s = await app.request('GET', `${pullPath(p.id)}&format=k8s`, { token: memberTok });
    expect(k8s.text).toContain(`DB: ${Buffer.from('my-db').toString('base64')}`);
    // Someone else (another person's token; a token the member did not create): the shared value, same ETag.
    const theirs = await app.request('GET', pullPath(p.id), { token: ownerTok });
    expect(theirs.text).toBe('DB=shared-db\nPLAIN=p\nURL=db=shared-db\n');
    expect(theirs.headers.get('etag')).toBe(otherEtag);
    expect(
      (await app.request('GET', pullPath(p.id), { token: ownerTok, headers: { 'if-none-match': otherEtag! } })).status,
    ).toBe(304);

    // The dashboard's listing: the owner's value marked overridden; others see the shared one, unmarked.
    const listed = await app.call(
      ops.listVars,
      { params: { id: p.id, env: 'dev' }, query: { reveal: 'true' } },
      member.jwt,
    );
    const byKey = Object.fromEntries(listed.body.vars.map((v) => [v.key, v]));
    expect(byKey.DB).toMatchObject({ value: 'my-db', overridden: true, type: 'secret' });
    expect(byKey.URL).toMatchObject({ resolvedValue: 'db=my-db' });
    expect(byKey.URL?.overridden).toBeUndefined();
    expect(byKey.PLAIN?.overridden).toBeUndefined();
    const masked = await app.call(ops.listVars, { params: { id: p.id, env: 'dev' } }, member.jwt);
    expect(masked.text).not.toContain('my-db');
    const others = await app.call(ops.listVars, { params: { id: p.id, env: 'dev' }, query: { reveal: 'true' } }, owner);
    const o = others.body.vars.find((v) => v.key === 'DB');
    expect(o?.value).toBe('shared-db');
    expect(o?.overridden).toBeUndefined();
    expect(others.text).not.toContain('my-db');
    // The owner lists none of the member's overrides.
    expect((await app.call(ops.listOverrides, { params: { id: p.id, env: 'dev' } }, owner)).body.overrides).toEqual([]);

    // Revisions and history unchanged.
    expect((await app.call(ops.listRevisions, { params: { id: p.id, env: 'dev' } }, owner)).body).toEqual(revs);
    expect((await app.call(ops.varHistory, { params: { id: p.id, env: 'dev', key: 'DB' } }, owner)).body).toEqual(
      history,
    );

    // Audited by key, never the value.
    const audit = await app.request('GET', `/v1/projects/${p.id}/audit`, { token: owner });
    expect(audit.text).toContain('override.set');
    expect(audit.text).not.toContain('my-db');

    // Deleted: the shared value again, for the owner too.
    expect(
      (await app.call(ops.deleteOverride, { params: { id: p.id, env: 'dev', key: 'DB' } }, member.jwt)).status,
    ).toBe(204);
    const after = await app.request('GET', pullPath(p.id), { token: memberTok });
    expect(after.text).toBe('DB=shared-db\nPLAIN=p\nURL=db=shared-db\n');
    expect(after.headers.get('etag')).toBe(etag);
    expect((await app.request('GET', `/v1/projects/${p.id}/audit`, { token: owner })).text).toContain(
      'override.delete',
    );
  });

  it('never applies an orphaned override; lists it with orphaned: true', async () => {
    const { owner, p, member } = await team();
    await upsert(app, owner, p.id, ['dev'], [{ key: 'A', value: 'shared', type: 'plain' }]);
    const tok = (await createToken(app, member.jwt, { projectId: p.id })).token;
    for (const key of ['A', 'LATER_GONE', 'NEVER']) {
      const r = await app.request('PUT', `/v1/projects/${p.id}/envs/dev/overrides/${key}`, {
        token: member.jwt,
        body: { value: `mine-${key}` },
      });
      expect(r.status).toBe(200);
    }
    await upsert(app, owner, p.id, ['dev'], [{ key: 'LATER_GONE', value: 'x', type: 'plain' }]);
    expect((await app.request('GET', pullPath(p.id), { token: tok })).text).toBe(
      'A=mine-A\nLATER_GONE=mine-LATER_GONE\n',
    );
    await app.request('DELETE', `/v1/projects/${p.id}/envs/dev/vars/LATER_GONE`, { token: owner });
    expect((await app.request('GET', pullPath(p.id), { token: tok })).text).toBe('A=mine-A\n');
    const list = await app.call(ops.listOverrides, { params: { id: p.id, env: 'dev' } }, member.jwt);
    expect(list.body.overrides.map((o) => [o.key, o.value, o.orphaned])).toEqual([
      ['A', '***', false],
      ['LATER_GONE', '***', true],
      ['NEVER', '***', true],
    ]);
    const vars = await app.call(ops.listVars, { params: { id: p.id, env: 'dev' } }, member.jwt);
    expect(vars.body.vars.map((v) => v.key)).toEqual(['A']);
  });

  it("compares environments as the owner's pulls give them, overrides included; others see the shared diff", async () => {
    const { owner, p, member } = await team();
    await upsert(app, owner, p.id, ['dev', 'staging'], [{ key: 'PORT', value: '5432', type: 'plain' }]);
    await upsert(app, owner, p.id, ['staging'], [{ key: 'DB', value: '${dev.PORT}', type: 'plain' }]);
    await upsert(app, owner, p.id, ['dev'], [{ key: 'DB', value: '5432', type: 'plain' }]);
    const diff = (jwt: string) =>
      app.call(ops.diffEnvs, { params: { id: p.id }, query: { env: ['dev', 'staging'] } }, jwt);
    const before = (await diff(member.jwt)).body;
    expect(before).toMatchObject({ different: [], sameByReference: ['DB'] });
    const put = await app.request('PUT', `/v1/projects/${p.id}/envs/dev/overrides/PORT`, {
      token: member.jwt,
      body: { value: '6543' },
    });
    expect(put.status).toBe(200);
    // D75, ADR 0031: dev's PORT is the member's own value for them, so PORT differs for the member only;
    // staging's ${dev.PORT} still reads the shared value (a reference from another environment), so DB stays
    // the same by reference.
    expect((await diff(member.jwt)).body).toMatchObject({ different: ['PORT'], sameByReference: ['DB'] });
    expect((await diff(owner)).body).toMatchObject({ different: [], sameByReference: ['DB'] });
  });

  it('refuses protected environments, read-only people and references to environments the owner cannot read', async () => {
    const { owner, p, member } = await team();
    await upsert(app, owner, p.id, ['staging'], [{ key: 'S', value: 'staging-secret', type: 'secret' }]);
    await upsert(app, owner, p.id, ['dev'], [{ key: 'A', value: 'a', type: 'plain' }]);
    const prod = await app.request('PUT', `/v1/projects/${p.id}/envs/prod/overrides/A`, {
      token: owner,
      body: { value: 'x' },
    });
    expect(prod.status).toBe(403);
    expect(prod.text).toContain('protected');
    await app.request('PUT', `/v1/projects/${p.id}/members/${member.id}/envs/staging`, {
      token: owner,
      body: { permission: 'none' },
    });
    const ref = await app.request('PUT', `/v1/projects/${p.id}/envs/dev/overrides/A`, {
      token: member.jwt,
      body: { value: '${staging.S}' },
    });
    expect(ref.status).toBe(422);
    expect(ref.text).not.toContain('staging-secret');
    // The owner may read staging: their override may reference it.
    const okRef = await app.request('PUT', `/v1/projects/${p.id}/envs/dev/overrides/A`, {
      token: owner,
      body: { value: '${staging.S}' },
    });
    expect(okRef.status).toBe(200);
    const ownerTok = (await createToken(app, owner, { projectId: p.id })).token;
    expect((await app.request('GET', pullPath(p.id), { token: ownerTok })).text).toBe('A=staging-secret\n');
    const memberTok = (await createToken(app, member.jwt, { projectId: p.id })).token;
    expect((await app.request('GET', pullPath(p.id), { token: memberTok })).text).toBe('A=a\n');
    // Read-only: no write permission on dev, so no override (and no reveal).
    await app.request('PUT', `/v1/projects/${p.id}/members/${member.id}/envs/dev`, {
      token: owner,
      body: { permission: 'read' },
    });
    const ro = await app.request('PUT', `/v1/projects/${p.id}/envs/dev/overrides/A`, {
      token: member.jwt,
      body: { value: 'x' },
    });
    expect(ro.status).toBe(403);
    const reveal = await app.request('GET', `/v1/projects/${p.id}/envs/dev/overrides?reveal=true`, {
      token: member.jwt,
    });
    expect(reveal.status).toBe(403);
    expect((await app.request('GET', `/v1/projects/${p.id}/envs/dev/overrides`, { token: member.jwt })).status).toBe(
      200,
    );
  });

  it("wakes the owner's held pull when their override changes; another's held pull stays held (D43)", async () => {
    const { owner, p, member } = await team();
    await upsert(app, owner, p.id, ['dev'], [{ key: 'A', value: 'one', type: 'plain' }]);
    const memberTok = (await createToken(app, member.jwt, { projectId: p.id })).token;
    const ownerTok = (await createToken(app, owner, { projectId: p.id })).token;
    const etagOf = async (token: string) => (await app.request('GET', pullPath(p.id), { token })).headers.get('etag')!;
    const [mEtag, oEtag] = [await etagOf(memberTok), await etagOf(ownerTok)];
    const t0 = Date.now();
    const mine = app.request('GET', `${pullPath(p.id)}&wait=20`, {
      token: memberTok,
      headers: { 'if-none-match': mEtag },
    });
    const theirs = app.request('GET', `${pullPath(p.id)}&wait=3`, {
      token: ownerTok,
      headers: { 'if-none-match': oEtag },
    });
    await sleep(400);
    const tSet = Date.now();
    await app.request('PUT', `/v1/projects/${p.id}/envs/dev/overrides/A`, {
      token: member.jwt,
      body: { value: 'two' },
    });
    const r = await mine;
    expect([r.status, r.text]).toEqual([200, 'A=two\n']);
    expect(Date.now() - tSet).toBeLessThan(1500);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
    const o = await theirs;
    expect(o.status).toBe(304);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2900);

    // Deleting wakes it too.
    const etag2 = r.headers.get('etag')!;
    const again = app.request('GET', `${pullPath(p.id)}&wait=20`, {
      token: memberTok,
      headers: { 'if-none-match': etag2 },
    });
    await sleep(300);
    await app.request('DELETE', `/v1/projects/${p.id}/envs/dev/overrides/A`, { token: member.jwt });
    const back = await again;
    expect([back.status, back.text, back.headers.get('etag')]).toEqual([200, 'A=one\n', mEtag]);
  });
});
