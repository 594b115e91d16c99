import { operations as ops } from '@svcenv/contract/operations';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, dialectName, signupUser, startApp, type TestApp } from './harness.js';

/**
 * D69: the instance's administrators (the first account, and grant-admin's: admin.test.ts), their routes and
 * the signup modes; D68: where a login lands, and which workspace holds a linked project.
 */
type User = Awaited<ReturnType<typeof signupUser>>;

describe(`instance administration (D69, ${dialectName})`, () => {
  let app: TestApp;
  let first: User;
  let second: User;

  beforeAll(async () => {
    app = await startApp();
    first = await signupUser(app, 'First');
    second = await signupUser(app, 'Second');
  });
  afterAll(() => app.stop());

  const me = async (jwt: string) => (await app.call(ops.getMe, {}, jwt)).body.user;

  it('the first account is the instance administrator, the second is not (GET /v1/me, the session)', async () => {
    expect((await me(first.jwt)).instanceAdmin).toBe(true);
    expect((await me(second.jwt)).instanceAdmin).toBe(false);
    const session = await app.call(ops.getSession, {}, second.jwt);
    expect(session.body.user.instanceAdmin).toBe(false);
    const login = await app.call(ops.login, { body: { email: first.email, password: first.password } });
    expect(login.body).toMatchObject({ user: { instanceAdmin: true } });
  });

  it('every administrator route answers an administrator and refuses anyone else with 403 FORBIDDEN', async () => {
    const wsId = (await me(second.jwt)).workspaceId;
    const routes = [
      (jwt: string) => app.call(ops.adminListWorkspaces, {}, jwt),
      (jwt: string) => app.call(ops.adminSetPlan, { params: { id: wsId }, body: { plan: 'free' } }, jwt),
      (jwt: string) => app.call(ops.adminListUsers, {}, jwt),
      (jwt: string) => app.call(ops.adminResetLink, { params: { id: second.user.id } }, jwt),
      (jwt: string) => app.call(ops.adminGetSettings, {}, jwt),
      (jwt: string) => app.call(ops.adminUpdateSettings, { body: { signup: 'open' } }, jwt),
    ];
    for (const run of routes) {
      const ok = await run(first.jwt);
      expect(ok.status, ok.text).toBe(200);
      const refused = await run(second.jwt);
      expect(refused.status).toBe(403);
      expect(refused.error.code).toBe('FORBIDDEN');
    }
    // An access token, even the administrator's, is no session (D10).
    const tok = await app.call(ops.createToken, { body: { name: 'admin-tok', envs: ['*'] } }, first.jwt);
    expect((await app.call(ops.adminListUsers, {}, tok.body.token)).status).toBe(401);
  });

  it('lists workspaces with their plan, members and projects, and users with their flag', async () => {
    await createProject(app, second.jwt, { name: 'counted' });
    const list = await app.call(ops.adminListWorkspaces, {}, first.jwt);
    const ws = list.body.workspaces.find((w) => w.name === "Second's workspace")!;
    expect(ws).toMatchObject({ plan: 'free', members: 1, projects: 1 });
    expect(ws.slug).toMatch(/^second/);
    const users = await app.call(ops.adminListUsers, {}, first.jwt);
    expect(users.body.users.map((u) => [u.email, u.instanceAdmin])).toEqual(
      expect.arrayContaining([
        [first.email, true],
        [second.email, false],
      ]),
    );
  });

  it("changes a workspace's plan (D15), audited in that workspace; unknown workspace 404, unknown plan 400", async () => {
    const wsId = (await me(second.jwt)).workspaceId;
    const set = await app.call(ops.adminSetPlan, { params: { id: wsId }, body: { plan: 'team' } }, first.jwt);
    expect(set.body).toMatchObject({ id: wsId, plan: 'team' });
    const billing = await app.call(ops.getBilling, {}, second.jwt);
    expect(billing.body.limits.members).toBe(25);
    const audit = await app.call(ops.workspaceAudit, { query: { action: 'workspace.plan_change' } }, second.jwt);
    expect(audit.body.logs[0]).toMatchObject({
      action: 'workspace.plan_change',
      actorId: first.user.id,
      detail: { from: 'free', to: 'team' },
    });
    const missing = await app.call(
      ops.adminSetPlan,
      { params: { id: '00000000-0000-4000-8000-000000000000' }, body: { plan: 'team' } },
      first.jwt,
    );
    expect(missing.status).toBe(404);
    const bad = await app.request('PUT', `/v1/admin/workspaces/${wsId}/plan`, {
      token: first.jwt,
      body: { plan: 'platinum' },
    });
    expect(bad.status).toBe(400);
    expect(bad.error.field).toBe('plan');
    await app.call(ops.adminSetPlan, { params: { id: wsId }, body: { plan: 'free' } }, first.jwt);
  });

  it('a reset link for a user (D54): it sets the password, is audited, and never reaches the log', async () => {
    const res = await app.call(ops.adminResetLink, { params: { id: second.user.id } }, first.jwt);
    const token = new URL(res.body.link).searchParams.get('token')!;
    expect(res.body.link).toContain('/reset-password?token=');
    expect(app.logs()).not.toContain(token);
    const reset = await app.call(ops.resetPassword, { body: { token, newPassword: 'a-new-password-1' } });
    expect(reset.status).toBe(204);
    const login = await app.call(ops.login, { body: { email: second.email, password: 'a-new-password-1' } });
    expect(login.status).toBe(200);
    second = { ...second, password: 'a-new-password-1', jwt: (login.body as { token: string }).token };
    const audit = await app.call(ops.workspaceAudit, { query: { action: 'admin.reset_link' } }, second.jwt);
    expect(audit.body.logs[0]).toMatchObject({ actorId: first.user.id, detail: { userId: second.user.id } });
    expect(JSON.stringify(audit.body)).not.toContain(token);
    const unknown = await app.call(
      ops.adminResetLink,
      { params: { id: '00000000-0000-4000-8000-000000000000' } },
      first.jwt,
    );
    expect(unknown.status).toBe(404);
  });

  it('a PLAN_LIMIT answer names the Instance page to an administrator and the administrator to others', async () => {
    const adminProject = await createProject(app, first.jwt, { name: 'limits' });
    const asAdmin = await app.call(ops.createEnv, { params: { id: adminProject.id }, body: { name: 'qa' } }, first.jwt);
    expect(asAdmin.error).toMatchObject({ code: 'PLAN_LIMIT', field: 'envsPerProject' });
    expect(asAdmin.error.message).toContain('Instance page');
    expect(asAdmin.error.message).not.toContain('ask your instance administrator');
    const p = await createProject(app, second.jwt, { name: 'limits' });
    const asMember = await app.call(ops.createEnv, { params: { id: p.id }, body: { name: 'qa' } }, second.jwt);
    expect(asMember.error).toMatchObject({ code: 'PLAN_LIMIT', field: 'envsPerProject' });
    expect(asMember.error.message).toMatch(/Ask your instance administrator .* team or enterprise plan/);
    expect(asMember.error.message).not.toContain('npm run admin');
  });

  describe('signup modes', () => {
    const attempt = (email: string) =>
      app.call(ops.signup, { body: { name: 'Newcomer', email, password: 'a-long-password' } });
    const setMode = (signup: 'open' | 'invite' | 'closed') =>
      app.call(ops.adminUpdateSettings, { body: { signup } }, first.jwt);
    afterAll(() => setMode('open'));

    it('open by default; closed refuses every signup with 403 SIGNUP_CLOSED', async () => {
      expect((await app.call(ops.authOptions)).body.signup).toBe('open');
      expect((await app.call(ops.adminGetSettings, {}, first.jwt)).body).toEqual({ signup: 'open' });
      expect((await setMode('closed')).body).toEqual({ signup: 'closed' });
      expect((await app.call(ops.authOptions)).body.signup).toBe('closed');
      const refused = await attempt(`closed-${Date.now()}@example.test`);
      expect(refused.status).toBe(403);
      expect(refused.error).toMatchObject({ code: 'SIGNUP_CLOSED', field: 'email' });
      // An address that has an account gets the same answer: the mode is checked first.
      expect((await attempt(second.email)).error.code).toBe('SIGNUP_CLOSED');
      const audit = await app.call(ops.workspaceAudit, { query: { action: 'instance.settings_update' } }, first.jwt);
      expect(audit.body.logs[0]).toMatchObject({ detail: { signup: 'closed', from: 'open' } });
    });

    it('invite: only an email with a pending invite may sign up', async () => {
      await setMode('invite');
      const stranger = await attempt(`stranger-${Date.now()}@example.test`);
      expect(stranger.status).toBe(403);
      expect(stranger.error.code).toBe('SIGNUP_CLOSED');
      expect(stranger.error.message).toContain('invitation');
      const invited = `Invited-${Date.now()}@Example.test`;
      const inv = await app.call(ops.invite, { body: { email: invited, wsRole: 'Member' } }, first.jwt);
      expect(inv.status).toBe(202);
      // Emails compare case-insensitively (D7).
      const ok = await attempt(invited.toUpperCase());
      expect(ok.status, ok.text).toBe(201);
      // A revoked invite admits nobody.
      const later = `revoked-${Date.now()}@example.test`;
      await app.call(ops.invite, { body: { email: later, wsRole: 'Member' } }, first.jwt);
      const pending = await app.call(ops.listInvites, {}, first.jwt);
      const id = pending.body.invites.find((i) => i.email === later)!.id;
      await app.call(ops.revokeInvite, { params: { id } }, first.jwt);
      expect((await attempt(later)).error.code).toBe('SIGNUP_CLOSED');
    });

    it('a bad mode is 400 naming the field', async () => {
      const bad = await app.request('PUT', '/v1/admin/settings', { token: first.jwt, body: { signup: 'maybe' } });
      expect(bad.status).toBe(400);
      expect(bad.error.field).toBe('signup');
    });
  });
});

describe(`the workspace a session starts in (D68, ${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ env: { DEFAULT_PLAN: 'team' } });
  });
  afterAll(() => app.stop());

  const loginWs = async (u: User) => {
    const res = await app.call(ops.login, { body: { email: u.email, password: u.password } });
    expect(res.status).toBe(200);
    return (res.body as { user: { workspaceId: string } }).user.workspaceId;
  };
  const wsOf = async (jwt: string) => (await app.call(ops.getSession, {}, jwt)).body.user.workspaceId;

  it('lands in the workspace joined through an invite, then in the one switched to, then falls back', async () => {
    const owner = await signupUser(app, 'Owner');
    const ownerWs = await wsOf(owner.jwt);
    const invitee = await inviteThenSignup(owner.jwt, 'Invitee');
    expect(await loginWs(invitee.user)).toBe(ownerWs);

    // switch-workspace records the choice.
    const back = await app.call(ops.switchWorkspace, { body: { workspaceId: invitee.own } }, invitee.jwt);
    expect(back.status).toBe(200);
    expect(await loginWs(invitee.user)).toBe(invitee.own);
    const again = await app.call(ops.switchWorkspace, { body: { workspaceId: ownerWs } }, invitee.jwt);
    expect(again.status).toBe(200);
    expect(await loginWs(invitee.user)).toBe(ownerWs);

    // Removed from the remembered workspace: the login lands in the one they still have.
    const rm = await app.call(ops.removeMember, { params: { userId: invitee.user.user.id } }, owner.jwt);
    expect(rm.status).toBe(204);
    expect(await loginWs(invitee.user)).toBe(invitee.own);
  });

  /** Signup after an invite to a new address, then accept-invite with the link (D17), as the dashboard does. */
  async function inviteThenSignup(ownerJwt: string, name: string) {
    const email = `${name.toLowerCase()}-${Date.now()}@example.test`;
    const inv = await app.call(ops.invite, { body: { email, wsRole: 'Member' } }, ownerJwt);
    const token = new URL((inv.body as { inviteUrl: string }).inviteUrl).searchParams.get('token')!;
    const password = 'invitee-password';
    const up = await app.call(ops.signup, { body: { name, email, password } });
    const own = await wsOf(up.body.token);
    const accepted = await app.call(ops.acceptInvite, { body: { token } }, up.body.token);
    expect(accepted.status).toBe(200);
    return { user: { email, password, user: up.body.user, jwt: up.body.token }, own, jwt: accepted.body.token };
  }

  it("finds which of the caller's workspaces holds a project they can see, and nothing else", async () => {
    const owner = await signupUser(app, 'Holder');
    const ownerWs = await wsOf(owner.jwt);
    const shared = await createProject(app, owner.jwt, { name: 'shared-project' });
    const hidden = await createProject(app, owner.jwt, { name: 'hidden-project' });
    const invitee = await inviteThenSignup(owner.jwt, 'Linker');
    await app.call(
      ops.setProjectRole,
      { params: { id: shared.id, userId: invitee.user.user.id }, body: { role: 'Developer' } },
      owner.jwt,
    );
    // The invitee's session in their own workspace: the project link is another workspace's.
    const ownSession = (await app.call(ops.switchWorkspace, { body: { workspaceId: invitee.own } }, invitee.jwt)).body
      .token;
    for (const ref of [shared.id, shared.slug]) {
      const found = await app.call(ops.findProjectWorkspace, { query: { project: ref } }, ownSession);
      expect(found.body).toEqual({ workspaceId: ownerWs, workspaceName: "Holder's workspace", projectId: shared.id });
    }
    // A project of that workspace they are not a member of, and one of a workspace they are not in: 404.
    const notMember = await app.call(ops.findProjectWorkspace, { query: { project: hidden.id } }, ownSession);
    expect(notMember.status).toBe(404);
    const stranger = await signupUser(app, 'Stranger');
    const foreign = await app.call(ops.findProjectWorkspace, { query: { project: shared.id } }, stranger.jwt);
    expect(foreign.status).toBe(404);
    expect(foreign.error.message).toBe(notMember.error.message);
    // The Owner sees every project of their workspace.
    const asOwner = await app.call(ops.findProjectWorkspace, { query: { project: hidden.slug } }, owner.jwt);
    expect(asOwner.body.workspaceId).toBe(ownerWs);
  });
});
