import {
  acceptInviteResponse,
  auditPage,
  authResponse,
  billing,
  connections,
  inviteAddedResponse,
  inviteSentResponse,
  invitesResponse,
  member as memberSchema,
  membersResponse,
  projectMember,
  projectMembersResponse,
  sessionResponse,
  stats,
  switchWorkspaceResponse,
  workspace,
} from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { ManualClock } from '../src/lib/clock.js';
import {
  createProject,
  createToken,
  dialectName,
  loginSession,
  projectList,
  signupUser,
  startApp,
  type TestApp,
  upsert,
} from './harness.js';
import { startSmtpCapture } from './smtp.js';

describe(`workspace and team (${dialectName})`, () => {
  let app: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtpCapture>>;
  const clock = new ManualClock();
  beforeAll(async () => {
    smtp = await startSmtpCapture();
    app = await startApp({ clock, env: { SMTP_URL: smtp.url, PUBLIC_URL: 'https://svcenv.example.test' } });
  });
  afterAll(async () => {
    await app.stop();
    await smtp.stop();
  });

  /** The body of a GET that must succeed, checked against `schema`. */
  const get = async <S extends z.ZodType>(path: string, jwt: string, schema: S) => {
    const res = await app.request('GET', path, { token: jwt, schema });
    expect(res.status, `GET ${path}: ${res.text}`).toBe(200);
    return res.body;
  };
  const session = async (jwt: string) => (await get('/v1/auth/session', jwt, sessionResponse)).user;
  /** A session in the inviting Owner's workspace for a member the Owner added. */
  const switchTo = async (jwt: string, workspaceId: string) =>
    (
      await app.request('POST', '/v1/auth/switch-workspace', {
        token: jwt,
        body: { workspaceId },
        schema: switchWorkspaceResponse,
      })
    ).body.token;

  it('shows and renames the workspace (Owner only), with billing, stats and connections', async () => {
    const owner = await signupUser(app, 'Olga');
    const ws = await app.request('GET', '/v1/workspace', { token: owner.jwt, schema: workspace });
    expect(ws.status).toBe(200);
    expect(ws.body).toEqual({
      id: expect.any(String),
      name: "Olga's workspace",
      slug: expect.stringMatching(/^olga-s-workspace/),
    });
    const renamed = await app.request('PATCH', '/v1/workspace', {
      token: owner.jwt,
      body: { name: 'Acme' },
      schema: workspace,
    });
    expect(renamed.body).toEqual({ ...ws.body, name: 'Acme' });
    const p = await createProject(app, owner.jwt);
    await upsert(
      app,
      owner.jwt,
      p.id,
      ['dev', 'prod'],
      [
        { key: 'A', value: '1', type: 'plain' },
        { key: 'B', value: '2', type: 'plain' },
      ],
    );
    const t1 = await createToken(app, owner.jwt);
    await createToken(app, owner.jwt, { expiresIn: 30 });
    await createToken(app, owner.jwt).then((t) => app.request('DELETE', `/v1/tokens/${t.id}`, { token: owner.jwt }));
    expect(await get('/v1/workspace/billing', owner.jwt, billing)).toEqual({
      plan: 'free',
      limits: { projects: 3, members: 3, envsPerProject: 3 },
      usage: { projects: 1, members: 1 },
    });
    expect(await get('/v1/workspace/stats', owner.jwt, stats)).toEqual({
      memberCount: 1,
      projectCount: 1,
      variableCount: 4,
      tokenCount: 2,
    });
    clock.advance(31 * 86400_000);
    const fresh = await app.request('POST', '/v1/auth/login', {
      body: { email: owner.email, password: owner.password },
      schema: loginSession,
    });
    expect((await get('/v1/workspace/stats', fresh.body.token, stats)).tokenCount).toBe(1);
    clock.set(new Date());
    expect(await get('/v1/workspace/connections', owner.jwt, connections)).toEqual({
      operator: { connected: false, lastSync: null },
    });
    await app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, {
      token: t1.token,
      headers: { 'x-svcenv-client': 'operator' },
    });
    const first = (await get('/v1/workspace/connections', owner.jwt, connections)).operator;
    expect(first.connected).toBe(true);
    // D18: the latest one, even seconds after the previous (an earlier version wrote once per 10 s).
    clock.advance(3_000);
    await app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, {
      token: t1.token,
      headers: { 'x-svcenv-client': 'operator' },
    });
    const conn = (await get('/v1/workspace/connections', owner.jwt, connections)).operator;
    expect(Date.parse(conn.lastSync!) - Date.parse(first.lastSync!)).toBe(3_000);
    // A pull that commits after a later one does not move it back.
    clock.advance(-1_000);
    await app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, {
      token: t1.token,
      headers: { 'x-svcenv-client': 'operator' },
    });
    expect((await get('/v1/workspace/connections', owner.jwt, connections)).operator.lastSync).toBe(conn.lastSync);
    clock.advance(1_000);
    clock.advance(11 * 60_000);
    expect((await get('/v1/workspace/connections', owner.jwt, connections)).operator).toEqual({
      connected: false,
      lastSync: conn.lastSync,
    });
    clock.set(new Date());
  });

  it('adds an existing account at once and emails them; invites a new address by a link that is accepted', async () => {
    const owner = await signupUser(app, 'Owen');
    const existing = await signupUser(app, 'Erin');
    const added = await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: ` ${existing.email.toUpperCase()}  `, wsRole: 'Member' },
      schema: inviteAddedResponse,
    });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ userId: existing.user.id, name: 'Erin', wsRole: 'Member' });
    // Signup also mailed this address its verification link (D11); the notice is the other message.
    const notice = await smtp.waitFor(existing.email, (m) => !/verify/i.test(m.subject));
    expect(notice.subject).toContain("Owen's workspace");
    expect(
      (
        await app.request('POST', '/v1/workspace/invites', {
          token: owner.jwt,
          body: { email: existing.email, wsRole: 'Member' },
        })
      ).status,
    ).toBe(409);

    const newcomer = `new-${Date.now()}@example.test`;
    const sent = await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: newcomer, wsRole: 'Owner' },
      schema: inviteSentResponse,
    });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ invited: true, email: newcomer });
    const mail = await smtp.waitFor(newcomer);
    const token = /https:\/\/svcenv\.example\.test\/invite\?token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1];
    expect(token).toBeTruthy();
    const pending = await get('/v1/workspace/invites', owner.jwt, invitesResponse);
    expect(pending.invites).toEqual([expect.objectContaining({ email: newcomer, wsRole: 'Owner' })]);

    const stranger = await signupUser(app, 'Stranger');
    expect((await app.request('POST', '/v1/auth/accept-invite', { token: stranger.jwt, body: { token } })).status).toBe(
      403,
    );
    const res = await app.request('POST', '/v1/auth/signup', {
      body: { name: 'Nina', email: newcomer, password: 'password-123' },
      schema: authResponse,
    });
    const accepted = await app.request('POST', '/v1/auth/accept-invite', {
      token: res.body.token,
      body: { token },
      schema: acceptInviteResponse,
    });
    expect(accepted.status).toBe(200);
    const ownerWs = await session(owner.jwt);
    expect(accepted.body).toEqual({
      token: expect.stringMatching(/^eyJ/),
      workspaceId: ownerWs.workspaceId,
      workspaceName: ownerWs.workspaceName,
      wsRole: 'Owner',
    });
    expect((await session(accepted.body.token)).workspaceId).toBe(ownerWs.workspaceId);
    expect(
      (await app.request('POST', '/v1/auth/accept-invite', { token: res.body.token, body: { token } })).status,
    ).toBe(404);
    const { members } = await get('/v1/workspace/members', owner.jwt, membersResponse);
    expect(members.map((m) => [m.name, m.wsRole]).sort()).toEqual([
      ['Erin', 'Member'],
      ['Nina', 'Owner'],
      ['Owen', 'Owner'],
    ]);
    // Switching back to the user's own workspace works too.
    const own = await session(res.body.token);
    const back = await app.request('POST', '/v1/auth/switch-workspace', {
      token: accepted.body.token,
      body: { workspaceId: own.workspaceId },
    });
    expect(back.status).toBe(200);
    const audit = (await get('/v1/workspace/audit?limit=10', owner.jwt, auditPage)).logs.map((l) => l.action);
    expect(audit).toEqual(expect.arrayContaining(['member.add', 'member.invite']));
  });

  it('expires invites after 7 days and revokes them on request', async () => {
    const owner = await signupUser(app, 'Ivy');
    const email = `late-${Date.now()}@example.test`;
    await app.request('POST', '/v1/workspace/invites', { token: owner.jwt, body: { email, wsRole: 'Member' } });
    const token = /invite\?token=([A-Za-z0-9_-]+)/.exec((await smtp.waitFor(email)).text)![1];
    const late = await signupUser(app, 'Late');
    await app.db.db.updateTable('users').set({ email }).where('id', '=', late.user.id).execute();
    clock.advance(7 * 86400_000 + 1000);
    const login = await app.request('POST', '/v1/auth/login', {
      body: { email, password: late.password },
      schema: loginSession,
    });
    const jwt = login.body.token;
    expect((await app.request('POST', '/v1/auth/accept-invite', { token: jwt, body: { token } })).status).toBe(404);
    clock.set(new Date());
    const second = `revoked-${Date.now()}@example.test`;
    await app.request('POST', '/v1/workspace/invites', { token: owner.jwt, body: { email: second, wsRole: 'Member' } });
    const inv = (await get('/v1/workspace/invites', owner.jwt, invitesResponse)).invites.find(
      (i) => i.email === second,
    );
    expect((await app.request('DELETE', `/v1/workspace/invites/${inv!.id}`, { token: owner.jwt })).status).toBe(204);
    expect((await app.request('DELETE', `/v1/workspace/invites/${inv!.id}`, { token: owner.jwt })).status).toBe(404);
  });

  it('keeps the invite when the SMTP server is down and delivers it once it recovers', async () => {
    const owner = await signupUser(app, 'Sam');
    const email = `retry-${Date.now()}@example.test`;
    smtp.setFailing(true);
    const res = await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email, wsRole: 'Member' },
    });
    expect(res.status).toBe(202);
    await new Promise((r) => setTimeout(r, 700));
    const job = await app.db.db
      .selectFrom('jobs')
      .selectAll()
      .where('kind', '=', 'email.send')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(job.status).toBe('pending');
    expect(job.attempts).toBeGreaterThanOrEqual(1);
    smtp.setFailing(false);
    clock.advance(60_000);
    app.deps.jobs.kick();
    const mail = await smtp.waitFor(email);
    expect(mail.text).toContain('/invite?token=');
    clock.set(new Date());
  });

  it('changes roles, keeps at least one Owner, and forbids removing oneself (D16)', async () => {
    const owner = await signupUser(app, 'Rita');
    const other = await signupUser(app, 'Rob');
    await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: other.email, wsRole: 'Member' },
    });
    const me = (await session(owner.jwt)).id;
    const demote = await app.request('PATCH', `/v1/workspace/members/${me}`, {
      token: owner.jwt,
      body: { wsRole: 'Member' },
    });
    expect(demote.status).toBe(409);
    const promote = await app.request('PATCH', `/v1/workspace/members/${other.user.id}`, {
      token: owner.jwt,
      body: { wsRole: 'Owner' },
      schema: memberSchema,
    });
    expect(promote.status).toBe(200);
    expect(promote.body).toEqual({
      id: other.user.id,
      name: 'Rob',
      email: other.email,
      wsRole: 'Owner',
      joinedAt: expect.any(String),
      expiresAt: null,
    });
    // The same role again answers the member as it is and records no change.
    const again = await app.request('PATCH', `/v1/workspace/members/${other.user.id}`, {
      token: owner.jwt,
      body: { wsRole: 'Owner' },
      schema: memberSchema,
    });
    expect(again.body).toEqual(promote.body);
    const { logs } = await get('/v1/workspace/audit', owner.jwt, auditPage);
    expect(logs.filter((l) => l.action === 'member.role_change')).toHaveLength(1);
    expect((await app.request('DELETE', `/v1/workspace/members/${me}`, { token: owner.jwt })).status).toBe(403);
    expect(
      (await app.request('PATCH', `/v1/workspace/members/${me}`, { token: owner.jwt, body: { wsRole: 'Member' } }))
        .status,
    ).toBe(200);
    // Rita is now a Member: team management is closed to her on her very next request.
    expect(
      (
        await app.request('POST', '/v1/workspace/invites', {
          token: owner.jwt,
          body: { email: 'x@example.test', wsRole: 'Member' },
        })
      ).status,
    ).toBe(403);
    expect((await app.request('PATCH', '/v1/workspace', { token: owner.jwt, body: { name: 'nope' } })).status).toBe(
      403,
    );
    expect((await app.request('GET', '/v1/workspace/audit', { token: owner.jwt })).status).toBe(403);
    expect(
      (await app.request('PATCH', `/v1/workspace/members/${me}`, { token: owner.jwt, body: { wsRole: 'Guest' } }))
        .status,
    ).toBe(400);
  });

  it('cuts off a removed member and every token they created on the very next request (D32)', async () => {
    const owner = await signupUser(app, 'Uma');
    const member = await signupUser(app, 'Mia');
    const wsId = (await session(owner.jwt)).workspaceId;
    await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: member.email, wsRole: 'Member' },
    });
    const p = await createProject(app, owner.jwt);
    await app.request('PUT', `/v1/projects/${p.id}/members/${member.user.id}`, {
      token: owner.jwt,
      body: { role: 'Developer' },
    });
    const jwt = await switchTo(member.jwt, wsId);
    const tok = await createToken(app, jwt, { scope: 'read' });
    expect((await app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token: tok.token })).status).toBe(200);
    expect((await app.request('GET', `/v1/projects/${p.id}`, { token: jwt })).status).toBe(200);
    expect((await app.request('DELETE', `/v1/workspace/members/${member.user.id}`, { token: owner.jwt })).status).toBe(
      204,
    );
    expect((await app.request('GET', `/v1/projects/${p.id}`, { token: jwt })).status).toBe(401);
    expect((await app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token: tok.token })).status).toBe(401);
    const pm = (await get(`/v1/projects/${p.id}/members`, owner.jwt, projectMembersResponse)).members;
    expect(pm.map((m) => m.userId)).not.toContain(member.user.id);
    expect((await app.request('DELETE', `/v1/workspace/members/${member.user.id}`, { token: owner.jwt })).status).toBe(
      404,
    );
    // Revoked, not suspended: adding the person back does not bring the old token back.
    const readd = await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: member.email, wsRole: 'Owner' },
    });
    expect(readd.status).toBe(200);
    expect((await app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token: tok.token })).status).toBe(401);
  });

  it('settles a pending invite when its address is added directly: no seat held, no way back in by the old link', async () => {
    const owner = await signupUser(app, 'Sol');
    const email = `direct-${Date.now()}@example.test`;
    await app.request('POST', '/v1/workspace/invites', { token: owner.jwt, body: { email, wsRole: 'Member' } });
    const link = /invite\?token=([A-Za-z0-9_-]+)/.exec((await smtp.waitFor(email)).text)![1];
    const signup = await app.request('POST', '/v1/auth/signup', {
      body: { name: 'Dee', email, password: 'pw-long-enough' },
      schema: authResponse,
    });
    expect(signup.status).toBe(201);
    const added = await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email, wsRole: 'Member' },
      schema: inviteAddedResponse,
    });
    expect(added.status).toBe(200);
    const { invites } = await get('/v1/workspace/invites', owner.jwt, invitesResponse);
    expect(invites.map((i) => i.email)).not.toContain(email);
    expect((await get('/v1/workspace/billing', owner.jwt, billing)).usage.members).toBe(2);
    const userId = added.body.userId;
    expect((await app.request('DELETE', `/v1/workspace/members/${userId}`, { token: owner.jwt })).status).toBe(204);
    const back = await app.request('POST', '/v1/auth/accept-invite', {
      token: signup.body.token,
      body: { token: link },
    });
    expect(back.status).toBe(404);
    const { members } = await get('/v1/workspace/members', owner.jwt, membersResponse);
    expect(members.map((m) => m.id)).not.toContain(userId);
  });

  it('limits members on the free plan, counting pending invites (D15)', async () => {
    const owner = await signupUser(app, 'Lou');
    await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: `a-${Date.now()}@example.test`, wsRole: 'Member' },
    });
    await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: `b-${Date.now()}@example.test`, wsRole: 'Member' },
    });
    const third = await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: `c-${Date.now()}@example.test`, wsRole: 'Member' },
    });
    expect(third.status).toBe(403);
    expect(third.error).toMatchObject({ code: 'PLAN_LIMIT', field: 'members' });
    expect((await get('/v1/workspace/billing', owner.jwt, billing)).usage.members).toBe(3);
  });

  it('manages project members and per-environment overrides (D22)', async () => {
    const owner = await signupUser(app, 'Pat');
    const dev = await signupUser(app, 'Dev');
    const wsId = (await session(owner.jwt)).workspaceId;
    await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: dev.email, wsRole: 'Member' },
    });
    const devJwt = await switchTo(dev.jwt, wsId);
    const p = await createProject(app, owner.jwt);
    expect((await app.request('GET', `/v1/projects/${p.id}`, { token: devJwt })).status).toBe(404);
    expect((await get('/v1/projects', devJwt, projectList)).projects).toEqual([]);
    const set = await app.request('PUT', `/v1/projects/${p.id}/members/${dev.user.id}`, {
      token: owner.jwt,
      body: { role: 'Developer' },
      schema: projectMember,
    });
    expect(set.body).toEqual({
      userId: dev.user.id,
      name: 'Dev',
      email: dev.email,
      role: 'Developer',
      envPermissions: {},
      expiresAt: null,
      envPermissionExpiry: {},
    });
    expect((await app.request('GET', `/v1/projects/${p.id}/envs/prod/vars`, { token: devJwt })).status).toBe(403);
    const grant = await app.request('PUT', `/v1/projects/${p.id}/members/${dev.user.id}/envs/prod`, {
      token: owner.jwt,
      body: { permission: 'read' },
      schema: projectMember,
    });
    expect(grant.body.envPermissions).toEqual({ prod: 'read' });
    expect((await app.request('GET', `/v1/projects/${p.id}/envs/prod/vars`, { token: devJwt })).status).toBe(200);
    expect((await app.request('GET', `/v1/projects/${p.id}/members`, { token: devJwt })).status).toBe(403);
    expect(
      (await app.request('DELETE', `/v1/projects/${p.id}/members/${dev.user.id}/envs/prod`, { token: owner.jwt }))
        .status,
    ).toBe(204);
    expect((await app.request('GET', `/v1/projects/${p.id}/envs/prod/vars`, { token: devJwt })).status).toBe(403);
    const list = (await get(`/v1/projects/${p.id}/members`, owner.jwt, projectMembersResponse)).members;
    expect(list.map((m) => [m.name, m.role])).toEqual([
      ['Dev', 'Developer'],
      ['Pat', 'Admin'],
    ]);
    expect(
      (
        await app.request('PUT', `/v1/projects/${p.id}/members/${crypto.randomUUID()}`, {
          token: owner.jwt,
          body: { role: 'Admin' },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await app.request('PUT', `/v1/projects/${p.id}/members/${dev.user.id}`, {
          token: owner.jwt,
          body: { role: 'Boss' },
        })
      ).status,
    ).toBe(400);
    expect(
      (await app.request('DELETE', `/v1/projects/${p.id}/members/${dev.user.id}`, { token: owner.jwt })).status,
    ).toBe(204);
    expect((await app.request('GET', `/v1/projects/${p.id}`, { token: devJwt })).status).toBe(404);
    const audit = (await get(`/v1/projects/${p.id}/audit`, owner.jwt, auditPage)).logs.map((l) => l.action);
    expect(audit).toEqual(
      expect.arrayContaining(['project_member.set', 'env_permission.set', 'project_member.remove']),
    );
  });

  it('requires a JWT on workspace endpoints (D10)', async () => {
    const owner = await signupUser(app, 'Jay');
    const t = await createToken(app, owner.jwt, { scope: 'write' });
    for (const path of [
      '/v1/workspace',
      '/v1/workspace/members',
      '/v1/workspace/billing',
      '/v1/workspace/stats',
      '/v1/workspace/audit',
    ]) {
      expect((await app.request('GET', path, { token: t.token })).status, path).toBe(401);
    }
  });
});
