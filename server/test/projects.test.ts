import {
  auditPage,
  diffResponse,
  environment,
  project,
  sessionResponse,
  switchWorkspaceResponse,
} from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  createToken,
  dialectName,
  envList,
  projectList,
  signupUser,
  startApp,
  type TestApp,
  upsert,
} from './harness.js';

describe(`projects and environments (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  it('creates a project with the default environments, colours and protection (D20, D21)', async () => {
    const { jwt } = await signupUser(app);
    const res = await app.request('POST', '/v1/projects', {
      token: jwt,
      body: { name: 'Billing API', desc: 'payments' },
      schema: project,
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'Billing API',
      slug: 'billing-api',
      desc: 'payments',
      color: '#6366f1',
      envs: ['dev', 'staging', 'prod'],
      // D57: the creator's access (server/test/access.test.ts covers every role).
      access: { role: 'Owner', envs: { dev: 'write', staging: 'write', prod: 'write' }, admin: true, owner: true },
    });
    const envs = await app.request('GET', `/v1/projects/${res.body.id}/envs`, { token: jwt, schema: envList });
    expect(envs.body.envs).toEqual([
      { name: 'dev', protected: false, color: '#22c55e', requireApproval: false },
      { name: 'staging', protected: false, color: '#eab308', requireApproval: false },
      { name: 'prod', protected: true, color: '#ef4444', requireApproval: false },
    ]);
    const got = await app.request('GET', `/v1/projects/${res.body.id}`, { token: jwt, schema: project });
    expect(got.body).toEqual(res.body);
    const list = await app.request('GET', '/v1/projects', { token: jwt, schema: projectList });
    expect(list.body.projects).toEqual([res.body]);
  });

  it('validates names, colours and environments; refuses duplicates with 409', async () => {
    const { jwt } = await signupUser(app);
    const bad = [
      [{ name: 'x', color: 'red' }, 'color'],
      [{ name: '' }, 'name'],
      [{ name: 'x', envs: ['Prod'] }, 'envs.0'],
      [{ name: 'x', envs: ['a/../b'] }, 'envs.0'],
      [{ name: 'x', extra: 1 }, 'extra'],
      [{ name: 5 }, 'name'],
    ] as const;
    for (const [body, field] of bad) {
      const res = await app.request('POST', '/v1/projects', { token: jwt, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error).toMatchObject({ code: 'VALIDATION', field });
    }
    await createProject(app, jwt, { name: 'same' });
    const dup = await app.request('POST', '/v1/projects', { token: jwt, body: { name: 'same' } });
    expect(dup.status).toBe(409);
    expect(dup.error.field).toBe('name');
    const dupEnv = await app.request('POST', '/v1/projects', { token: jwt, body: { name: 'y', envs: ['a', 'a'] } });
    expect(dupEnv.status).toBe(409);
  });

  it('enforces the free plan: 3 projects and 3 environments per project (D15)', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    await createProject(app, jwt);
    await createProject(app, jwt);
    const fourth = await app.request('POST', '/v1/projects', { token: jwt, body: { name: 'four' } });
    expect(fourth.status).toBe(403);
    expect(fourth.error).toMatchObject({ code: 'PLAN_LIMIT', field: 'projects' });
    const env = await app.request('POST', `/v1/projects/${p.id}/envs`, { token: jwt, body: { name: 'qa' } });
    expect(env.status).toBe(403);
    expect(env.error).toMatchObject({ code: 'PLAN_LIMIT', field: 'envsPerProject' });
  });

  it('renames, recolours, adds, protects and deletes environments', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt, { envs: ['dev', 'production'] });
    const patched = await app.request('PATCH', `/v1/projects/${p.id}`, {
      token: jwt,
      body: { name: 'Renamed', color: '#112233' },
      schema: project,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Renamed', color: '#112233', envs: ['dev', 'production'] });
    const added = await app.request('POST', `/v1/projects/${p.id}/envs`, {
      token: jwt,
      body: { name: 'qa-1' },
      schema: project,
    });
    expect(added.status).toBe(201);
    expect(added.body.envs).toEqual(['dev', 'production', 'qa-1']);
    expect(
      (await app.request('POST', `/v1/projects/${p.id}/envs`, { token: jwt, body: { name: 'qa-1' } })).status,
    ).toBe(409);
    const envs = (await app.request('GET', `/v1/projects/${p.id}/envs`, { token: jwt, schema: envList })).body.envs;
    expect(envs.find((e) => e.name === 'production')?.protected).toBe(true);
    const prot = await app.request('PATCH', `/v1/projects/${p.id}/envs/qa-1`, {
      token: jwt,
      body: { protected: true, color: '#abcdef' },
      schema: environment,
    });
    expect(prot.status).toBe(200);
    expect(prot.body).toEqual({ name: 'qa-1', protected: true, color: '#abcdef', requireApproval: false });
    await upsert(app, jwt, p.id, ['qa-1'], [{ key: 'A', value: '1', type: 'plain' }]);
    expect((await app.request('DELETE', `/v1/projects/${p.id}/envs/qa-1`, { token: jwt })).status).toBe(204);
    expect((await app.request('GET', `/v1/projects/${p.id}/envs/qa-1/vars`, { token: jwt })).status).toBe(404);
    const count = await app.db.db
      .selectFrom('variables')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .innerJoin('environments', 'environments.id', 'variables.environment_id')
      .where('environments.project_id', '=', p.id)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
    expect((await app.request('DELETE', `/v1/projects/${p.id}/envs/nope`, { token: jwt })).status).toBe(404);
  });

  it('diffs two environments by value, secrets included', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    await upsert(
      app,
      jwt,
      p.id,
      ['dev', 'prod'],
      [
        { key: 'SAME', value: 's', type: 'plain' },
        { key: 'DIFF', value: 'x', type: 'secret' },
      ],
    );
    await upsert(
      app,
      jwt,
      p.id,
      ['prod'],
      [
        { key: 'DIFF', value: 'y', type: 'secret' },
        { key: 'ONLY_B', value: '1', type: 'plain' },
      ],
    );
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'ONLY_A', value: '1', type: 'plain' }]);
    const res = await app.request('GET', `/v1/projects/${p.id}/diff?env=dev&env=prod`, {
      token: jwt,
      schema: diffResponse,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ onlyInA: ['ONLY_A'], onlyInB: ['ONLY_B'], different: ['DIFF'], sameByReference: [] });
    expect((await app.request('GET', `/v1/projects/${p.id}/diff?env=dev`, { token: jwt })).status).toBe(400);
    expect((await app.request('GET', `/v1/projects/${p.id}/diff?env=dev&env=nope`, { token: jwt })).status).toBe(404);
  });

  it('diffs what a pull gives: references resolved for the reader, "same by reference" apart (ADR 0026)', async () => {
    const { jwt } = await signupUser(app);
    const session = await app.request('GET', '/v1/auth/session', { token: jwt, schema: sessionResponse });
    const p = await createProject(app, jwt, { envs: ['dev', 'staging', 'prod'] });
    await upsert(app, jwt, p.id, ['prod'], [{ key: 'TOKEN', value: 'tok-1', type: 'secret' }]);
    await upsert(
      app,
      jwt,
      p.id,
      ['dev'],
      [
        { key: 'DB_HOST', value: 'db2.internal', type: 'plain' },
        { key: 'DB_PASS', value: 'pw-1', type: 'secret' },
        { key: 'REGION', value: 'eu', type: 'plain' },
        { key: 'TOKEN_COPY', value: 'tok-1', type: 'secret' },
      ],
    );
    await upsert(
      app,
      jwt,
      p.id,
      ['staging'],
      [
        // Stored text differs, the pulls do not: same by reference (a secret too).
        { key: 'DB_HOST', value: '${dev.DB_HOST}', type: 'plain' },
        { key: 'DB_PASS', value: '${dev.DB_PASS}', type: 'secret' },
        { key: 'REGION', value: 'us', type: 'plain' },
        // Equal through prod, which only some readers may read.
        { key: 'TOKEN_COPY', value: '${prod.TOKEN}', type: 'secret' },
      ],
    );
    await upsert(
      app,
      jwt,
      p.id,
      ['dev', 'staging'],
      [
        // Same stored text: identical when it resolves alike, different when what it reaches differs.
        { key: 'URL', value: 'postgres://${DB_HOST}', type: 'plain' },
        { key: 'LABEL', value: 'app-${REGION}', type: 'plain' },
        // Cannot resolve in either, the same way: not a difference.
        { key: 'LOOP', value: '${LOOP}', type: 'plain' },
      ],
    );
    const diff = (token: string) =>
      app.request('GET', `/v1/projects/${p.id}/diff?env=dev&env=staging`, { token, schema: diffResponse });
    const owner = await diff(jwt);
    expect(owner.status).toBe(200);
    expect(owner.body).toEqual({
      onlyInA: [],
      onlyInB: [],
      different: ['LABEL', 'REGION'],
      sameByReference: ['DB_HOST', 'DB_PASS', 'TOKEN_COPY'],
    });

    // A Developer cannot read prod (protected): TOKEN_COPY does not resolve for them, so it differs; no value leaks.
    const u = await signupUser(app, 'Dev');
    await app.request('POST', '/v1/workspace/invites', { token: jwt, body: { email: u.email, wsRole: 'Member' } });
    const sw = await app.request('POST', '/v1/auth/switch-workspace', {
      token: u.jwt,
      body: { workspaceId: session.body.user.workspaceId },
      schema: switchWorkspaceResponse,
    });
    await app.request('PUT', `/v1/projects/${p.id}/members/${u.user.id}`, { token: jwt, body: { role: 'Developer' } });
    const dev = await diff(sw.body.token);
    expect(dev.status).toBe(200);
    expect(dev.body).toEqual({
      onlyInA: [],
      onlyInB: [],
      different: ['LABEL', 'REGION', 'TOKEN_COPY'],
      sameByReference: ['DB_HOST', 'DB_PASS'],
    });
    expect(dev.text).not.toContain('tok-1');
    expect(dev.text).not.toContain('pw-1');
    // Read on both is still what the diff needs: prod stays closed to the Developer.
    const closed = await app.request('GET', `/v1/projects/${p.id}/diff?env=dev&env=prod`, { token: sw.body.token });
    expect(closed.status).toBe(403);
  });

  it('pages the project audit log with a cursor, newest first (D36)', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    for (let i = 0; i < 5; i++) await upsert(app, jwt, p.id, ['dev'], [{ key: `K${i}`, value: 'v', type: 'plain' }]);
    const first = await app.request('GET', `/v1/projects/${p.id}/audit?limit=4`, { token: jwt, schema: auditPage });
    expect(first.status).toBe(200);
    expect(first.body.logs).toHaveLength(4);
    expect(first.body.logs[0]).toMatchObject({ action: 'vars.bulk_upsert', targetEnv: 'dev', actorType: 'user' });
    const second = await app.request('GET', `/v1/projects/${p.id}/audit?limit=4&cursor=${first.body.nextCursor}`, {
      token: jwt,
      schema: auditPage,
    });
    expect(second.body.logs.map((l) => l.action)).toEqual(['vars.bulk_upsert', 'project.create']);
    expect(second.body.nextCursor).toBe('');
    const ids = [...first.body.logs, ...second.body.logs].map((l) => l.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    for (const q of [
      'limit=0',
      'limit=201',
      'limit=abc',
      'limit=1e2',
      'limit=0x10',
      'limit=1.5',
      'limit=',
      'cursor=%%%',
    ]) {
      expect((await app.request('GET', `/v1/projects/${p.id}/audit?${q}`, { token: jwt })).status, q).toBe(400);
    }
    const def = await app.request('GET', `/v1/projects/${p.id}/audit`, { token: jwt, schema: auditPage });
    expect(def.body.logs).toHaveLength(6);
  });

  it('deletes a project with its variables, history and audit entries; Owner only', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: 'secret-value', type: 'secret' }]);
    const readTok = await createToken(app, jwt, { scope: 'read' });
    expect((await app.request('DELETE', `/v1/projects/${p.id}`, { token: readTok.token })).status).toBe(403);
    const envIds = (
      await app.db.db.selectFrom('environments').select('id').where('project_id', '=', p.id).execute()
    ).map((e) => e.id);
    const before = await app.db.db
      .selectFrom('variable_history')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('environment_id', 'in', envIds)
      .executeTakeFirstOrThrow();
    expect(Number(before.n)).toBe(1);
    expect((await app.request('DELETE', `/v1/projects/${p.id}`, { token: jwt })).status).toBe(204);
    expect((await app.request('GET', `/v1/projects/${p.id}`, { token: jwt })).status).toBe(404);
    const db = app.db.db;
    for (const table of ['environments', 'project_members'] as const) {
      const n = await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('project_id', '=', p.id)
        .executeTakeFirstOrThrow();
      expect(Number(n.n), table).toBe(0);
    }
    const audit = await db
      .selectFrom('audit_logs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', p.id)
      .executeTakeFirstOrThrow();
    expect(Number(audit.n)).toBe(0);
    const history = await db
      .selectFrom('variable_history')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('environment_id', 'in', envIds)
      .executeTakeFirstOrThrow();
    expect(Number(history.n)).toBe(0);
    const ws = await app.request('GET', `/v1/projects`, { token: jwt, schema: projectList });
    expect(ws.body.projects).toEqual([]);
  });

  it("hides other workspaces' projects with 404 (D23)", async () => {
    const a = await signupUser(app);
    const b = await signupUser(app);
    const p = await createProject(app, a.jwt);
    for (const [m, path] of [
      ['GET', `/v1/projects/${p.id}`],
      ['PATCH', `/v1/projects/${p.id}`],
      ['DELETE', `/v1/projects/${p.id}`],
      ['GET', `/v1/projects/${p.id}/envs/dev/vars`],
    ] as const) {
      const res = await app.request(m, path, { token: b.jwt, body: m === 'PATCH' ? { name: 'z' } : undefined });
      expect(res.status, `${m} ${path}`).toBe(404);
    }
    // D58: a slug-shaped segment is looked up as a slug (none here: 404); one that is neither id nor slug is 400.
    expect((await app.request('GET', '/v1/projects/not-a-uuid', { token: a.jwt })).status).toBe(404);
    expect((await app.request('GET', '/v1/projects/Not_A_Uuid', { token: a.jwt })).status).toBe(400);
  });
});
