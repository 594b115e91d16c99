/**
 * D47 change requests over HTTP, on SQLite and on PostgreSQL: the approval flag, APPROVAL_REQUIRED on every
 * direct write kind, every state transition and who may make it, conflicts, masking, emails through the SMTP
 * capture server, webhook payloads on a real receiver, audit rows, and encryption at rest.
 */
import {
  auditPage,
  changeRequest,
  changeRequestsResponse,
  createWebhookResponse,
  environment,
  historyResponse,
  listVarsResponse,
  MASK,
  revisionsResponse,
  sessionResponse,
  switchWorkspaceResponse,
} from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  createToken,
  dialectName,
  envList,
  signupUser,
  startApp,
  type TestApp,
  upsert,
} from './harness.js';
import { type Receiver, startReceiver } from './receiver.js';
import { startSmtpCapture } from './smtp.js';

const PUBLIC_URL = 'https://svcenv.example.test';
const SECRET = 'cr-s3cret-value-7f3a';
const PLAIN = 'cr-plain-value-91b2';

interface Member {
  id: string;
  name: string;
  email: string;
  jwt: string;
}

describe(`change requests (D47, ${dialectName})`, () => {
  let app: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtpCapture>>;
  let receiver: Receiver;
  let owner: Member;
  let admin: Member;
  let dev: Member;
  let dev2: Member;
  let reader: Member;
  let workspaceId: string;

  beforeAll(async () => {
    smtp = await startSmtpCapture();
    receiver = await startReceiver();
    app = await startApp({
      env: { SMTP_URL: smtp.url, PUBLIC_URL, WEBHOOK_ALLOW_PRIVATE: 'true', DEFAULT_PLAN: 'enterprise' },
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
    reader = await join('Reed');
  });
  afterAll(async () => {
    await app?.stop();
    await smtp?.stop();
    await receiver?.stop();
  });

  /** A project with dev and staging (neither protected), the four members in their roles, dev needing approval. */
  async function setup(opts: { approval?: boolean } = {}) {
    const p = await createProject(app, owner.jwt, { envs: ['dev', 'staging'] });
    for (const [m, role] of [
      [admin, 'Admin'],
      [dev, 'Developer'],
      [dev2, 'Developer'],
      [reader, 'Read-only'],
    ] as const) {
      const r = await app.request('PUT', `/v1/projects/${p.id}/members/${m.id}`, { token: owner.jwt, body: { role } });
      expect(r.status, r.text).toBe(200);
    }
    await upsert(
      app,
      owner.jwt,
      p.id,
      ['dev', 'staging'],
      [
        { key: 'DB_PASSWORD', value: 'old-password', type: 'secret' },
        { key: 'PORT', value: '80', type: 'plain' },
        { key: 'OLD', value: 'legacy', type: 'plain' },
      ],
    );
    if (opts.approval !== false) {
      const r = await app.request('PATCH', `/v1/projects/${p.id}/envs/dev`, {
        token: owner.jwt,
        body: { requireApproval: true },
        schema: environment,
      });
      expect(r.status, r.text).toBe(200);
      expect(r.body.requireApproval).toBe(true);
    }
    return p;
  }
  const crBase = (projectId: string, env = 'dev') => `/v1/projects/${projectId}/envs/${env}/change-requests`;
  const open = (projectId: string, auth: string, body: object, headers: Record<string, string> = {}) =>
    app.request('POST', crBase(projectId), { token: auth, body, headers, schema: changeRequest });
  const proposal = {
    message: 'rotate the database password',
    set: [
      { key: 'DB_PASSWORD', value: SECRET },
      { key: 'PORT', value: PLAIN, type: 'plain' },
      { key: 'NEW_KEY', value: 'fresh' },
    ],
    delete: ['OLD'],
  };
  const state = async (projectId: string, env = 'dev') => {
    const res = await app.request('GET', `/v1/projects/${projectId}/envs/${env}/vars?reveal=true`, {
      token: owner.jwt,
      schema: listVarsResponse,
    });
    return Object.fromEntries(res.body.vars.map((v) => [v.key, `${v.type}:${v.value}`]));
  };
  const getCr = (projectId: string, id: string, auth = owner.jwt) =>
    app.request('GET', `${crBase(projectId)}/${id}`, { token: auth, schema: changeRequest });
  const act = (projectId: string, id: string, auth: string, what: 'approve' | 'reject', body?: object) =>
    app.request('POST', `${crBase(projectId)}/${id}/${what}`, { token: auth, body, schema: changeRequest });
  const withdraw = (projectId: string, id: string, auth: string) =>
    app.request('DELETE', `${crBase(projectId)}/${id}`, { token: auth });
  const audit = async (projectId: string) =>
    (await app.request('GET', `/v1/projects/${projectId}/audit?limit=200`, { token: owner.jwt, schema: auditPage }))
      .body.logs;

  it('requireApproval is Owner-only, shown by the environment answer and the environment list', async () => {
    const p = await setup({ approval: false });
    for (const m of [admin, dev]) {
      const r = await app.request('PATCH', `/v1/projects/${p.id}/envs/dev`, {
        token: m.jwt,
        body: { requireApproval: true },
      });
      expect(r.status).toBe(403);
      expect(r.error.code).toBe('FORBIDDEN');
    }
    const ownerToken = (await createToken(app, owner.jwt, { scope: 'write' })).token;
    const viaToken = await app.request('PATCH', `/v1/projects/${p.id}/envs/dev`, {
      token: ownerToken,
      body: { requireApproval: true },
      schema: environment,
    });
    expect(viaToken.status).toBe(200);
    const list = await app.request('GET', `/v1/projects/${p.id}/envs`, { token: dev.jwt, schema: envList });
    expect(list.body.envs.map((e) => [e.name, e.requireApproval])).toEqual([
      ['dev', true],
      ['staging', false],
    ]);
    const bad = await app.request('PATCH', `/v1/projects/${p.id}/envs/dev`, {
      token: owner.jwt,
      body: { requireApproval: 'yes' },
    });
    expect(bad.status).toBe(400);
    expect(bad.error.field).toBe('requireApproval');
    const off = await app.request('PATCH', `/v1/projects/${p.id}/envs/dev`, {
      token: owner.jwt,
      body: { requireApproval: false },
      schema: environment,
    });
    expect(off.body).toEqual({ name: 'dev', protected: false, color: expect.any(String), requireApproval: false });
  });

  it('refuses every direct write kind with APPROVAL_REQUIRED for Developers and every token, changing nothing', async () => {
    const p = await setup();
    const before = await state(p.id);
    const history = await app.request('GET', `/v1/projects/${p.id}/envs/dev/vars/PORT/history`, {
      token: owner.jwt,
      schema: historyResponse,
    });
    const versionId = history.body.history[0]!.id;
    const base = `/v1/projects/${p.id}/envs/dev`;
    const writes: [string, string, string, object?][] = [
      ['put', 'PUT', `${base}/vars/PORT`, { value: '1' }],
      ['delete', 'DELETE', `${base}/vars/PORT`],
      ['restore', 'POST', `${base}/vars/PORT/restore`, { versionId }],
      ['rollback', 'POST', `${base}/rollback`, { revision: 0 }],
      [
        'bulk upsert',
        'POST',
        `/v1/projects/${p.id}/vars`,
        { envs: ['dev'], items: [{ key: 'PORT', value: '2', type: 'plain' }] },
      ],
      [
        'bulk upsert naming two environments',
        'POST',
        `/v1/projects/${p.id}/vars`,
        { envs: ['staging', 'dev'], items: [{ key: 'PORT', value: '3', type: 'plain' }] },
      ],
      ['bulk delete', 'POST', `${base}/vars:bulkDelete`, { keys: ['PORT'] }],
    ];
    const creds = {
      developer: dev.jwt,
      "a developer's write token": (await createToken(app, dev.jwt, { scope: 'write' })).token,
      "the Owner's write token": (await createToken(app, owner.jwt, { scope: 'write' })).token,
      "an Admin's write token": (await createToken(app, admin.jwt, { scope: 'write' })).token,
    };
    for (const [who, auth] of Object.entries(creds)) {
      for (const [name, method, path, body] of writes) {
        const r = await app.request(method, path, { token: auth, body });
        expect(r.status, `${who} ${name}: ${r.text}`).toBe(403);
        expect(r.error.code, `${who} ${name}`).toBe('APPROVAL_REQUIRED');
        // Plain words for whoever reads it (a CLI user, a script's log), not a raw API path.
        expect(r.error.message).toBe(
          'environment "dev" requires approval: propose the change as a change request, which an Owner or project Admin approves',
        );
      }
    }
    // A read-only member lacks the write permission itself: FORBIDDEN, not APPROVAL_REQUIRED.
    const ro = await app.request('PUT', `${base}/vars/PORT`, { token: reader.jwt, body: { value: '1' } });
    expect(ro.error.code).toBe('FORBIDDEN');
    expect(await state(p.id)).toEqual(before);
    expect(await state(p.id, 'staging')).toEqual(before);
    // Staging needs no approval: the Developer writes there directly.
    const staging = await app.request('PUT', `/v1/projects/${p.id}/envs/staging/vars/PORT`, {
      token: dev.jwt,
      body: { value: '81' },
    });
    expect(staging.status).toBe(200);
    // Owners and project Admins through a session still write directly.
    for (const m of [owner, admin]) {
      const r = await app.request('PUT', `${base}/vars/PORT`, { token: m.jwt, body: { value: m.name } });
      expect(r.status, r.text).toBe(200);
    }
    const rb = await app.request('POST', `${base}/rollback`, { token: admin.jwt, body: { revision: 1 } });
    expect(rb.status, rb.text).toBe(200);
  });

  it('opens, masks, reveals to writers, and applies on approval as one revision with emails, webhooks and audit rows', async () => {
    const p = await setup();
    const hook = await app.request('POST', '/v1/workspace/webhooks', {
      token: owner.jwt,
      body: {
        name: `cr-${p.id}`,
        url: receiver.url(`/cr-${p.id}`),
        events: ['change_request.open', 'change_request.apply'],
      },
      schema: createWebhookResponse,
    });
    expect(hook.status, hook.text).toBe(201);
    const before = await state(p.id);
    const revBefore = Number(
      (await app.request('GET', `/v1/projects/${p.id}/envs/dev/vars`, { token: owner.jwt })).headers.get(
        'x-svcenv-revision',
      ),
    );

    // Read-only cannot open one; the Developer (write permission) can.
    const refused = await open(p.id, reader.jwt, proposal);
    expect(refused.status).toBe(403);
    expect(refused.error.code).toBe('FORBIDDEN');
    const opened = await open(p.id, dev.jwt, proposal);
    expect(opened.status, opened.text).toBe(201);
    const cr = opened.body;
    expect(cr).toMatchObject({
      status: 'open',
      env: 'dev',
      baseRevision: revBefore,
      author: 'Devon',
      authorId: dev.id,
      message: 'rotate the database password',
    });
    expect(cr.changes).toEqual([
      { key: 'DB_PASSWORD', op: 'set', type: 'secret', value: MASK },
      { key: 'PORT', op: 'set', type: 'plain', value: PLAIN },
      { key: 'NEW_KEY', op: 'set', type: 'secret', value: MASK },
      { key: 'OLD', op: 'delete', type: 'plain', value: '' },
    ]);
    expect(opened.headers.get('x-svcenv-revision')).toBe(String(revBefore));
    expect(opened.text).not.toContain(SECRET);
    // Opening changes no variable.
    expect(await state(p.id)).toEqual(before);

    // Read: masked for everyone with read; reveal needs write (the reader's is 403).
    const asReader = await getCr(p.id, cr.id, reader.jwt);
    expect(asReader.body.changes[0]!.value).toBe(MASK);
    const revealReader = await app.request('GET', `${crBase(p.id)}/${cr.id}?reveal=true`, { token: reader.jwt });
    expect(revealReader.status).toBe(403);
    const revealed = await app.request('GET', `${crBase(p.id)}/${cr.id}?reveal=true`, {
      token: dev2.jwt,
      schema: changeRequest,
    });
    expect(revealed.body.changes.map((c) => c.value)).toEqual([SECRET, PLAIN, 'fresh', '']);
    const listed = await app.request('GET', `${crBase(p.id)}?status=open`, {
      token: reader.jwt,
      schema: changeRequestsResponse,
    });
    expect(listed.body.changeRequests.map((c) => c.id)).toEqual([cr.id]);
    expect(listed.text).not.toContain(SECRET);

    // Encryption at rest: the stored rows hold no plaintext value.
    const rows = await app.db.db
      .selectFrom('change_request_items')
      .selectAll()
      .where('change_request_id', '=', cr.id)
      .execute();
    expect(rows).toHaveLength(4);
    expect(JSON.stringify(rows)).not.toContain(SECRET);
    expect(JSON.stringify(rows)).not.toContain(PLAIN);
    for (const r of rows.filter((x) => x.op === 'set')) expect(r.value_sealed).toMatch(/^v2\./);
    expect(JSON.stringify(await app.db.db.selectFrom('change_requests').selectAll().execute())).not.toContain(SECRET);

    // The approvers are emailed (Owner and project Admin); nobody else, and no value in any mail.
    const toOwner = await smtp.waitFor(owner.email, (m) => m.text.includes(`/projects/${p.id}`));
    const toAdmin = await smtp.waitFor(admin.email, (m) => m.text.includes(`/projects/${p.id}`));
    for (const m of [toOwner, toAdmin]) {
      expect(m.subject).toContain('Approval requested');
      expect(m.text).toContain('Devon');
      expect(m.text).toContain('DB_PASSWORD');
      expect(m.raw).not.toContain(SECRET);
      expect(m.raw).not.toContain(PLAIN);
    }
    const mailsTo = (who: Member) => smtp.mails.filter((m) => m.to.includes(who.email) && m.text.includes(p.id));
    for (const who of [dev, dev2, reader]) expect(mailsTo(who)).toEqual([]);

    // Who may approve: not the author, not another Developer, not a reader, not a token (even the Owner's).
    const ownerToken = (await createToken(app, owner.jwt, { scope: 'write' })).token;
    for (const [who, auth] of [
      ['author', dev.jwt],
      ['other developer', dev2.jwt],
      ['reader', reader.jwt],
      ["Owner's token", ownerToken],
    ] as const) {
      const r = await act(p.id, cr.id, auth, 'approve');
      expect(r.status, `${who}: ${r.text}`).toBe(403);
      expect(r.error.code).toBe('FORBIDDEN');
    }
    expect((await getCr(p.id, cr.id)).body.status).toBe('open');

    const approved = await act(p.id, cr.id, admin.jwt, 'approve');
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body).toMatchObject({ status: 'applied', appliedRevision: revBefore + 1, closedBy: 'Adele' });
    expect(approved.headers.get('x-svcenv-revision')).toBe(String(revBefore + 1));
    expect(await state(p.id)).toEqual({
      DB_PASSWORD: `secret:${SECRET}`,
      PORT: `plain:${PLAIN}`,
      NEW_KEY: 'secret:fresh',
    });
    // One revision, made by the approver with the approval's action.
    const revs = await app.request('GET', `/v1/projects/${p.id}/envs/dev/revisions`, {
      token: owner.jwt,
      schema: revisionsResponse,
    });
    expect(revs.body.revisions[0]).toMatchObject({
      revision: revBefore + 1,
      action: 'change_request.approve',
      actor: 'Adele',
      created: ['NEW_KEY'],
      updated: ['DB_PASSWORD', 'PORT'],
      deleted: ['OLD'],
    });
    expect(revs.body.revisions[1]!.revision).toBe(revBefore);
    // The deleted key's history records it, so it can be restored (D27).
    const oldHistory = await app.request('GET', `/v1/projects/${p.id}/envs/dev/vars/OLD/history`, {
      token: owner.jwt,
      schema: historyResponse,
    });
    expect(oldHistory.body.history[0]!.action).toBe('deleted');

    // Closed: approving, rejecting or withdrawing again is 409.
    expect((await act(p.id, cr.id, owner.jwt, 'approve')).status).toBe(409);
    expect((await act(p.id, cr.id, owner.jwt, 'reject')).status).toBe(409);
    expect((await withdraw(p.id, cr.id, dev.jwt)).status).toBe(409);

    // The author is told; no value in the mail.
    const toAuthor = await smtp.waitFor(dev.email, (m) => m.text.includes(p.id));
    expect(toAuthor.subject).toContain('approved');
    expect(toAuthor.raw).not.toContain(SECRET);

    // Webhooks: the open and the apply events, each with D34's eight fields.
    const deliveries = await receiver.waitFor(2, (r) => r.path === `/cr-${p.id}`);
    const byEvent = Object.fromEntries(deliveries.map((d) => [d.body.event, d.body]));
    expect(byEvent['change_request.open']).toMatchObject({
      projectId: p.id,
      env: 'dev',
      actor: 'Devon',
      keys: ['DB_PASSWORD', 'PORT', 'NEW_KEY', 'OLD'],
      created: [],
      updated: [],
    });
    expect(byEvent['change_request.apply']).toMatchObject({
      projectId: p.id,
      env: 'dev',
      actor: 'Adele',
      keys: ['NEW_KEY', 'DB_PASSWORD', 'PORT', 'OLD'],
      created: ['NEW_KEY'],
      updated: ['DB_PASSWORD', 'PORT'],
    });
    for (const d of deliveries) expect(d.raw.toString()).not.toContain(SECRET);

    // Audit: one row to open, one to approve (the write), no value in either.
    const logs = await audit(p.id);
    const opens = logs.filter((l) => l.action === 'change_request.open');
    const approvals = logs.filter((l) => l.action === 'change_request.approve');
    expect(opens).toHaveLength(1);
    expect(approvals).toHaveLength(1);
    expect(opens[0]).toMatchObject({ targetEnv: 'dev', actorId: dev.id });
    expect(approvals[0]).toMatchObject({ targetEnv: 'dev', actorId: admin.id });
    expect(approvals[0]!.detail).toMatchObject({ changeRequest: cr.id, deleted: ['OLD'] });
    expect(JSON.stringify(logs)).not.toContain(SECRET);
    expect(JSON.stringify(logs)).not.toContain(PLAIN);
  });

  it('answers 409 CONFLICT and stays open when a key it touches changed after its base revision', async () => {
    const p = await setup();
    const touching = await open(p.id, dev.jwt, { message: 'port', set: [{ key: 'PORT', value: '8080' }] });
    const elsewhere = await open(p.id, dev.jwt, { message: 'old', delete: ['OLD'] });
    expect(touching.status).toBe(201);
    // The Owner changes PORT directly after both were opened.
    const put = await app.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/PORT`, {
      token: owner.jwt,
      body: { value: '9090' },
    });
    expect(put.status).toBe(200);
    const conflict = await act(p.id, touching.body.id, admin.jwt, 'approve');
    expect(conflict.status).toBe(409);
    expect(conflict.error.code).toBe('CONFLICT');
    expect(conflict.error.message).toContain('PORT');
    expect((await getCr(p.id, touching.body.id)).body.status).toBe('open');
    expect((await state(p.id)).PORT).toBe('plain:9090');
    // A change to another key is no conflict.
    const ok = await act(p.id, elsewhere.body.id, owner.jwt, 'approve');
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.status).toBe('applied');
    // A change made by another approved request counts too (its history entries carry its revision).
    const again = await act(p.id, touching.body.id, admin.jwt, 'approve');
    expect(again.status).toBe(409);
    const a = await open(p.id, dev.jwt, { message: 'a', set: [{ key: 'X', value: '1' }] });
    const b = await open(p.id, dev2.jwt, { message: 'b', set: [{ key: 'X', value: '2' }] });
    expect((await act(p.id, a.body.id, admin.jwt, 'approve')).status).toBe(200);
    expect((await act(p.id, b.body.id, admin.jwt, 'approve')).status).toBe(409);
    // Approved at the same moment: one applies, the other is refused (approvals of one environment serialise).
    const c = await open(p.id, dev.jwt, { message: 'c', set: [{ key: 'Y', value: '1' }] });
    const d = await open(p.id, dev2.jwt, { message: 'd', set: [{ key: 'Y', value: '2' }] });
    const both = await Promise.all([
      act(p.id, c.body.id, admin.jwt, 'approve'),
      act(p.id, d.body.id, owner.jwt, 'approve'),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    const e = await open(p.id, dev.jwt, { message: 'e', set: [{ key: 'Z', value: '1' }] });
    const twice = await Promise.all([
      act(p.id, e.body.id, admin.jwt, 'approve'),
      act(p.id, e.body.id, owner.jwt, 'approve'),
    ]);
    expect(twice.map((r) => r.status).sort()).toEqual([200, 409]);
    const zRevisions = (
      await app.request('GET', `/v1/projects/${p.id}/envs/dev/revisions`, {
        token: owner.jwt,
        schema: revisionsResponse,
      })
    ).body.revisions.filter((r) => r.created.includes('Z'));
    expect(zRevisions).toHaveLength(1);
  });

  it('rejects (approvers only, with a reason mailed to the author) and withdraws (the author only, while open)', async () => {
    const p = await setup();
    const cr = (await open(p.id, dev.jwt, { message: 'try', set: [{ key: 'PORT', value: '1' }] })).body;
    for (const [who, auth] of [
      ['author', dev.jwt],
      ['other developer', dev2.jwt],
      ['reader', reader.jwt],
    ] as const) {
      const r = await act(p.id, cr.id, auth, 'reject', { reason: 'no' });
      expect(r.status, who).toBe(403);
    }
    // Only the author withdraws.
    for (const auth of [dev2.jwt, reader.jwt, admin.jwt, owner.jwt]) {
      expect((await withdraw(p.id, cr.id, auth)).status).toBe(403);
    }
    const rejected = await act(p.id, cr.id, owner.jwt, 'reject', { reason: 'use the vault rotation' });
    expect(rejected.status, rejected.text).toBe(200);
    expect(rejected.body).toMatchObject({ status: 'rejected', reason: 'use the vault rotation', closedBy: 'Olga' });
    expect((await state(p.id)).PORT).toBe('plain:80');
    const mail = await smtp.waitFor(dev.email, (m) => m.text.includes(p.id) && m.subject.includes('rejected'));
    expect(mail.text).toContain('use the vault rotation');
    expect((await act(p.id, cr.id, admin.jwt, 'approve')).status).toBe(409);
    expect((await withdraw(p.id, cr.id, dev.jwt)).status).toBe(409);

    const second = (await open(p.id, dev.jwt, { message: 'second', delete: ['OLD'] })).body;
    const w = await withdraw(p.id, second.id, dev.jwt);
    expect(w.status, w.text).toBe(204);
    expect((await getCr(p.id, second.id)).body).toMatchObject({ status: 'withdrawn', closedBy: 'Devon' });
    expect((await act(p.id, second.id, admin.jwt, 'approve')).status).toBe(409);
    expect((await withdraw(p.id, second.id, dev.jwt)).status).toBe(409);
    expect((await state(p.id)).OLD).toBe('plain:legacy');

    const byStatus = async (status: string) =>
      (
        await app.request('GET', `${crBase(p.id)}?status=${status}`, {
          token: reader.jwt,
          schema: changeRequestsResponse,
        })
      ).body.changeRequests.map((c) => c.id);
    expect(await byStatus('rejected')).toEqual([cr.id]);
    expect(await byStatus('withdrawn')).toEqual([second.id]);
    expect(await byStatus('open')).toEqual([]);
    expect((await app.request('GET', `${crBase(p.id)}?status=closed`, { token: reader.jwt })).status).toBe(400);
    const actions = (await audit(p.id)).map((l) => l.action);
    expect(actions.filter((a) => a === 'change_request.reject')).toHaveLength(1);
    expect(actions.filter((a) => a === 'change_request.withdraw')).toHaveLength(1);
    // An unknown request is 404; one of another environment is not found there either.
    expect((await getCr(p.id, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const inStaging = await app.request('GET', `${crBase(p.id, 'staging')}/${cr.id}`, { token: owner.jwt });
    expect(inStaging.status).toBe(404);
  });

  it('lets access tokens open requests (never approve them) and checks If-Match against the revision', async () => {
    const p = await setup();
    const writeTok = await createToken(app, dev.jwt, { scope: 'write', name: 'ci-bot' });
    const readTok = (await createToken(app, dev.jwt, { scope: 'read' })).token;
    expect((await open(p.id, readTok, { message: 'x', set: [{ key: 'A', value: '1' }] })).status).toBe(403);
    const viaToken = await open(p.id, writeTok.token, { message: 'from CI', set: [{ key: 'A', value: '1' }] });
    expect(viaToken.status, viaToken.text).toBe(201);
    expect(viaToken.body).toMatchObject({ author: 'token:ci-bot', authorId: dev.id });
    // The token's creator is its author: they may withdraw it and may not approve it.
    expect((await act(p.id, viaToken.body.id, dev.jwt, 'approve')).status).toBe(403);
    const adminTok = (await createToken(app, admin.jwt, { scope: 'write' })).token;
    expect((await act(p.id, viaToken.body.id, adminTok, 'approve')).status).toBe(403);
    expect((await withdraw(p.id, viaToken.body.id, writeTok.token)).status).toBe(204);

    const rev = Number(
      (await app.request('GET', `/v1/projects/${p.id}/envs/dev/vars`, { token: dev.jwt })).headers.get(
        'x-svcenv-revision',
      ),
    );
    const stale = await open(p.id, dev.jwt, proposal, { 'if-match': `"rev:${rev - 1}"` });
    expect(stale.status).toBe(412);
    expect(stale.error).toMatchObject({ code: 'PRECONDITION_FAILED', field: 'revision' });
    const bad = await open(p.id, dev.jwt, proposal, { 'if-match': 'rev:1' });
    expect(bad.status).toBe(400);
    const fresh = await open(p.id, dev.jwt, proposal, { 'if-match': `"rev:${rev}"` });
    expect(fresh.status, fresh.text).toBe(201);
    expect(fresh.body.baseRevision).toBe(rev);
    const count = await app.db.db
      .selectFrom('change_requests as c')
      .innerJoin('environments as e', 'e.id', 'c.environment_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('e.project_id', '=', p.id)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(2);
  });

  it('refuses bad input with 400 (or 404 for a missing key) naming the field, opening nothing', async () => {
    const p = await setup();
    const cases: [object, string, number][] = [
      [{ message: 'x' }, 'set', 400],
      [{ message: 'x', set: [], delete: [] }, 'set', 400],
      [{ message: '', set: [{ key: 'A', value: '1' }] }, 'message', 400],
      [{ set: [{ key: 'A', value: '1' }] }, 'message', 400],
      [{ message: 'x', set: [{ key: '1BAD', value: '1' }] }, 'set.0.key', 400],
      [{ message: 'x', set: [{ key: 'A', value: 1 }] }, 'set.0.value', 400],
      [{ message: 'x', set: [{ key: 'A', value: '1', type: 'hidden' }] }, 'set.0.type', 400],
      [{ message: 'x', set: [{ key: 'A', value: '1', expiresAt: 'soon' }] }, 'set.0.expiresAt', 400],
      [{ message: 'x', set: [{ key: 'A', value: '1', extra: true }] }, 'set.0.extra', 400],
      [
        {
          message: 'x',
          set: [
            { key: 'A', value: '1' },
            { key: 'A', value: '2' },
          ],
        },
        'set.1.key',
        400,
      ],
      [{ message: 'x', set: [{ key: 'PORT', value: '1' }], delete: ['PORT'] }, 'delete.0', 400],
      [{ message: 'x', delete: ['MISSING'] }, 'delete.0', 404],
      [{ message: 'x', set: [{ key: 'A', value: '1' }], unknown: 1 }, '', 400],
    ];
    for (const [body, field, status] of cases) {
      const r = await app.request('POST', crBase(p.id), { token: dev.jwt, body });
      expect(r.status, JSON.stringify(body)).toBe(status);
      if (field) expect(r.error.field, JSON.stringify(body)).toBe(field);
    }
    const list = await app.request('GET', crBase(p.id), { token: dev.jwt, schema: changeRequestsResponse });
    expect(list.body.changeRequests).toEqual([]);
    const notUuid = await app.request('GET', `${crBase(p.id)}/not-a-uuid`, { token: dev.jwt });
    expect(notUuid.status).toBe(400);
    const badReject = await app.request('POST', `${crBase(p.id)}/00000000-0000-4000-8000-000000000000/reject`, {
      token: owner.jwt,
      body: { reason: 5 },
    });
    expect(badReject.status).toBe(400);
  });

  it('applies an expiry given with a value, and keeps the variable type unless one is given', async () => {
    const p = await setup();
    const cr = await open(p.id, dev.jwt, {
      message: 'expiry',
      set: [
        { key: 'PORT', value: '443', expiresAt: '2031-01-01T00:00:00Z' },
        { key: 'DB_PASSWORD', value: 'now-plain', type: 'plain' },
      ],
    });
    expect(cr.body.changes).toEqual([
      { key: 'PORT', op: 'set', type: 'plain', value: '443', expiresAt: '2031-01-01T00:00:00.000Z' },
      { key: 'DB_PASSWORD', op: 'set', type: 'plain', value: 'now-plain' },
    ]);
    expect((await act(p.id, cr.body.id, admin.jwt, 'approve')).status).toBe(200);
    const vars = await app.request('GET', `/v1/projects/${p.id}/envs/dev/vars`, {
      token: owner.jwt,
      schema: listVarsResponse,
    });
    const byKey = Object.fromEntries(vars.body.vars.map((v) => [v.key, v]));
    expect(byKey.PORT).toMatchObject({ value: '443', type: 'plain', expiresAt: '2031-01-01T00:00:00.000Z' });
    expect(byKey.DB_PASSWORD).toMatchObject({ value: 'now-plain', type: 'plain', expiresAt: null });
  });
});
