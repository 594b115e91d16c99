import { environment, project, sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
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

/**
 * D57: every project answer carries the caller's own access, and that answer agrees with what the server
 * then allows: for each environment a write succeeds exactly when access says write, a read exactly when it
 * says read or write; project administration exactly when `admin`, Owner-only operations exactly when `owner`.
 * Also D15: a PLAN_LIMIT answer names the plan, the limit and how it is lifted (D69: by whom).
 */
type Perm = 'none' | 'read' | 'write';
type Access = z.infer<typeof project>['access'];

describe(`the caller's access in project answers (D57, ${dialectName})`, () => {
  let app: TestApp;
  let ownerJwt: string;
  let projectId: string;
  const callers: { name: string; auth: string; expected: Access }[] = [];

  beforeAll(async () => {
    // Owner + three members: more than the free plan's 3 members (D15), so this workspace is on `team`.
    app = await startApp({ env: { DEFAULT_PLAN: 'team' } });
    const owner = await signupUser(app, 'Owner');
    ownerJwt = owner.jwt;
    const session = await app.request('GET', '/v1/auth/session', { token: ownerJwt, schema: sessionResponse });
    const workspaceId = session.body.user.workspaceId;
    const p = await createProject(app, ownerJwt, { name: 'shop', envs: ['dev', 'staging', 'prod'] });
    projectId = p.id;
    await upsert(app, ownerJwt, projectId, ['dev', 'staging', 'prod'], [{ key: 'K', value: 'v', type: 'secret' }]);

    const member = async (name: string, role: 'Admin' | 'Developer' | 'Read-only') => {
      const u = await signupUser(app, name);
      const inv = await app.request('POST', '/v1/workspace/invites', {
        token: ownerJwt,
        body: { email: u.email, wsRole: 'Member' },
      });
      expect(inv.status).toBe(200);
      const sw = await app.request('POST', '/v1/auth/switch-workspace', {
        token: u.jwt,
        body: { workspaceId },
        schema: switchWorkspaceResponse,
      });
      const added = await app.request('PUT', `/v1/projects/${projectId}/members/${u.user.id}`, {
        token: ownerJwt,
        body: { role },
      });
      expect(added.status).toBe(200);
      return { id: u.user.id, jwt: sw.body.token };
    };
    const admin = await member('Admin', 'Admin');
    const dev = await member('Dev', 'Developer');
    const reader = await member('Reader', 'Read-only');
    // The Developer: prod is protected by default (none), staging lowered to read by an override.
    const override = await app.request('PUT', `/v1/projects/${projectId}/members/${dev.id}/envs/staging`, {
      token: ownerJwt,
      body: { permission: 'read' },
    });
    expect(override.status).toBe(200);

    const envs = (dev: Perm, staging: Perm, prod: Perm) => ({ dev, staging, prod });
    const all = (p: Perm) => envs(p, p, p);
    const tok = async (jwt: string, body: Record<string, unknown>) => (await createToken(app, jwt, body)).token;
    callers.push(
      { name: 'Owner', auth: ownerJwt, expected: { role: 'Owner', envs: all('write'), admin: true, owner: true } },
      { name: 'Admin', auth: admin.jwt, expected: { role: 'Admin', envs: all('write'), admin: true, owner: false } },
      {
        name: 'Developer',
        auth: dev.jwt,
        expected: { role: 'Developer', envs: envs('write', 'read', 'none'), admin: false, owner: false },
      },
      {
        name: 'Read-only',
        auth: reader.jwt,
        expected: { role: 'Read-only', envs: all('read'), admin: false, owner: false },
      },
      {
        name: "the Owner's read token limited to staging",
        auth: await tok(ownerJwt, { scope: 'read', envs: ['staging'] }),
        expected: { role: 'Owner', envs: envs('none', 'read', 'none'), admin: false, owner: false },
      },
      {
        name: "the Developer's write token",
        auth: await tok(dev.jwt, { scope: 'write', envs: ['*'] }),
        expected: { role: 'Developer', envs: envs('write', 'read', 'none'), admin: false, owner: false },
      },
      {
        name: "the Owner's write token",
        auth: await tok(ownerJwt, { scope: 'write', envs: ['*'] }),
        expected: { role: 'Owner', envs: all('write'), admin: true, owner: true },
      },
      {
        name: "the Admin's write token limited to dev",
        auth: await tok(admin.jwt, { scope: 'write', envs: ['dev'] }),
        expected: { role: 'Admin', envs: envs('write', 'none', 'none'), admin: false, owner: false },
      },
    );
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('GET /v1/projects/:id and GET /v1/projects carry the access each role and token has', async () => {
    for (const c of callers) {
      const one = await app.request('GET', `/v1/projects/${projectId}`, { token: c.auth, schema: project });
      expect(one.status, c.name).toBe(200);
      expect(one.body.access, c.name).toEqual(c.expected);
      const list = await app.request('GET', '/v1/projects', { token: c.auth, schema: projectList });
      expect(list.body.projects.find((p) => p.id === projectId)?.access, c.name).toEqual(c.expected);
    }
  });

  it('agrees with what the server then allows, environment by environment', async () => {
    const base = `/v1/projects/${projectId}`;
    let n = 0;
    for (const c of callers) {
      // What the answer says, not what this test expects: the two checks above pin them to each other.
      const { access } = (await app.request('GET', base, { token: c.auth, schema: project })).body;
      expect(Object.keys(access.envs).sort(), c.name).toEqual(['dev', 'prod', 'staging']);
      for (const [env, perm] of Object.entries(access.envs)) {
        const what = `${c.name} on ${env}`;
        const read = await app.request('GET', `${base}/envs/${env}/vars`, { token: c.auth });
        expect(read.status, `read: ${what}`).toBe(perm === 'none' ? 403 : 200);
        // Revealing values takes write (ADR 0006), like the dashboard's reveal button.
        const reveal = await app.request('GET', `${base}/envs/${env}/vars?reveal=true`, { token: c.auth });
        expect(reveal.status, `reveal: ${what}`).toBe(perm === 'write' ? 200 : 403);
        const write = await app.request('PUT', `${base}/envs/${env}/vars/K`, {
          token: c.auth,
          body: { value: `v${n++}` },
        });
        expect(write.status, `write: ${what}`).toBe(perm === 'write' ? 200 : 403);
      }
      // Project administration (recolouring an environment) and an Owner-only change (protection).
      const envs = await app.request('GET', `${base}/envs`, {
        token: ownerJwt,
        schema: z.object({ envs: z.array(environment) }),
      });
      const dev = envs.body.envs.find((e) => e.name === 'dev')!;
      const colour = await app.request('PATCH', `${base}/envs/dev`, { token: c.auth, body: { color: dev.color } });
      expect(colour.status, `recolour: ${c.name}`).toBe(access.admin ? 200 : 403);
      const protect = await app.request('PATCH', `${base}/envs/dev`, {
        token: c.auth,
        body: { protected: dev.protected },
      });
      expect(protect.status, `protect: ${c.name}`).toBe(access.owner ? 200 : 403);
    }
  });

  it('follows a change of the rules at once: protecting dev takes it away from a Developer', async () => {
    const p = await createProject(app, ownerJwt, { name: 'later', envs: ['dev', 'qa'] });
    const dev = callers.find((c) => c.name === "the Developer's write token")!;
    // Not a member of the new project: it is invisible, so it is not listed (D23).
    const hidden = await app.request('GET', '/v1/projects', { token: dev.auth, schema: projectList });
    expect(hidden.body.projects.map((x) => x.id)).not.toContain(p.id);
    const before = await app.request('GET', `/v1/projects/${projectId}`, { token: dev.auth, schema: project });
    expect(before.body.access.envs.dev).toBe('write');
    const prot = await app.request('PATCH', `/v1/projects/${projectId}/envs/dev`, {
      token: ownerJwt,
      body: { protected: true },
    });
    expect(prot.status).toBe(200);
    const after = await app.request('GET', `/v1/projects/${projectId}`, { token: dev.auth, schema: project });
    expect(after.body.access.envs.dev).toBe('none');
    const write = await app.request('PUT', `/v1/projects/${projectId}/envs/dev/vars/K`, {
      token: dev.auth,
      body: { value: 'x' },
    });
    expect(write.status).toBe(403);
    await app.request('PATCH', `/v1/projects/${projectId}/envs/dev`, { token: ownerJwt, body: { protected: false } });
  });

  it('is in the answers of create, update and create-environment too', async () => {
    const admin = callers.find((c) => c.name === 'Admin')!;
    // A Member who creates a project becomes its Admin (D20): not its Owner.
    const created = await app.request('POST', '/v1/projects', {
      token: admin.auth,
      body: { name: 'created-by-admin', envs: ['dev', 'prod'] },
      schema: project,
    });
    expect(created.status).toBe(201);
    expect(created.body.access).toEqual({
      role: 'Admin',
      envs: { dev: 'write', prod: 'write' },
      admin: true,
      owner: false,
    });
    const updated = await app.request('PATCH', `/v1/projects/${created.body.id}`, {
      token: admin.auth,
      body: { desc: 'now described' },
      schema: project,
    });
    expect(updated.body.access).toEqual(created.body.access);
    const withEnv = await app.request('POST', `/v1/projects/${created.body.id}/envs`, {
      token: admin.auth,
      body: { name: 'qa' },
      schema: project,
    });
    expect(withEnv.status).toBe(201);
    expect(withEnv.body.access.envs).toEqual({ dev: 'write', prod: 'write', qa: 'write' });
    const owned = await app.request('POST', '/v1/projects', {
      token: ownerJwt,
      body: { name: 'created-by-owner', envs: ['prod'] },
      schema: project,
    });
    expect(owned.body.access).toEqual({ role: 'Owner', envs: { prod: 'write' }, admin: true, owner: true });
  });

  it('the list (loaded for all projects at once) gives each project the access its own answer gives', async () => {
    const dev = callers.find((c) => c.name === 'Developer')!;
    const listed = await app.request('GET', '/v1/projects', { token: dev.auth, schema: projectList });
    expect(listed.body.projects.map((p) => p.access)).toEqual([dev.expected]);
    for (const c of callers.filter((x) => x.name === 'Owner' || x.name === 'Read-only')) {
      const res = await app.request('GET', '/v1/projects', { token: c.auth, schema: projectList });
      for (const p of res.body.projects) {
        // Each listed project's access equals the single-project answer's.
        const one = await app.request('GET', `/v1/projects/${p.id}`, { token: c.auth, schema: project });
        expect(p.access, `${c.name} ${p.name}`).toEqual(one.body.access);
      }
    }
  });

  it('a PLAN_LIMIT answer names the plan, the limit and how it is lifted (D15, D69)', async () => {
    // Not the instance's first account: the remedy is its administrator.
    const { jwt } = await signupUser(app, 'Teamer');
    // `team` allows 10 environments per project: the remedy is the one larger plan.
    const p = await createProject(app, jwt, { envs: Array.from({ length: 10 }, (_, i) => `e${i}`) });
    const eleventh = await app.request('POST', `/v1/projects/${p.id}/envs`, { token: jwt, body: { name: 'e10' } });
    expect(eleventh.error).toMatchObject({ code: 'PLAN_LIMIT', field: 'envsPerProject' });
    expect(eleventh.error.message).toContain('the team plan allows at most 10 environments per project');
    expect(eleventh.error.message).toContain('Ask your instance administrator');
    expect(eleventh.error.message).toContain('to the enterprise plan');

    const free = await startApp();
    try {
      // The instance's first account is its administrator: the remedy is the Instance page (or the command).
      const user = await signupUser(free, 'Free');
      const fp = await createProject(free, user.jwt, { name: 'one' });
      const fourthEnv = await free.request('POST', `/v1/projects/${fp.id}/envs`, {
        token: user.jwt,
        body: { name: 'qa' },
      });
      expect(fourthEnv.error).toMatchObject({ code: 'PLAN_LIMIT', field: 'envsPerProject' });
      expect(fourthEnv.error.message).toContain('the free plan allows at most 3 environments per project');
      expect(fourthEnv.error.message).toContain('the Instance page of the dashboard');
      expect(fourthEnv.error.message).toContain('npm run admin -- set-plan <workspace> team|enterprise');
      expect(fourthEnv.error.message).toContain('DEFAULT_PLAN');
      await createProject(free, user.jwt, { name: 'two' });
      await createProject(free, user.jwt, { name: 'three' });
      const fourth = await free.request('POST', '/v1/projects', { token: user.jwt, body: { name: 'four' } });
      expect(fourth.error).toMatchObject({ code: 'PLAN_LIMIT', field: 'projects' });
      expect(fourth.error.message).toMatch(
        /free plan allows at most 3 projects.*set-plan <workspace> team\|enterprise/,
      );
      // Refused without a change: still three projects.
      const list = await free.request('GET', '/v1/projects', { token: user.jwt, schema: projectList });
      expect(list.body.projects).toHaveLength(3);
    } finally {
      await free.stop();
    }
  });
});
