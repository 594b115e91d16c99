import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  auditPage,
  createWebhookResponse,
  member as memberSchema,
  membersResponse,
  projectMember,
  projectMembersResponse,
  sessionResponse,
  switchWorkspaceResponse,
} from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import { expireAccess } from '../src/services/access/expiry.js';
import {
  type Client,
  createProject,
  createToken,
  dialectName,
  freshPgSchema,
  signupUser,
  startApp,
  startServer,
  type TestApp,
  until,
  upsert,
} from './harness.js';
import { type Receiver, startReceiver } from './receiver.js';

const HOUR = 3_600_000;

/** D73: temporary workspace roles, project roles and per-environment permissions (and "D73-D75, the details"). */
describe(`temporary access (${dialectName})`, () => {
  let app: TestApp;
  let rx: Receiver;
  const clock = new ManualClock();
  beforeAll(async () => {
    app = await startApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx.stop();
    await app.stop();
  });

  const later = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();

  /** An Owner with a project (dev and prod holding A) and a second person, a Member in the Owner's workspace. */
  async function team(c: Client = app) {
    const owner = await signupUser(c, 'Olga');
    const dev = await signupUser(c, 'Dan');
    const session = await c.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    const wsId = session.body.user.workspaceId;
    const added = await c.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: dev.email, wsRole: 'Member' },
    });
    expect(added.status, added.text).toBe(200);
    const switched = await c.request('POST', '/v1/auth/switch-workspace', {
      token: dev.jwt,
      body: { workspaceId: wsId },
      schema: switchWorkspaceResponse,
    });
    const p = await createProject(c, owner.jwt);
    await upsert(c, owner.jwt, p.id, ['dev', 'prod'], [{ key: 'A', value: 'one', type: 'plain' }]);
    return { owner, dev, devJwt: switched.body.token, p, wsId };
  }
  const setRole = (c: Client, t: Awaited<ReturnType<typeof team>>, body: object) =>
    c.request('PUT', `/v1/projects/${t.p.id}/members/${t.dev.user.id}`, {
      token: t.owner.jwt,
      body,
      schema: projectMember,
    });
  const setEnv = (c: Client, t: Awaited<ReturnType<typeof team>>, env: string, body: object) =>
    c.request('PUT', `/v1/projects/${t.p.id}/members/${t.dev.user.id}/envs/${env}`, {
      token: t.owner.jwt,
      body,
      schema: projectMember,
    });
  const vars = (c: Client, projectId: string, env: string, token: string) =>
    c.request('GET', `/v1/projects/${projectId}/envs/${env}/vars`, { token });
  const pull = (c: Client, projectId: string, env: string, token: string) =>
    c.request('GET', `/v1/projects/${projectId}/envs/${env}/pull?metadata=false`, { token });

  it('a temporary env permission gives access until expiresAt and nothing after, before the job ran', async () => {
    const t = await team();
    await setRole(app, t, { role: 'Developer' });
    expect((await vars(app, t.p.id, 'prod', t.devJwt)).status).toBe(403);
    const expiresAt = later(HOUR);
    const granted = await setEnv(app, t, 'prod', { permission: 'read', expiresAt });
    expect(granted.status, granted.text).toBe(200);
    expect(granted.body.envPermissions).toEqual({ prod: 'read' });
    expect(granted.body.envPermissionExpiry).toEqual({ prod: expiresAt });
    expect(granted.body.expiresAt).toBeNull();
    const list = await app.request('GET', `/v1/projects/${t.p.id}/members`, {
      token: t.owner.jwt,
      schema: projectMembersResponse,
    });
    expect(list.body.members.find((m) => m.userId === t.dev.user.id)?.envPermissionExpiry).toEqual({ prod: expiresAt });
    // D32: a token the person created while the grant holds follows them.
    const tok = await createToken(app, t.devJwt, { scope: 'read' });
    expect((await vars(app, t.p.id, 'prod', t.devJwt)).status).toBe(200);
    expect((await pull(app, t.p.id, 'prod', tok.token)).text).toBe('A=one\n');

    clock.advance(HOUR - 1_000);
    expect((await vars(app, t.p.id, 'prod', t.devJwt)).status).toBe(200);
    clock.advance(1_000);
    // The row is still there (no sweep ran): the authorization itself refuses it.
    const rows = await app.db.db
      .selectFrom('env_permissions')
      .selectAll()
      .where('user_id', '=', t.dev.user.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect((await vars(app, t.p.id, 'prod', t.devJwt)).status).toBe(403);
    expect((await pull(app, t.p.id, 'prod', tok.token)).status).toBe(403);
    // The role's own default is untouched: dev is still writable for the Developer.
    expect((await vars(app, t.p.id, 'dev', t.devJwt)).status).toBe(200);
    expect((await pull(app, t.p.id, 'dev', tok.token)).text).toBe('A=one\n');
  });

  it('extending the grant (PUT again with a later expiresAt) keeps access', async () => {
    const t = await team();
    await setRole(app, t, { role: 'Developer' });
    await setEnv(app, t, 'prod', { permission: 'write', expiresAt: later(HOUR) });
    clock.advance(HOUR / 2);
    const extended = later(2 * HOUR);
    const res = await setEnv(app, t, 'prod', { permission: 'write', expiresAt: extended });
    expect(res.body.envPermissionExpiry).toEqual({ prod: extended });
    clock.advance(HOUR);
    expect((await vars(app, t.p.id, 'prod', t.devJwt)).status).toBe(200);
    // A sweep now leaves the extended grant alone.
    await expireAccess(app.deps);
    expect((await vars(app, t.p.id, 'prod', t.devJwt)).status).toBe(200);
    // Made permanent (no expiresAt), it never ends.
    const permanent = await setEnv(app, t, 'prod', { permission: 'write' });
    expect(permanent.body.envPermissionExpiry).toEqual({});
    clock.advance(10 * HOUR);
    expect((await vars(app, t.p.id, 'prod', t.devJwt)).status).toBe(200);
  });

  it('a temporary project role ends the project membership at once', async () => {
    const t = await team();
    const expiresAt = later(HOUR);
    const res = await setRole(app, t, { role: 'Read-only', expiresAt });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ role: 'Read-only', expiresAt, envPermissionExpiry: {} });
    const tok = await createToken(app, t.devJwt, { scope: 'read' });
    expect((await vars(app, t.p.id, 'dev', t.devJwt)).status).toBe(200);
    expect((await pull(app, t.p.id, 'prod', tok.token)).text).toBe('A=one\n');
    clock.advance(HOUR);
    expect((await vars(app, t.p.id, 'dev', t.devJwt)).status).toBe(404);
    expect((await app.request('GET', `/v1/projects/${t.p.id}`, { token: t.devJwt })).status).toBe(404);
    expect((await pull(app, t.p.id, 'prod', tok.token)).status).not.toBe(200);
    await expireAccess(app.deps);
    const left = await app.db.db
      .selectFrom('project_members')
      .selectAll()
      .where('user_id', '=', t.dev.user.id)
      .execute();
    expect(left).toEqual([]);
    const audit = await app.request('GET', `/v1/projects/${t.p.id}/audit`, { token: t.owner.jwt, schema: auditPage });
    expect(audit.body.logs.find((l) => l.action === 'access.expire')?.detail).toEqual({
      grant: 'project-role',
      userId: t.dev.user.id,
      role: 'Read-only',
      expiresAt,
    });
  });

  it('a temporary workspace Owner is a Member again when it ends', async () => {
    const t = await team();
    const expiresAt = later(HOUR);
    const promoted = await app.request('PATCH', `/v1/workspace/members/${t.dev.user.id}`, {
      token: t.owner.jwt,
      body: { wsRole: 'Owner', expiresAt },
      schema: memberSchema,
    });
    expect(promoted.status, promoted.text).toBe(200);
    expect(promoted.body).toMatchObject({ wsRole: 'Owner', expiresAt });
    const members = await app.request('GET', '/v1/workspace/members', { token: t.owner.jwt, schema: membersResponse });
    expect(members.body.members.find((m) => m.id === t.dev.user.id)).toMatchObject({ wsRole: 'Owner', expiresAt });
    const tok = await createToken(app, t.devJwt, { scope: 'read' });
    // As an Owner they see every project without being added to it.
    expect((await vars(app, t.p.id, 'prod', t.devJwt)).status).toBe(200);
    expect((await pull(app, t.p.id, 'prod', tok.token)).status).toBe(200);
    clock.advance(HOUR);
    // A Member again, and not a member of the project: it is not found, for them and their token (D32).
    expect((await vars(app, t.p.id, 'prod', t.devJwt)).status).toBe(404);
    expect((await pull(app, t.p.id, 'prod', tok.token)).status).not.toBe(200);
    expect((await app.request('GET', '/v1/workspace/members', { token: t.devJwt })).status).toBe(200);
    await expireAccess(app.deps);
    const after = await app.request('GET', '/v1/workspace/members', { token: t.owner.jwt, schema: membersResponse });
    expect(after.body.members.find((m) => m.id === t.dev.user.id)).toMatchObject({ wsRole: 'Member', expiresAt: null });
    const audit = await app.request('GET', '/v1/workspace/audit', { token: t.owner.jwt, schema: auditPage });
    expect(audit.body.logs.find((l) => l.action === 'access.expire')?.detail).toEqual({
      grant: 'workspace-role',
      userId: t.dev.user.id,
      wsRole: 'Owner',
      expiresAt,
    });
  });

  it('a temporary Member membership ends: their JWT and their tokens get 401', async () => {
    const t = await team();
    await setRole(app, t, { role: 'Developer' });
    const tok = await createToken(app, t.devJwt, { scope: 'read' });
    const expiresAt = later(HOUR);
    const res = await app.request('PATCH', `/v1/workspace/members/${t.dev.user.id}`, {
      token: t.owner.jwt,
      body: { wsRole: 'Member', expiresAt },
      schema: memberSchema,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.expiresAt).toBe(expiresAt);
    expect((await pull(app, t.p.id, 'dev', tok.token)).status).toBe(200);
    clock.advance(HOUR);
    expect((await vars(app, t.p.id, 'dev', t.devJwt)).status).toBe(401);
    expect((await pull(app, t.p.id, 'dev', tok.token)).status).toBe(401);
    await expireAccess(app.deps);
    const members = await app.request('GET', '/v1/workspace/members', { token: t.owner.jwt, schema: membersResponse });
    expect(members.body.members.map((m) => m.id)).not.toContain(t.dev.user.id);
    expect((await pull(app, t.p.id, 'dev', tok.token)).status).toBe(401);
  });

  it('refuses an expiresAt in the past with 400 VALIDATION naming expiresAt, and changes nothing', async () => {
    const t = await team();
    await setRole(app, t, { role: 'Developer' });
    const past = later(-1_000);
    const env = await setEnv(app, t, 'prod', { permission: 'read', expiresAt: past });
    expect(env.status).toBe(400);
    expect(env.error).toMatchObject({ code: 'VALIDATION', field: 'expiresAt' });
    const now = await setEnv(app, t, 'prod', { permission: 'read', expiresAt: clock.now().toISOString() });
    expect(now.error).toMatchObject({ code: 'VALIDATION', field: 'expiresAt' });
    const role = await setRole(app, t, { role: 'Admin', expiresAt: past });
    expect(role.error).toMatchObject({ code: 'VALIDATION', field: 'expiresAt' });
    const ws = await app.request('PATCH', `/v1/workspace/members/${t.dev.user.id}`, {
      token: t.owner.jwt,
      body: { wsRole: 'Owner', expiresAt: past },
    });
    expect(ws.status).toBe(400);
    expect(ws.error).toMatchObject({ code: 'VALIDATION', field: 'expiresAt' });
    const list = await app.request('GET', `/v1/projects/${t.p.id}/members`, {
      token: t.owner.jwt,
      schema: projectMembersResponse,
    });
    expect(list.body.members.find((m) => m.userId === t.dev.user.id)).toMatchObject({
      role: 'Developer',
      envPermissions: {},
      envPermissionExpiry: {},
      expiresAt: null,
    });
    const members = await app.request('GET', '/v1/workspace/members', { token: t.owner.jwt, schema: membersResponse });
    expect(members.body.members.find((m) => m.id === t.dev.user.id)).toMatchObject({
      wsRole: 'Member',
      expiresAt: null,
    });
    expect((await vars(app, t.p.id, 'prod', t.devJwt)).status).toBe(403);
  });

  it('the job removes expired rows, audits access.expire and sends the access.expire webhook', async () => {
    const t = await team();
    const hook = await app.request('POST', '/v1/workspace/webhooks', {
      token: t.owner.jwt,
      body: { name: 'access', url: rx.url('/access'), events: ['access.expire'] },
      schema: createWebhookResponse,
    });
    expect(hook.status, hook.text).toBe(201);
    await setRole(app, t, { role: 'Developer' });
    const expiresAt = later(60_000);
    await setEnv(app, t, 'prod', { permission: 'read', expiresAt });
    clock.advance(60_000);
    // The job itself (every 10 s of real time, one instance at a time) removes the row.
    await until(
      'the access-expiry job',
      async () =>
        (await app.db.db.selectFrom('env_permissions').selectAll().where('user_id', '=', t.dev.user.id).execute())
          .length === 0,
      25_000,
    );
    const audit = await app.request('GET', `/v1/projects/${t.p.id}/audit`, { token: t.owner.jwt, schema: auditPage });
    const entry = audit.body.logs.find((l) => l.action === 'access.expire');
    expect(entry).toMatchObject({ targetEnv: 'prod' });
    expect(entry?.detail).toEqual({ grant: 'env-permission', userId: t.dev.user.id, permission: 'read', expiresAt });
    const [delivery] = await rx.waitFor(1, (r) => r.path === '/access');
    expect(delivery!.body).toMatchObject({ event: 'access.expire', projectId: t.p.id, env: 'prod' });
    expect((await vars(app, t.p.id, 'prod', t.devJwt)).status).toBe(403);
  }, 40_000);
});

describe(`temporary access on two instances (${dialectName})`, () => {
  it('a grant that expires is refused by both instances at once', async () => {
    const pg = process.env.TEST_DATABASE_URL ? await freshPgSchema() : null;
    const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-multi-'));
    const env: Record<string, string> = pg
      ? { DATABASE_URL: pg.url, MASTER_KEY: randomBytes(32).toString('base64') }
      : {};
    const a = await startServer({ dataDir, env });
    const b = await startServer({ dataDir, env });
    try {
      const owner = await signupUser(a, 'Multi');
      const dev = await signupUser(a, 'Temp');
      const wsId = (await a.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse })).body.user
        .workspaceId;
      await a.request('POST', '/v1/workspace/invites', {
        token: owner.jwt,
        body: { email: dev.email, wsRole: 'Member' },
      });
      const devJwt = (
        await a.request('POST', '/v1/auth/switch-workspace', {
          token: dev.jwt,
          body: { workspaceId: wsId },
          schema: switchWorkspaceResponse,
        })
      ).body.token;
      const p = await createProject(a, owner.jwt);
      await upsert(a, owner.jwt, p.id, ['prod'], [{ key: 'A', value: 'one', type: 'plain' }]);
      await a.request('PUT', `/v1/projects/${p.id}/members/${dev.user.id}`, {
        token: owner.jwt,
        body: { role: 'Developer' },
      });
      // Real time on real processes: a grant of two seconds.
      const expiresAt = new Date(Date.now() + 2_000).toISOString();
      const set = await a.request('PUT', `/v1/projects/${p.id}/members/${dev.user.id}/envs/prod`, {
        token: owner.jwt,
        body: { permission: 'read', expiresAt },
      });
      expect(set.status, set.text).toBe(200);
      const tok = await createToken(a, devJwt, { scope: 'read' });
      const url = `/v1/projects/${p.id}/envs/prod/pull?metadata=false`;
      // Both instances have read (and cached) the grant.
      expect((await a.request('GET', url, { token: tok.token })).text).toBe('A=one\n');
      expect((await b.request('GET', url, { token: tok.token })).text).toBe('A=one\n');
      expect((await b.request('GET', `/v1/projects/${p.id}/envs/prod/vars`, { token: devJwt })).status).toBe(200);
      const wait = Date.parse(expiresAt) - Date.now() + 50;
      await new Promise((r) => setTimeout(r, Math.max(0, wait)));
      // Within the job's period (10 s): neither instance has swept yet, and both refuse.
      const [onA, onB, jwtA, jwtB] = await Promise.all([
        a.request('GET', url, { token: tok.token }),
        b.request('GET', url, { token: tok.token }),
        a.request('GET', `/v1/projects/${p.id}/envs/prod/vars`, { token: devJwt }),
        b.request('GET', `/v1/projects/${p.id}/envs/prod/vars`, { token: devJwt }),
      ]);
      expect([onA.status, onB.status, jwtA.status, jwtB.status]).toEqual([403, 403, 403, 403]);
    } finally {
      await a.stop();
      await b.stop();
      await pg?.drop();
    }
  }, 60_000);
});
