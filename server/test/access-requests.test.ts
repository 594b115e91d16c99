/**
 * D74 access requests and D76 "who has access, and why" over HTTP, on SQLite and on PostgreSQL: the whole
 * request → approve → temporary grant → end path with emails through the SMTP capture server and webhooks on
 * a real receiver; who may decide (not the requester, not a Member, not a token); the 409s of decided,
 * withdrawn and expired requests; duration bounds; another workspace's project; asking for what one has.
 */
import {
  accessRequest,
  accessRequestsResponse,
  auditPage,
  createdAccessRequest,
  createWebhookResponse,
  envAccessResponse,
  sessionResponse,
  switchWorkspaceResponse,
} from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireAccess } from '../src/services/access/expiry.js';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';
import { type Receiver, startReceiver } from './receiver.js';
import { startSmtpCapture } from './smtp.js';

const PUBLIC_URL = 'https://svcenv.example.test';
const PROD_SECRET = 'prod-only-s3cret-4c1d';

interface Member {
  id: string;
  name: string;
  email: string;
  jwt: string;
}

describe(`access requests (D74) and who has access (D76), ${dialectName}`, () => {
  let app: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtpCapture>>;
  let receiver: Receiver;
  /** The server's clock runs this far ahead of real time (the test moves it). */
  let ahead = 0;
  let owner: Member;
  let admin: Member;
  let dev: Member;
  let dev2: Member;
  let workspaceId: string;

  beforeAll(async () => {
    smtp = await startSmtpCapture();
    receiver = await startReceiver();
    app = await startApp({
      env: { SMTP_URL: smtp.url, PUBLIC_URL, WEBHOOK_ALLOW_PRIVATE: 'true', DEFAULT_PLAN: 'enterprise' },
      clock: { now: () => new Date(Date.now() + ahead) },
    });
    const o = await signupUser(app, 'Olga');
    owner = { id: o.user.id, name: 'Olga', email: o.email, jwt: o.jwt };
    const session = await app.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    workspaceId = session.body.user.workspaceId;
    const join = async (name: string): Promise<Member> => {
      const u = await signupUser(app, name);
      const inv = await app.request('POST', '/v1/workspace/invites', {
        token: owner.jwt,
        body: { email: u.email, wsRole: 'Member' },
      });
      expect(inv.status, inv.text).toBe(200);
      const sw = await app.request('POST', '/v1/auth/switch-workspace', {
        token: u.jwt,
        body: { workspaceId },
        schema: switchWorkspaceResponse,
      });
      return { id: u.user.id, name, email: u.email, jwt: sw.body.token };
    };
    admin = await join('Adele');
    dev = await join('Devon');
    dev2 = await join('Dana');
  });
  afterAll(async () => {
    await app?.stop();
    await smtp?.stop();
    await receiver?.stop();
  });

  /** A project with dev and a protected prod; Adele Admin, Devon and Dana Developers (no prod by default). */
  async function setup() {
    const p = await createProject(app, owner.jwt, { envs: ['dev', 'prod'] });
    const prot = await app.request('PATCH', `/v1/projects/${p.id}/envs/prod`, {
      token: owner.jwt,
      body: { protected: true },
    });
    expect(prot.status, prot.text).toBe(200);
    for (const [m, role] of [
      [admin, 'Admin'],
      [dev, 'Developer'],
      [dev2, 'Developer'],
    ] as const) {
      const r = await app.request('PUT', `/v1/projects/${p.id}/members/${m.id}`, { token: owner.jwt, body: { role } });
      expect(r.status, r.text).toBe(200);
    }
    await upsert(app, owner.jwt, p.id, ['prod'], [{ key: 'DB_PASSWORD', value: PROD_SECRET, type: 'secret' }]);
    return p;
  }
  const arBase = (projectId: string) => `/v1/projects/${projectId}/access-requests`;
  const ask = (projectId: string, auth: string, body: object) =>
    app.request('POST', arBase(projectId), { token: auth, body, schema: createdAccessRequest });
  const prodRead = { env: 'prod', permission: 'read', durationSeconds: 3600, reason: 'incident 42: read the DB host' };
  const prodVars = (projectId: string, auth: string) =>
    app.request('GET', `/v1/projects/${projectId}/envs/prod/vars`, { token: auth });
  const whoHas = async (projectId: string, env = 'prod') => {
    const res = await app.request('GET', `/v1/projects/${projectId}/envs/${env}/access`, {
      token: owner.jwt,
      schema: envAccessResponse,
    });
    expect(res.status, res.text).toBe(200);
    return res.body.access;
  };

  it('asks, emails the approvers, approves for less than asked, grants until then, and ends by itself', async () => {
    const p = await setup();
    const hook = await app.request('POST', '/v1/workspace/webhooks', {
      token: owner.jwt,
      body: {
        name: `ar-${p.id}`,
        url: receiver.url(`/ar-${p.id}`),
        events: ['access.request', 'access.approve', 'access.expire'],
      },
      schema: createWebhookResponse,
    });
    expect(hook.status, hook.text).toBe(201);
    expect((await prodVars(p.id, dev.jwt)).status).toBe(403);

    // A token of Devon's asks (the CLI's way); the request is Devon's.
    const tok = await createToken(app, dev.jwt, { scope: 'read', envs: ['*'] });
    const asked = await ask(p.id, tok.token, prodRead);
    expect(asked.status, asked.text).toBe(201);
    expect(asked.body).toMatchObject({
      env: 'prod',
      permission: 'read',
      durationSeconds: 3600,
      status: 'pending',
      requesterId: dev.id,
      requesterName: 'Devon',
      notified: { approvers: 2, email: true },
    });
    expect(Date.parse(asked.body.pendingUntil) - Date.parse(asked.body.createdAt)).toBe(24 * 3600 * 1000);
    // Asking again while it is pending: 409.
    expect((await ask(p.id, dev.jwt, prodRead)).status).toBe(409);

    // The workspace's Owner and the project's Admin are emailed, with the reason and where to decide.
    for (const to of [owner.email, admin.email]) {
      const mail = await smtp.waitFor(to, (m) => m.subject.includes('asks for read access'));
      expect(mail.text).toContain('incident 42');
      expect(mail.text).toContain(`${PUBLIC_URL}/access-requests`);
    }

    // Devon lists his own; Dana (another Developer) sees none of his; the Admin sees it.
    const list = (auth: string) =>
      app.request('GET', arBase(p.id), { token: auth, schema: accessRequestsResponse }).then((r) => r.body);
    expect((await list(dev.jwt)).accessRequests.map((r) => r.id)).toEqual([asked.body.id]);
    expect((await list(dev2.jwt)).accessRequests).toEqual([]);
    expect((await list(admin.jwt)).accessRequests.map((r) => r.id)).toEqual([asked.body.id]);

    // Longer than asked: 400, nothing changes.
    const tooLong = await app.request('POST', `${arBase(p.id)}/${asked.body.id}/approve`, {
      token: admin.jwt,
      body: { durationSeconds: 7200 },
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.error).toMatchObject({ code: 'VALIDATION', field: 'durationSeconds' });
    expect((await prodVars(p.id, dev.jwt)).status).toBe(403);

    const approved = await app.request('POST', `${arBase(p.id)}/${asked.body.id}/approve`, {
      token: admin.jwt,
      body: { durationSeconds: 600 },
      schema: accessRequest,
    });
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', grantedSeconds: 600, decidedByName: 'Adele' });
    const ends = Date.parse(approved.body.grantExpiresAt!);
    expect(ends - Date.parse(approved.body.decidedAt!)).toBe(600_000);
    // Approving it again: 409.
    expect((await app.request('POST', `${arBase(p.id)}/${asked.body.id}/approve`, { token: owner.jwt })).status).toBe(
      409,
    );
    const outcome = await smtp.waitFor(dev.email, (m) => m.text.includes(approved.body.grantExpiresAt!));
    expect(outcome.subject).toContain('was approved');

    // Devon now reads prod, by session and by his token (D32), and D76 says why and until when.
    expect((await prodVars(p.id, dev.jwt)).status).toBe(200);
    expect((await prodVars(p.id, tok.token)).status).toBe(200);
    const members = await app.request('GET', `/v1/projects/${p.id}/members`, { token: owner.jwt });
    const devMember = (members.body as { members: { userId: string; envPermissionExpiry: object }[] }).members.find(
      (m) => m.userId === dev.id,
    )!;
    expect(devMember.envPermissionExpiry).toEqual({ prod: approved.body.grantExpiresAt });
    const who = await whoHas(p.id);
    expect(who.find((a) => a.userId === dev.id)).toEqual({
      userId: dev.id,
      name: 'Devon',
      email: dev.email,
      permission: 'read',
      source: 'request',
      expiresAt: approved.body.grantExpiresAt,
      requestId: asked.body.id,
    });
    expect(who.find((a) => a.userId === owner.id)).toMatchObject({ source: 'owner', permission: 'write' });
    expect(who.find((a) => a.userId === admin.id)).toMatchObject({ source: 'role', permission: 'write' });
    // Dana (Developer, protected prod) has none, so is not listed.
    expect(who.find((a) => a.userId === dev2.id)).toBeUndefined();

    // The grant's time passes: refused at once, before the job, for the session and the token alike.
    ahead = ends - Date.now() + 1000;
    try {
      expect((await prodVars(p.id, dev.jwt)).status).toBe(403);
      expect((await prodVars(p.id, tok.token)).status).toBe(403);
      expect((await whoHas(p.id)).find((a) => a.userId === dev.id)).toBeUndefined();
      // The job removes it and audits access.expire, with the request's id.
      // (The job may have run on its own already: either way the row is gone after a sweep.)
      await expireAccess(app.deps);
      const left = await app.db.db
        .selectFrom('env_permissions')
        .select('user_id')
        .where('project_id', '=', p.id)
        .where('user_id', '=', dev.id)
        .execute();
      expect(left).toEqual([]);
      // Its webhook is queued at the server's (moved) time: received while that time holds.
      await receiver.waitFor(1, (r) => r.path === `/ar-${p.id}` && r.body.event === 'access.expire');
    } finally {
      ahead = 0;
    }
    const audit = await app.request('GET', `/v1/projects/${p.id}/audit?limit=50`, {
      token: owner.jwt,
      schema: auditPage,
    });
    const actions = audit.body.logs.map((e) => e.action);
    for (const a of ['access.request', 'access.approve', 'access.expire']) expect(actions).toContain(a);
    const expiry = audit.body.logs.find((e) => e.action === 'access.expire')!;
    // svcenv acting by itself has no actor (as the retention and revocation jobs' entries).
    expect(expiry.actorId).toBeNull();
    expect(expiry.detail).toMatchObject({ grant: 'env-permission', userId: dev.id, requestId: asked.body.id });
    expect(JSON.stringify(audit.body)).not.toContain(PROD_SECRET);

    // Webhooks carry who, what and why, so a team can route them to a chat channel.
    const got = await receiver.waitFor(3, (r) => r.path === `/ar-${p.id}`);
    const byEvent = new Map(got.map((r) => [r.body.event, r.body]));
    expect(byEvent.get('access.request')).toMatchObject({
      env: 'prod',
      projectId: p.id,
      actor: `token:${tok.name}`,
      access: { requestId: asked.body.id, userName: 'Devon', permission: 'read', reason: prodRead.reason },
    });
    expect(byEvent.get('access.approve')).toMatchObject({ actor: 'Adele', access: { status: 'approved' } });
    expect(byEvent.has('access.expire')).toBe(true);
  });

  it('refuses the requester, Members and tokens as deciders; 409 once withdrawn, denied or expired', async () => {
    const p = await setup();
    const a = await ask(p.id, dev.jwt, prodRead);
    expect(a.status, a.text).toBe(201);
    const path = `${arBase(p.id)}/${a.body.id}`;
    // Devon cannot approve his own; Dana (a Developer) cannot approve; an Owner's token cannot (D74: a person).
    expect((await app.request('POST', `${path}/approve`, { token: dev.jwt })).status).toBe(403);
    expect((await app.request('POST', `${path}/approve`, { token: dev2.jwt })).status).toBe(403);
    const ownerToken = await createToken(app, owner.jwt, { scope: 'write', envs: ['*'] });
    expect((await app.request('POST', `${path}/approve`, { token: ownerToken.token })).status).toBe(401);
    // Only Devon withdraws it.
    expect((await app.request('POST', `${path}/withdraw`, { token: admin.jwt })).status).toBe(403);
    const w = await app.request('POST', `${path}/withdraw`, { token: dev.jwt, schema: accessRequest });
    expect(w.status, w.text).toBe(200);
    expect(w.body.status).toBe('withdrawn');
    for (const verb of ['approve', 'deny']) {
      expect((await app.request('POST', `${path}/${verb}`, { token: admin.jwt })).status).toBe(409);
    }
    expect((await prodVars(p.id, dev.jwt)).status).toBe(403);

    // Denied with a reason: the requester is told, a later approval is 409.
    const b = await ask(p.id, dev.jwt, prodRead);
    const denied = await app.request('POST', `${arBase(p.id)}/${b.body.id}/deny`, {
      token: owner.jwt,
      body: { reason: 'use the read replica' },
      schema: accessRequest,
    });
    expect(denied.status, denied.text).toBe(200);
    expect(denied.body).toMatchObject({ status: 'denied', decisionReason: 'use the read replica' });
    expect((await smtp.waitFor(dev.email, (m) => m.subject.includes('was denied'))).text).toContain('read replica');
    expect((await app.request('POST', `${arBase(p.id)}/${b.body.id}/approve`, { token: owner.jwt })).status).toBe(409);

    // Pending for 24 hours: expired at once (409 to approve), then recorded by the job.
    const c = await ask(p.id, dev.jwt, { ...prodRead, permission: 'write' });
    expect(c.status, c.text).toBe(201);
    ahead = 24 * 3600 * 1000 + 1000;
    try {
      expect((await app.request('POST', `${arBase(p.id)}/${c.body.id}/approve`, { token: owner.jwt })).status).toBe(
        409,
      );
      const listed = await app.request('GET', arBase(p.id), { token: dev.jwt, schema: accessRequestsResponse });
      expect(listed.body.accessRequests.find((r) => r.id === c.body.id)?.status).toBe('expired');
      await expireAccess(app.deps);
      const row = await app.db.db
        .selectFrom('access_requests')
        .select('status')
        .where('id', '=', c.body.id)
        .executeTakeFirstOrThrow();
      expect(row.status).toBe('expired');
    } finally {
      ahead = 0;
    }
  });

  it('answers bad input with 400, 404 or 409 and changes nothing', async () => {
    const p = await setup();
    for (const body of [
      { ...prodRead, durationSeconds: 299 },
      { ...prodRead, durationSeconds: 604_801 },
      { ...prodRead, reason: '' },
      { ...prodRead, reason: 'x'.repeat(501) },
      { ...prodRead, permission: 'admin' },
      { ...prodRead, env: 'Prod!' },
    ]) {
      const res = await app.request('POST', arBase(p.id), { token: dev.jwt, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error.code).toBe('VALIDATION');
    }
    // An environment that does not exist, a request id of nobody's: 404.
    expect((await ask(p.id, dev.jwt, { ...prodRead, env: 'nope' })).status).toBe(404);
    expect(
      (await app.request('POST', `${arBase(p.id)}/00000000-0000-4000-8000-000000000000/approve`, { token: owner.jwt }))
        .status,
    ).toBe(404);
    // Asking for access one has (Devon writes dev; the Admin writes prod): 409.
    expect((await ask(p.id, dev.jwt, { ...prodRead, env: 'dev' })).status).toBe(409);
    expect((await ask(p.id, admin.jwt, prodRead)).status).toBe(409);
    // A project of another workspace: 404, as if it did not exist; its requests cannot be decided from here.
    const stranger = await signupUser(app, 'Stranger');
    const theirs = await createProject(app, stranger.jwt, { envs: ['prod'] });
    expect((await ask(theirs.id, dev.jwt, prodRead)).status).toBe(404);
    const mine = await ask(p.id, dev.jwt, prodRead);
    expect(
      (await app.request('POST', `${arBase(theirs.id)}/${mine.body.id}/approve`, { token: stranger.jwt })).status,
    ).toBe(404);
    // D76 is for Admins and Owners.
    expect((await app.request('GET', `/v1/projects/${p.id}/envs/prod/access`, { token: dev.jwt })).status).toBe(403);
    const rows = await app.db.db.selectFrom('access_requests').select('id').where('project_id', '=', p.id).execute();
    expect(rows.map((r) => r.id)).toEqual([mine.body.id]);
  });
});
