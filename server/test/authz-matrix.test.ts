import { randomUUID } from 'node:crypto';
import {
  createAuditStreamResponse,
  createWebhookResponse,
  historyResponse,
  invitesResponse,
  sessionResponse,
  switchWorkspaceResponse,
} from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiOperations,
  createProject,
  createToken,
  dialectName,
  signupUser,
  startApp,
  type TestApp,
  upsert,
} from './harness.js';
import { leasedUsernames, REDIS, redisAdmin } from './managed-dbs.js';
import { type Receiver, startReceiver } from './receiver.js';

/**
 * The authorization matrix, generated: every workspace role × project role × `protected` flag ×
 * per-environment override × credential type, against every operation the OpenAPI document lists that needs
 * a credential (a route without a row fails the suite). The expected answer comes from `expected()` below,
 * which restates the spec's rules ("Authorization layers", "Access token scopes", D10, D15-D23, D31-D35)
 * and the project's ADRs where the spec is silent, and shares no code with the server.
 */
type Perm = 'none' | 'read' | 'write';
type Role = 'Admin' | 'Developer' | 'Read-only' | null; // null: a Member not added to the project
type Cred = 'jwt' | 'read' | 'write' | 'deploy' | 'envRestricted' | 'projectRestricted' | 'expired' | 'removed';
type Override = Perm | 'unset';

interface Ctx {
  owner: boolean;
  role: Role;
  protected: boolean;
  override: Override;
  cred: Cred;
}

// ---- the spec's rules, restated ----
const rank: Record<Perm, number> = { none: 0, read: 1, write: 2 };
/** Spec table "Project role defaults"; protection changes only the Developer default. */
function roleDefault(role: Exclude<Role, null>, isProtected: boolean): Perm {
  return role === 'Admin' ? 'write' : role === 'Read-only' ? 'read' : isProtected ? 'none' : 'write';
}
function userPerm(c: Ctx): Perm {
  if (c.owner) return 'write'; // Owner bypasses project checks
  if (c.role === null) return 'none';
  return c.override === 'unset' ? roleDefault(c.role, c.protected) : c.override;
}
/** Scope read and deploy allow reads only; write allows writes; an effective permission is the intersection. */
function effective(c: Ctx): Perm {
  const u = userPerm(c);
  if (c.cred === 'jwt') return u;
  const cap: Perm = c.cred === 'read' || c.cred === 'deploy' ? 'read' : 'write';
  return rank[u] < rank[cap] ? u : cap;
}

interface Op {
  name: string;
  /** The OpenAPI operation exercised, as `METHOD /path` with the document's `{param}` spelling. */
  route: string;
  /** `env`: one environment of the matrix project; `project`: the project; `workspace`: no project. */
  level: 'env' | 'project' | 'workspace';
  /**
   * env ops: the permission needed (D23). project ops: `visible`, `admin` (Owner or project Admin), `owner`,
   * `auditor` (the project audit: Owner or project Admin, any credential that sees the project; ADR 0002).
   * workspace ops: `member` (any member), `owner`, `createProject` (D20), `instanceAdmin` (D69: the instance's
   * administrators; here the Owner, the instance's first account, is the only one). `approver` (env ops): D47's approval
   * or rejection of a change request, by an Owner or project Admin with write on the environment, through a
   * session (ADR 0013). D74 (ADR 0027), env ops: `requester` asks for write on the environment (409 when the
   * person already has it); `withdrawOwn` withdraws their own request where they could make one, else another's
   * (403); `decider` approves or denies another's request (an Owner or project Admin, by session). D76:
   * `envAdmin` (who has access) is project administration naming an environment.
   * session (ADR 0013). `unprotectedWrite` (env ops): D75's personal overrides, write permission and only in an
   * unprotected environment (ADR 0031: a writer of a protected one gets `refused`, else 403).
   */
  need:
    | Perm
    | 'visible'
    | 'admin'
    | 'owner'
    | 'auditor'
    | 'member'
    | 'createProject'
    | 'approver'
    | 'instanceAdmin'
    | 'requester'
    | 'withdrawOwn'
    | 'decider'
    | 'envAdmin'
    | 'unprotectedWrite';
  /** The only credential type accepted: pull takes access tokens (spec variables rule 8), D10's areas take JWTs. */
  credential?: 'token' | 'jwt';
  ok: number;
  /** The answer to a caller the rule refuses, when it is not 403. */
  refused?: number;
  run(t: Target): Promise<number>;
}

function expected(op: Op, c: Ctx): number {
  if (c.cred === 'expired' || c.cred === 'removed') return 401;
  if (op.credential === 'token' && c.cred === 'jwt') return 401; // pull rejects a JWT
  if (op.credential === 'jwt' && c.cred !== 'jwt') return 401; // D10
  const refused = op.refused ?? 403;
  if (op.level === 'workspace') {
    if (op.need === 'member') return op.ok;
    if (op.need === 'owner') return c.owner ? op.ok : refused;
    // D69: the matrix's Owner made the instance's first account, so is its administrator; nobody else is.
    if (op.need === 'instanceAdmin') return c.owner ? op.ok : refused;
    // D20: any member may create a project; a token needs write scope and no restriction to one project.
    return c.cred === 'jwt' || c.cred === 'write' || c.cred === 'envRestricted' ? op.ok : 403;
  }
  if (c.cred === 'projectRestricted') return 403;
  if (!c.owner && c.role === null) return 404; // invisible project: 404, not 403 (D23)
  const wholeProjectWriteToken = c.cred === 'jwt' || c.cred === 'write';
  if (op.level === 'env') {
    if (c.cred === 'envRestricted') return 403;
    if (op.need === 'approver') {
      return c.cred === 'jwt' && (c.owner || c.role === 'Admin') && rank[userPerm(c)] >= rank.write ? op.ok : 403;
    }
    if (op.need === 'requester') return userPerm(c) === 'write' ? 409 : op.ok;
    if (op.need === 'withdrawOwn') return userPerm(c) === 'write' ? 403 : op.ok;
    if (op.need === 'decider') return c.owner || c.role === 'Admin' ? op.ok : 403;
    if (op.need === 'envAdmin') return (c.owner || c.role === 'Admin') && wholeProjectWriteToken ? op.ok : 403;
    if (op.need === 'unprotectedWrite') {
      if (rank[effective(c)] < rank.write) return 403;
      return c.protected ? (op.refused ?? 403) : op.ok;
    }
    return rank[effective(c)] >= rank[op.need as Perm] ? op.ok : 403;
  }
  if (op.need === 'visible') return op.ok;
  if (op.need === 'auditor') return c.owner || c.role === 'Admin' ? op.ok : 403;
  if (op.need === 'admin') return (c.owner || c.role === 'Admin') && wholeProjectWriteToken ? op.ok : 403;
  return c.owner && wholeProjectWriteToken ? op.ok : 403; // owner
}

// ---- the live setup ----
interface Principal {
  owner: boolean;
  role: Role;
  /** The user and their session in the matrix workspace; absent for the removed creator. */
  user?: { id: string; name: string; jwt: string };
  creds: Partial<Record<Cred, string>>;
}

interface Target {
  auth: string;
  principal: Principal;
  project: string;
  env: string;
  versionId: number;
  fresh: () => Promise<string>;
}

describe(`authorization matrix (${dialectName})`, () => {
  let app: TestApp;
  let receiver: Receiver;
  let ownerJwt: string;
  let workspaceId: string;
  let projectId: string;
  /** A Member no principal is: the object of team, project-membership and token operations. */
  let spare: { id: string; jwt: string };
  let hookId: string;
  /** A pending invite for an address no principal has (D17: accepting it is 403 for everyone else). */
  let strangerInvite: string;
  const envs: { name: string; protected: boolean; override: Override }[] = [];
  const principals: Principal[] = [];
  const versions = new Map<string, number>();
  let seq = 0;

  const addToWorkspace = async (email: string) => {
    const inv = await app.request('POST', '/v1/workspace/invites', {
      token: ownerJwt,
      body: { email, wsRole: 'Member' },
    });
    expect(inv.status).toBe(200);
  };
  const sessionIn = async (jwt: string) => {
    const sw = await app.request('POST', '/v1/auth/switch-workspace', {
      token: jwt,
      body: { workspaceId },
      schema: switchWorkspaceResponse,
    });
    expect(sw.status).toBe(200);
    return sw.body.token;
  };
  beforeAll(async () => {
    app = await startApp({ env: { DEFAULT_PLAN: 'enterprise', WEBHOOK_ALLOW_PRIVATE: 'true' } });
    receiver = await startReceiver();
    const owner = await signupUser(app, 'Owner');
    ownerJwt = owner.jwt;
    const session = await app.request('GET', '/v1/auth/session', { token: ownerJwt, schema: sessionResponse });
    workspaceId = session.body.user.workspaceId;
    for (const prot of [false, true]) {
      for (const override of ['unset', 'none', 'read', 'write'] as Override[]) {
        envs.push({ name: `${prot ? 'p' : 'u'}-${override}`, protected: prot, override });
      }
    }
    const p = await createProject(app, ownerJwt, { name: 'matrix', envs: envs.map((e) => e.name) });
    projectId = p.id;
    const other = await createProject(app, ownerJwt, { name: 'other' });
    for (const e of envs) {
      const res = await app.request('PATCH', `/v1/projects/${projectId}/envs/${e.name}`, {
        token: ownerJwt,
        body: { protected: e.protected },
      });
      expect(res.status).toBe(200);
    }
    await upsert(
      app,
      ownerJwt,
      projectId,
      envs.map((e) => e.name),
      [{ key: 'K', value: 'secret-value', type: 'secret' }],
    );
    for (const e of envs) {
      const h = await app.request('GET', `/v1/projects/${projectId}/envs/${e.name}/vars/K/history`, {
        token: ownerJwt,
        schema: historyResponse,
      });
      versions.set(e.name, h.body.history[0]!.id);
    }

    const tokensFor = async (jwt: string): Promise<Partial<Record<Cred, string>>> => {
      const expiredTok = await createToken(app, jwt, { scope: 'write' });
      await app.db.db
        .updateTable('access_tokens')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', expiredTok.id)
        .execute();
      return {
        jwt,
        read: (await createToken(app, jwt, { scope: 'read' })).token,
        write: (await createToken(app, jwt, { scope: 'write' })).token,
        deploy: (await createToken(app, jwt, { scope: 'deploy' })).token,
        envRestricted: (await createToken(app, jwt, { scope: 'write', envs: ['elsewhere'] })).token,
        projectRestricted: (await createToken(app, jwt, { scope: 'write', projectId: other.id })).token,
        expired: expiredTok.token,
      };
    };
    const addMember = async (name: string, role: Role) => {
      const u = await signupUser(app, name);
      await addToWorkspace(u.email);
      const jwt = await sessionIn(u.jwt);
      // Every member can see the other project, so each can hold a token restricted to it.
      await app.request('PUT', `/v1/projects/${other.id}/members/${u.user.id}`, {
        token: ownerJwt,
        body: { role: 'Read-only' },
      });
      if (role) {
        const r = await app.request('PUT', `/v1/projects/${projectId}/members/${u.user.id}`, {
          token: ownerJwt,
          body: { role },
        });
        expect(r.status).toBe(200);
      }
      return { id: u.user.id, name: u.user.name, jwt };
    };

    principals.push({
      owner: true,
      role: null,
      user: { id: owner.user.id, name: owner.user.name, jwt: ownerJwt },
      creds: await tokensFor(ownerJwt),
    });
    for (const role of ['Admin', 'Developer', 'Read-only', null] as Role[]) {
      const m = await addMember(`M-${role ?? 'none'}`, role);
      if (role) {
        for (const e of envs) {
          if (e.override === 'unset') continue;
          const r = await app.request('PUT', `/v1/projects/${projectId}/members/${m.id}/envs/${e.name}`, {
            token: ownerJwt,
            body: { permission: e.override },
          });
          expect(r.status).toBe(200);
        }
      }
      principals.push({ owner: false, role, user: m, creds: await tokensFor(m.jwt) });
    }
    // Owner-side overrides must be ignored: the Owner bypasses project checks.
    for (const e of envs) {
      if (e.override !== 'unset') {
        await app.request('PUT', `/v1/projects/${projectId}/members/${owner.user.id}/envs/${e.name}`, {
          token: ownerJwt,
          body: { permission: e.override },
        });
      }
    }
    // A token whose creator (an Admin) was removed from the workspace afterwards.
    const removed = await addMember('Removed', 'Admin');
    const removedTok = (await createToken(app, removed.jwt, { scope: 'write' })).token;
    const rm = await app.request('DELETE', `/v1/workspace/members/${removed.id}`, { token: ownerJwt });
    expect(rm.status).toBe(204);
    principals.push({ owner: false, role: 'Admin', creds: { removed: removedTok } });

    spare = await addMember('Spare', null);
    const hook = await app.request('POST', '/v1/workspace/webhooks', {
      token: ownerJwt,
      body: { name: 'standing', url: receiver.url('/matrix'), events: ['var.update'], active: false },
      schema: createWebhookResponse,
    });
    expect(hook.status).toBe(201);
    hookId = hook.body.id;
    const stranger = `stranger-${randomUUID()}@example.test`;
    const inv = await app.request('POST', '/v1/workspace/invites', {
      token: ownerJwt,
      body: { email: stranger, wsRole: 'Member' },
    });
    expect(inv.status).toBe(202);
    // Without SMTP the invite answer hands the Owner the link (ADR 0012); the log never holds it (ADR 0021).
    strangerInvite = /invite\?token=([A-Za-z0-9_-]+)/.exec((inv.body as { inviteUrl: string }).inviteUrl)![1]!;
  }, 180_000);
  afterAll(async () => {
    try {
      await dropManaged();
    } finally {
      await app.stop();
      await receiver.stop();
    }
  });

  const base = (t: Target) => `/v1/projects/${t.project}/envs/${t.env}`;
  const st = async (p: Promise<{ status: number }>) => (await p).status;
  /** The status of one request with the credential under test. */
  const call = (t: Target, method: string, path: string, body?: unknown) =>
    st(app.request(method, path, { token: t.auth, body }));
  const asOwner = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(method, path, { token: ownerJwt, body });
    if (res.status >= 300) throw new Error(`setup ${method} ${path}: ${res.status} ${res.text}`);
    return res;
  };
  /** A project where the principal has the role it has in the matrix project. */
  const freshProject = async (p: Principal) => {
    const fresh = await createProject(app, ownerJwt, { name: `fresh-${seq++}` });
    if (p.user && p.role) await asOwner('PUT', `/v1/projects/${fresh.id}/members/${p.user.id}`, { role: p.role });
    return fresh.id;
  };
  const spareInProject = () => asOwner('PUT', `/v1/projects/${projectId}/members/${spare.id}`, { role: 'Read-only' });
  /** A token of the principal's own (an unknown id for the removed creator, whose credential fails first). */
  const ownToken = async (p: Principal) => (p.user ? (await createToken(app, p.user.jwt)).id : randomUUID());
  const freshInvite = async () => {
    const email = `invitee-${seq++}-${randomUUID()}@example.test`;
    await asOwner('POST', '/v1/workspace/invites', { email, wsRole: 'Member' });
    const list = await app.request('GET', '/v1/workspace/invites', { token: ownerJwt, schema: invitesResponse });
    return list.body.invites.find((i) => i.email === email)!.id;
  };
  const freshMember = async () => {
    const u = await signupUser(app, 'Leaver');
    await addToWorkspace(u.email);
    return u.user.id;
  };
  /** D47: change requests of the matrix project are opened by an Admin who is no principal (none is their author). */
  let crAuthor: Promise<string> | undefined;
  const authorJwt = () =>
    (crAuthor ??= (async () => {
      const u = await signupUser(app, 'Author');
      await addToWorkspace(u.email);
      const jwt = await sessionIn(u.jwt);
      await asOwner('PUT', `/v1/projects/${projectId}/members/${u.user.id}`, { role: 'Admin' });
      return jwt;
    })());
  const crPath = (t: Target) => `${base(t)}/change-requests`;
  /** D74: a Read-only member no principal is asks for write; their requests are the ones decided. */
  let asker: Promise<{ id: string; jwt: string }> | undefined;
  const askerIn = () =>
    (asker ??= (async () => {
      const u = await signupUser(app, 'Asker');
      await addToWorkspace(u.email);
      const jwt = await sessionIn(u.jwt);
      await asOwner('PUT', `/v1/projects/${projectId}/members/${u.user.id}`, { role: 'Read-only' });
      return { id: u.user.id, jwt };
    })());
  const arPath = (t: Target) => `/v1/projects/${t.project}/access-requests`;
  const askFor = (t: Target, auth: string) =>
    app.request('POST', arPath(t), {
      token: auth,
      body: { env: t.env, permission: 'write', durationSeconds: 3600, reason: 'matrix' },
    });
  /** Ends the caller's pending requests (test set-up: each combination asks anew). */
  const settle = (userId: string) =>
    app.db.db
      .updateTable('access_requests')
      .set({ status: 'withdrawn' })
      .where('requester_id', '=', userId)
      .where('status', '=', 'pending')
      .execute();
  /** A pending request of the Asker's for write on the target environment (any earlier grant ended first). */
  const freshAr = async (t: Target) => {
    const a = await askerIn();
    await settle(a.id);
    await asOwner('DELETE', `/v1/projects/${t.project}/members/${a.id}/envs/${t.env}`);
    const res = await askFor(t, a.jwt);
    if (res.status !== 201) throw new Error(`setup access request: ${res.status} ${res.text}`);
    return (res.body as { id: string }).id;
  };
  const openCr = async (t: Target, auth?: string) =>
    app.request('POST', crPath(t), {
      token: auth ?? (await authorJwt()),
      body: { message: 'matrix', set: [{ key: `C${seq++}`, value: 'v' }] },
    });
  /** An open change request of the author's in the target environment. */
  const freshCr = async (t: Target) => {
    const res = await openCr(t);
    if (res.status !== 201) throw new Error(`setup change request: ${res.status} ${res.text}`);
    return (res.body as { id: string }).id;
  };
  const standingCrs = new Map<string, Promise<string>>();
  const standingCr = (t: Target) => {
    if (!standingCrs.has(t.env)) standingCrs.set(t.env, freshCr(t));
    return standingCrs.get(t.env)!;
  };
  const freshHook = async () => {
    const res = await app.request('POST', '/v1/workspace/webhooks', {
      token: ownerJwt,
      body: { name: `hook-${seq++}`, url: receiver.url('/matrix'), events: ['var.update'], active: false },
      schema: createWebhookResponse,
    });
    if (res.status !== 201) throw new Error(`setup webhook: ${res.status} ${res.text}`);
    return res.body.id;
  };
  /** D63: the workspace's single sign-on, its issuer the receiver (never fetched by the settings routes). */
  const ssoBody = () => ({
    issuer: receiver.url(''),
    clientId: 'matrix',
    clientSecret: 'matrix-client-secret',
    domains: ['matrix-sso.test'],
    enforce: false,
  });
  const ensureSso = () => asOwner('PUT', '/v1/workspace/sso', ssoBody());
  const freshStream = async () => {
    const res = await app.request('POST', '/v1/workspace/audit-streams', {
      token: ownerJwt,
      body: { url: receiver.url('/matrix-stream') },
      schema: createAuditStreamResponse,
    });
    if (res.status !== 201) throw new Error(`setup audit stream: ${res.status} ${res.text}`);
    return res.body.id;
  };

  /** D60: an identity whose issuer is the receiver (never fetched: no one signs in here). */
  const freshIdentity = async () => {
    const res = await asOwner('POST', '/v1/workspace/identities', {
      name: `identity-${seq++}`,
      issuer: receiver.url(''),
      audience: 'matrix',
      envs: ['*'],
    });
    return (res.body as { id: string }).id;
  };
  let standing: Promise<string> | undefined;
  const standingIdentity = () => {
    if (!standing) standing = freshIdentity();
    return standing;
  };

  // ---- managed databases (D70-D72): a Redis connection of the matrix project and ACL users of its own ----
  type RedisUser = Awaited<ReturnType<typeof redisAdmin>>;
  const redisUsers: RedisUser[] = [];
  const redisUser = async () => {
    const u = await redisAdmin();
    redisUsers.push(u);
    return u;
  };
  const connectionBody = (name: string, u: RedisUser) => ({
    name,
    kind: 'redis',
    host: REDIS.host,
    port: REDIS.port,
    username: u.username,
    password: u.password,
    tls: { mode: 'disable' },
  });
  const leaseStatements = [['ACL', 'SETUSER', '{{username}}', 'on', '>{{password}}', '~app:*', '+@read']];
  /** Per environment: a dynamic secret `standing` and a rotation of ROT_PW (the user `rotated`). */
  let managed: Promise<void> | undefined;
  const ensureManaged = () =>
    (managed ??= (async () => {
      await asOwner('POST', `/v1/projects/${projectId}/connections`, connectionBody('cache', await redisUser()));
      await asOwner('POST', `/v1/projects/${projectId}/connections`, connectionBody('rootrot', await redisUser()));
      const rotated = await redisUser();
      for (const e of envs) {
        const at = `/v1/projects/${projectId}/envs/${e.name}`;
        await asOwner('PUT', `${at}/dynamic/standing`, {
          connection: 'cache',
          create: leaseStatements,
          maxLeases: 10_000,
        });
        await upsert(app, ownerJwt, projectId, [e.name], [{ key: 'ROT_PW', value: rotated.password, type: 'secret' }]);
        await asOwner('PUT', `${at}/rotations/ROT_PW`, {
          connection: 'cache',
          username: rotated.username,
          intervalSeconds: null,
        });
      }
    })());
  /** A lease of `standing` made by the Author (an Admin no principal is): renewing it needs write (D71). */
  const authorLease = async (t: Target) => {
    await ensureManaged();
    const res = await app.request('POST', `${base(t)}/dynamic/standing/leases`, { token: await authorJwt(), body: {} });
    if (res.status !== 201) throw new Error(`setup lease: ${res.status} ${res.text}`);
    return (res.body as { id: string }).id;
  };
  /**
   * The suite's Redis users and every lease user it made, whatever state its lease ended in (named by the
   * suite's own store: no other suite's users), even when setting them up failed half-way.
   */
  async function dropManaged() {
    if (!managed) return;
    await managed.catch(() => undefined);
    const leased = await leasedUsernames(app.db.db);
    for (const u of redisUsers) await u.drop(leased);
  }

  const ops: Op[] = [
    {
      name: 'list',
      route: 'GET /v1/projects/{id}/envs/{env}/vars',
      level: 'env',
      need: 'read',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/vars`, { token: t.auth })),
    },
    {
      name: 'reveal',
      route: 'GET /v1/projects/{id}/envs/{env}/vars',
      level: 'env',
      need: 'write',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/vars?reveal=true`, { token: t.auth })),
    },
    {
      name: 'history',
      route: 'GET /v1/projects/{id}/envs/{env}/vars/{key}/history',
      level: 'env',
      need: 'read',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/vars/K/history`, { token: t.auth })),
    },
    {
      name: 'history reveal',
      route: 'GET /v1/projects/{id}/envs/{env}/vars/{key}/history',
      level: 'env',
      need: 'write',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/vars/K/history?reveal=true`, { token: t.auth })),
    },
    {
      name: 'pull',
      route: 'GET /v1/projects/{id}/envs/{env}/pull',
      level: 'env',
      need: 'read',
      credential: 'token',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/pull`, { token: t.auth })),
    },
    {
      name: 'export',
      route: 'GET /v1/projects/{id}/envs/{env}/export',
      level: 'env',
      need: 'read',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/export`, { token: t.auth })),
    },
    {
      name: 'export reveal',
      route: 'GET /v1/projects/{id}/envs/{env}/export',
      level: 'env',
      need: 'write',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/export?reveal=true`, { token: t.auth })),
    },
    {
      name: 'diff',
      route: 'GET /v1/projects/{id}/diff',
      level: 'env',
      need: 'read',
      ok: 200,
      run: (t) => st(app.request('GET', `/v1/projects/${t.project}/diff?env=${t.env}&env=${t.env}`, { token: t.auth })),
    },
    {
      name: 'bulk upsert',
      route: 'POST /v1/projects/{id}/vars',
      level: 'env',
      need: 'write',
      ok: 200,
      run: (t) =>
        st(
          app.request('POST', `/v1/projects/${t.project}/vars`, {
            token: t.auth,
            body: { envs: [t.env], items: [{ key: 'W', value: 'v', type: 'plain' }] },
          }),
        ),
    },
    {
      name: 'put',
      route: 'PUT /v1/projects/{id}/envs/{env}/vars/{key}',
      level: 'env',
      need: 'write',
      ok: 200,
      run: (t) => st(app.request('PUT', `${base(t)}/vars/K`, { token: t.auth, body: { value: 'secret-value' } })),
    },
    {
      name: 'restore',
      route: 'POST /v1/projects/{id}/envs/{env}/vars/{key}/restore',
      level: 'env',
      need: 'write',
      ok: 200,
      run: (t) =>
        st(app.request('POST', `${base(t)}/vars/K/restore`, { token: t.auth, body: { versionId: t.versionId } })),
    },
    {
      name: 'revisions',
      route: 'GET /v1/projects/{id}/envs/{env}/revisions',
      level: 'env',
      need: 'read',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/revisions`, { token: t.auth })),
    },
    {
      name: 'vars at a revision',
      route: 'GET /v1/projects/{id}/envs/{env}/vars',
      level: 'env',
      need: 'read',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/vars?revision=1`, { token: t.auth })),
    },
    {
      name: 'rollback',
      route: 'POST /v1/projects/{id}/envs/{env}/rollback',
      level: 'env',
      need: 'write',
      ok: 200,
      run: (t) => st(app.request('POST', `${base(t)}/rollback`, { token: t.auth, body: { revision: 1 } })),
    },
    {
      name: 'bulk delete',
      route: 'POST /v1/projects/{id}/envs/{env}/vars:bulkDelete',
      level: 'env',
      need: 'write',
      ok: 200,
      run: (t) =>
        st(app.request('POST', `${base(t)}/vars:bulkDelete`, { token: t.auth, body: { keys: ['NOT_THERE'] } })),
    },
    {
      name: 'delete',
      route: 'DELETE /v1/projects/{id}/envs/{env}/vars/{key}',
      level: 'env',
      need: 'write',
      ok: 204,
      run: async (t) => st(app.request('DELETE', `${base(t)}/vars/${await t.fresh()}`, { token: t.auth })),
    },
    // ---- D75 personal overrides ----
    {
      name: 'list own overrides',
      route: 'GET /v1/projects/{id}/envs/{env}/overrides',
      level: 'env',
      need: 'read',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/overrides`, { token: t.auth })),
    },
    {
      name: 'list own overrides revealed',
      route: 'GET /v1/projects/{id}/envs/{env}/overrides',
      level: 'env',
      need: 'write',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/overrides?reveal=true`, { token: t.auth })),
    },
    {
      name: 'set an override',
      route: 'PUT /v1/projects/{id}/envs/{env}/overrides/{key}',
      level: 'env',
      need: 'unprotectedWrite',
      ok: 200,
      run: (t) => st(app.request('PUT', `${base(t)}/overrides/K`, { token: t.auth, body: { value: 'mine' } })),
    },
    {
      // Set first with the same credential (refused where the rule refuses it): in a protected environment
      // none can exist, so a writer's delete finds nothing (404).
      name: 'delete an override',
      route: 'DELETE /v1/projects/{id}/envs/{env}/overrides/{key}',
      level: 'env',
      need: 'unprotectedWrite',
      ok: 204,
      refused: 404,
      run: async (t) => {
        await app.request('PUT', `${base(t)}/overrides/D`, { token: t.auth, body: { value: 'mine' } });
        return st(app.request('DELETE', `${base(t)}/overrides/D`, { token: t.auth }));
      },
    },
    // ---- D47 change requests ----
    {
      name: 'open a change request',
      route: 'POST /v1/projects/{id}/envs/{env}/change-requests',
      level: 'env',
      need: 'write',
      ok: 201,
      run: async (t) => st(openCr(t, t.auth)),
    },
    {
      name: 'list change requests',
      route: 'GET /v1/projects/{id}/envs/{env}/change-requests',
      level: 'env',
      need: 'read',
      ok: 200,
      run: (t) => call(t, 'GET', `${crPath(t)}?status=open`),
    },
    {
      name: 'read a change request',
      route: 'GET /v1/projects/{id}/envs/{env}/change-requests/{requestId}',
      level: 'env',
      need: 'read',
      ok: 200,
      run: async (t) => call(t, 'GET', `${crPath(t)}/${await standingCr(t)}`),
    },
    {
      name: 'reveal a change request',
      route: 'GET /v1/projects/{id}/envs/{env}/change-requests/{requestId}',
      level: 'env',
      need: 'write',
      ok: 200,
      run: async (t) => call(t, 'GET', `${crPath(t)}/${await standingCr(t)}?reveal=true`),
    },
    {
      name: 'approve a change request',
      route: 'POST /v1/projects/{id}/envs/{env}/change-requests/{requestId}/approve',
      level: 'env',
      need: 'approver',
      ok: 200,
      run: async (t) => call(t, 'POST', `${crPath(t)}/${await freshCr(t)}/approve`),
    },
    {
      name: 'reject a change request',
      route: 'POST /v1/projects/{id}/envs/{env}/change-requests/{requestId}/reject',
      level: 'env',
      need: 'approver',
      ok: 200,
      run: async (t) => call(t, 'POST', `${crPath(t)}/${await freshCr(t)}/reject`, { reason: 'matrix' }),
    },
    {
      // Its author withdraws it: the caller's own request where they may open one, else the author's.
      name: 'withdraw a change request',
      route: 'DELETE /v1/projects/{id}/envs/{env}/change-requests/{requestId}',
      level: 'env',
      need: 'write',
      ok: 204,
      run: async (t) => {
        const own = await openCr(t, t.auth);
        const id = own.status === 201 ? (own.body as { id: string }).id : await freshCr(t);
        return call(t, 'DELETE', `${crPath(t)}/${id}`);
      },
    },
    // ---- access requests (D74) and who has access (D76) ----
    {
      name: 'ask for access',
      route: 'POST /v1/projects/{id}/access-requests',
      level: 'env',
      need: 'requester',
      ok: 201,
      run: async (t) => {
        if (t.principal.user) await settle(t.principal.user.id);
        return (await askFor(t, t.auth)).status;
      },
    },
    {
      name: 'list access requests',
      route: 'GET /v1/projects/{id}/access-requests',
      level: 'project',
      need: 'visible',
      ok: 200,
      run: async (t) => call(t, 'GET', arPath(t)),
    },
    {
      name: 'approve an access request',
      route: 'POST /v1/projects/{id}/access-requests/{requestId}/approve',
      level: 'env',
      need: 'decider',
      credential: 'jwt',
      ok: 200,
      run: async (t) => call(t, 'POST', `${arPath(t)}/${await freshAr(t)}/approve`, { durationSeconds: 600 }),
    },
    {
      name: 'deny an access request',
      route: 'POST /v1/projects/{id}/access-requests/{requestId}/deny',
      level: 'env',
      need: 'decider',
      credential: 'jwt',
      ok: 200,
      run: async (t) => call(t, 'POST', `${arPath(t)}/${await freshAr(t)}/deny`, { reason: 'matrix' }),
    },
    {
      // Its requester withdraws it: the caller's own request where they may make one, else the Asker's.
      name: 'withdraw an access request',
      route: 'POST /v1/projects/{id}/access-requests/{requestId}/withdraw',
      level: 'env',
      need: 'withdrawOwn',
      ok: 200,
      run: async (t) => {
        if (t.principal.user) await settle(t.principal.user.id);
        const own = await askFor(t, t.auth);
        const id = own.status === 201 ? (own.body as { id: string }).id : await freshAr(t);
        return call(t, 'POST', `${arPath(t)}/${id}/withdraw`);
      },
    },
    {
      name: 'who has access to an environment',
      route: 'GET /v1/projects/{id}/envs/{env}/access',
      level: 'env',
      need: 'envAdmin',
      ok: 200,
      run: async (t) => call(t, 'GET', `${base(t)}/access`),
    },
    {
      name: 'get project',
      route: 'GET /v1/projects/{id}',
      level: 'project',
      need: 'visible',
      ok: 200,
      run: (t) => st(app.request('GET', `/v1/projects/${t.project}`, { token: t.auth })),
    },
    {
      name: 'create env',
      route: 'POST /v1/projects/{id}/envs',
      level: 'project',
      need: 'admin',
      ok: 201,
      run: (t) =>
        st(app.request('POST', `/v1/projects/${t.project}/envs`, { token: t.auth, body: { name: `x${seq++}` } })),
    },
    {
      name: 'recolour project',
      route: 'PATCH /v1/projects/{id}',
      level: 'project',
      need: 'admin',
      ok: 200,
      run: (t) => st(app.request('PATCH', `/v1/projects/${t.project}`, { token: t.auth, body: { color: '#123456' } })),
    },
    {
      name: 'toggle protection',
      route: 'PATCH /v1/projects/{id}/envs/{env}',
      level: 'project',
      need: 'owner',
      ok: 200,
      run: (t) =>
        st(
          app.request('PATCH', `/v1/projects/${t.project}/envs/p-unset`, { token: t.auth, body: { protected: true } }),
        ),
    },
    {
      name: 'toggle approval (D47)',
      route: 'PATCH /v1/projects/{id}/envs/{env}',
      level: 'project',
      need: 'owner',
      ok: 200,
      run: (t) => call(t, 'PATCH', `/v1/projects/${t.project}/envs/p-unset`, { requireApproval: false }),
    },
    // ---- the rest of the project routes ----
    {
      name: 'recolour environment (D21)',
      route: 'PATCH /v1/projects/{id}/envs/{env}',
      level: 'project',
      need: 'admin',
      ok: 200,
      run: (t) => call(t, 'PATCH', `/v1/projects/${t.project}/envs/p-unset`, { color: '#654321' }),
    },
    {
      name: 'list environments (D21)',
      route: 'GET /v1/projects/{id}/envs',
      level: 'project',
      need: 'visible',
      ok: 200,
      run: (t) => call(t, 'GET', `/v1/projects/${t.project}/envs`),
    },
    {
      name: 'delete environment (D23)',
      route: 'DELETE /v1/projects/{id}/envs/{env}',
      level: 'project',
      need: 'admin',
      ok: 204,
      run: async (t) => {
        const name = `gone-${seq++}`;
        await asOwner('POST', `/v1/projects/${t.project}/envs`, { name });
        return call(t, 'DELETE', `/v1/projects/${t.project}/envs/${name}`);
      },
    },
    {
      name: 'delete project (D23)',
      route: 'DELETE /v1/projects/{id}',
      level: 'project',
      need: 'owner',
      ok: 204,
      run: async (t) => call(t, 'DELETE', `/v1/projects/${await freshProject(t.principal)}`),
    },
    {
      name: 'project audit (ADR 0002)',
      route: 'GET /v1/projects/{id}/audit',
      level: 'project',
      need: 'auditor',
      ok: 200,
      run: (t) => call(t, 'GET', `/v1/projects/${t.project}/audit?limit=1`),
    },
    {
      name: 'list project members (D22)',
      route: 'GET /v1/projects/{id}/members',
      level: 'project',
      need: 'admin',
      ok: 200,
      run: (t) => call(t, 'GET', `/v1/projects/${t.project}/members`),
    },
    {
      name: 'set a project role (D22)',
      route: 'PUT /v1/projects/{id}/members/{userId}',
      level: 'project',
      need: 'admin',
      ok: 200,
      run: (t) => call(t, 'PUT', `/v1/projects/${t.project}/members/${spare.id}`, { role: 'Read-only' }),
    },
    {
      name: 'remove a project member (D22)',
      route: 'DELETE /v1/projects/{id}/members/{userId}',
      level: 'project',
      need: 'admin',
      ok: 204,
      run: async (t) => {
        await spareInProject();
        return call(t, 'DELETE', `/v1/projects/${t.project}/members/${spare.id}`);
      },
    },
    {
      name: 'set an environment override (D22)',
      route: 'PUT /v1/projects/{id}/members/{userId}/envs/{env}',
      level: 'project',
      need: 'admin',
      ok: 200,
      run: async (t) => {
        await spareInProject();
        return call(t, 'PUT', `/v1/projects/${t.project}/members/${spare.id}/envs/u-unset`, { permission: 'read' });
      },
    },
    {
      name: 'remove an environment override (D22)',
      route: 'DELETE /v1/projects/{id}/members/{userId}/envs/{env}',
      level: 'project',
      need: 'admin',
      ok: 204,
      run: async (t) => {
        await spareInProject();
        await asOwner('PUT', `/v1/projects/${t.project}/members/${spare.id}/envs/u-unset`, { permission: 'read' });
        return call(t, 'DELETE', `/v1/projects/${t.project}/members/${spare.id}/envs/u-unset`);
      },
    },
    {
      name: 'list projects (a project-restricted token sees its own)',
      route: 'GET /v1/projects',
      level: 'workspace',
      need: 'member',
      ok: 200,
      run: (t) => call(t, 'GET', '/v1/projects'),
    },
    {
      name: 'create a project (D20)',
      route: 'POST /v1/projects',
      level: 'workspace',
      need: 'createProject',
      ok: 201,
      run: (t) => call(t, 'POST', '/v1/projects', { name: `created-${seq++}` }),
    },
    {
      // D58: any live access token describes itself (`svcenv whoami`), restricted or not; a session is 401.
      name: 'describe the calling token',
      route: 'GET /v1/auth/token',
      level: 'workspace',
      need: 'member',
      credential: 'token',
      ok: 200,
      run: (t) => call(t, 'GET', '/v1/auth/token'),
    },
    // ---- the session and account routes (JWT only, D10) ----
    {
      name: 'session',
      route: 'GET /v1/auth/session',
      level: 'workspace',
      need: 'member',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'GET', '/v1/auth/session'),
    },
    {
      name: 'switch to the workspace',
      route: 'POST /v1/auth/switch-workspace',
      level: 'workspace',
      need: 'member',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'POST', '/v1/auth/switch-workspace', { workspaceId }),
    },
    {
      // D17: only the invited address may accept; every principal is someone else.
      name: "accept another address's invite",
      route: 'POST /v1/auth/accept-invite',
      level: 'workspace',
      need: 'member',
      credential: 'jwt',
      ok: 403,
      run: (t) => call(t, 'POST', '/v1/auth/accept-invite', { token: strangerInvite }),
    },
    {
      // Each principal's JWT asks once, so the per-user limit of one a minute (D11) is never reached.
      name: 'resend the verification email',
      route: 'POST /v1/auth/resend-verification',
      level: 'workspace',
      need: 'member',
      credential: 'jwt',
      ok: 202,
      run: (t) => call(t, 'POST', '/v1/auth/resend-verification'),
    },
    {
      name: 'read the account',
      route: 'GET /v1/me',
      level: 'workspace',
      need: 'member',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'GET', '/v1/me'),
    },
    {
      name: 'rename the account',
      route: 'PATCH /v1/me',
      level: 'workspace',
      need: 'member',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'PATCH', '/v1/me', { name: t.principal.user?.name ?? 'Removed' }),
    },
    {
      name: 'list own workspaces',
      route: 'GET /v1/me/workspaces',
      level: 'workspace',
      need: 'member',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'GET', '/v1/me/workspaces'),
    },
    // A password change or a second factor would end the principal's sessions (D9), so these send input the
    // schema refuses: 400 shows the credential was accepted, 401 that it was not.
    {
      name: 'change the password (input refused)',
      route: 'POST /v1/me/password',
      level: 'workspace',
      need: 'member',
      credential: 'jwt',
      ok: 400,
      run: (t) => call(t, 'POST', '/v1/me/password', { currentPassword: 'whatever-1', newPassword: 'short' }),
    },
    {
      name: 'set up two-factor',
      route: 'POST /v1/me/mfa/setup',
      level: 'workspace',
      need: 'member',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'POST', '/v1/me/mfa/setup'),
    },
    ...(['enable', 'disable', 'backup-codes'] as const).map(
      (action): Op => ({
        name: `two-factor ${action} (input refused)`,
        route: `POST /v1/me/mfa/${action}`,
        level: 'workspace',
        need: 'member',
        credential: 'jwt',
        ok: 400,
        run: (t) => call(t, 'POST', `/v1/me/mfa/${action}`, { code: '1' }),
      }),
    ),
    // ---- access tokens (JWT only, D31; ADR 0002: a Member manages their own, an Owner every one) ----
    {
      name: 'list tokens',
      route: 'GET /v1/tokens',
      level: 'workspace',
      need: 'member',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'GET', '/v1/tokens'),
    },
    {
      name: 'create a token',
      route: 'POST /v1/tokens',
      level: 'workspace',
      need: 'member',
      credential: 'jwt',
      ok: 201,
      run: (t) => call(t, 'POST', '/v1/tokens', { name: `made-${seq++}`, envs: ['*'] }),
    },
    {
      name: 'rotate an own token',
      route: 'POST /v1/tokens/{id}/rotate',
      level: 'workspace',
      need: 'member',
      credential: 'jwt',
      ok: 200,
      run: async (t) => call(t, 'POST', `/v1/tokens/${await ownToken(t.principal)}/rotate`),
    },
    {
      name: "rotate another member's token",
      route: 'POST /v1/tokens/{id}/rotate',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 200,
      refused: 404,
      run: async (t) => call(t, 'POST', `/v1/tokens/${(await createToken(app, spare.jwt)).id}/rotate`),
    },
    {
      name: 'revoke an own token',
      route: 'DELETE /v1/tokens/{id}',
      level: 'workspace',
      need: 'member',
      credential: 'jwt',
      ok: 204,
      run: async (t) => call(t, 'DELETE', `/v1/tokens/${await ownToken(t.principal)}`),
    },
    {
      name: "revoke another member's token",
      route: 'DELETE /v1/tokens/{id}',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 204,
      refused: 404,
      run: async (t) => call(t, 'DELETE', `/v1/tokens/${(await createToken(app, spare.jwt)).id}`),
    },
    // ---- the workspace (JWT only, D10; Owner-only: rename, team management D16, audit ADR 0005) ----
    ...(['', '/billing', '/connections', '/stats', '/members'] as const).map(
      (path): Op => ({
        name: `read /v1/workspace${path}`,
        route: `GET /v1/workspace${path}`,
        level: 'workspace',
        need: 'member',
        credential: 'jwt',
        ok: 200,
        run: (t) => call(t, 'GET', `/v1/workspace${path}`),
      }),
    ),
    {
      name: 'rename the workspace',
      route: 'PATCH /v1/workspace',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'PATCH', '/v1/workspace', { name: 'Matrix workspace' }),
    },
    {
      name: 'workspace audit',
      route: 'GET /v1/workspace/audit',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'GET', '/v1/workspace/audit?limit=1'),
    },
    {
      name: "change a member's role",
      route: 'PATCH /v1/workspace/members/{userId}',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'PATCH', `/v1/workspace/members/${spare.id}`, { wsRole: 'Member' }),
    },
    {
      name: 'remove a member',
      route: 'DELETE /v1/workspace/members/{userId}',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 204,
      run: async (t) => call(t, 'DELETE', `/v1/workspace/members/${await freshMember()}`),
    },
    {
      name: 'invite',
      route: 'POST /v1/workspace/invites',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 202,
      run: (t) =>
        call(t, 'POST', '/v1/workspace/invites', {
          email: `new-${seq++}-${randomUUID()}@example.test`,
          wsRole: 'Member',
        }),
    },
    {
      name: 'list invites',
      route: 'GET /v1/workspace/invites',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'GET', '/v1/workspace/invites'),
    },
    {
      name: 'revoke an invite',
      route: 'DELETE /v1/workspace/invites/{id}',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 204,
      run: async (t) => call(t, 'DELETE', `/v1/workspace/invites/${await freshInvite()}`),
    },
    // ---- webhooks (JWT only; spec Owner-only operations: create, update, delete; ADR 0004: test too) ----
    {
      name: 'list webhooks',
      route: 'GET /v1/workspace/webhooks',
      level: 'workspace',
      need: 'member',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'GET', '/v1/workspace/webhooks'),
    },
    {
      name: 'list deliveries',
      route: 'GET /v1/workspace/webhooks/{id}/deliveries',
      level: 'workspace',
      need: 'member',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'GET', `/v1/workspace/webhooks/${hookId}/deliveries`),
    },
    {
      name: 'create a webhook',
      route: 'POST /v1/workspace/webhooks',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 201,
      run: (t) =>
        call(t, 'POST', '/v1/workspace/webhooks', {
          name: `made-${seq++}`,
          url: receiver.url('/matrix'),
          events: ['var.update'],
          active: false,
        }),
    },
    {
      name: 'update a webhook',
      route: 'PATCH /v1/workspace/webhooks/{id}',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'PATCH', `/v1/workspace/webhooks/${hookId}`, { name: 'standing' }),
    },
    {
      name: 'delete a webhook',
      route: 'DELETE /v1/workspace/webhooks/{id}',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 204,
      run: async (t) => call(t, 'DELETE', `/v1/workspace/webhooks/${await freshHook()}`),
    },
    {
      name: 'test a webhook',
      route: 'POST /v1/workspace/webhooks/{id}/test',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 202,
      run: (t) => call(t, 'POST', `/v1/workspace/webhooks/${hookId}/test`),
    },
    // ---- audit streams (D65: Owner only, JWT only, listing included) ----
    {
      name: 'list audit streams',
      route: 'GET /v1/workspace/audit-streams',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'GET', '/v1/workspace/audit-streams'),
    },
    {
      name: 'create an audit stream',
      route: 'POST /v1/workspace/audit-streams',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 201,
      run: (t) => call(t, 'POST', '/v1/workspace/audit-streams', { url: receiver.url('/matrix-stream') }),
    },
    {
      name: 'delete an audit stream',
      route: 'DELETE /v1/workspace/audit-streams/{id}',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 204,
      run: async (t) => call(t, 'DELETE', `/v1/workspace/audit-streams/${await freshStream()}`),
    },
    // ---- workload identities (D60: Owner only, session only, D10) ----
    {
      name: 'list identities',
      route: 'GET /v1/workspace/identities',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'GET', '/v1/workspace/identities'),
    },
    {
      name: 'create an identity',
      route: 'POST /v1/workspace/identities',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 201,
      run: (t) =>
        call(t, 'POST', '/v1/workspace/identities', {
          name: `made-${seq++}`,
          issuer: receiver.url(''),
          audience: 'matrix',
          envs: ['*'],
        }),
    },
    {
      name: 'read an identity',
      route: 'GET /v1/workspace/identities/{id}',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 200,
      run: async (t) => call(t, 'GET', `/v1/workspace/identities/${await standingIdentity()}`),
    },
    {
      name: 'update an identity',
      route: 'PATCH /v1/workspace/identities/{id}',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 200,
      run: async (t) =>
        call(t, 'PATCH', `/v1/workspace/identities/${await standingIdentity()}`, {
          ttlSeconds: 600,
        }),
    },
    {
      name: 'delete an identity',
      route: 'DELETE /v1/workspace/identities/{id}',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 204,
      run: async (t) => call(t, 'DELETE', `/v1/workspace/identities/${await freshIdentity()}`),
    },
    // ---- single sign-on settings (D63: Owner only, session only, D10) ----
    {
      name: 'read the single sign-on settings',
      route: 'GET /v1/workspace/sso',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 200,
      run: async (t) => {
        await ensureSso();
        return call(t, 'GET', '/v1/workspace/sso');
      },
    },
    {
      name: 'set the single sign-on settings',
      route: 'PUT /v1/workspace/sso',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'PUT', '/v1/workspace/sso', ssoBody()),
    },
    {
      name: 'delete the single sign-on settings',
      route: 'DELETE /v1/workspace/sso',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 204,
      run: async (t) => {
        await ensureSso();
        return call(t, 'DELETE', '/v1/workspace/sso');
      },
    },
    {
      // 200 whether or not the issuer answers: the answer says what the test found.
      name: 'test a single sign-on connection',
      route: 'POST /v1/workspace/sso/test',
      level: 'workspace',
      need: 'owner',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'POST', '/v1/workspace/sso/test', { issuer: receiver.url('') }),
    },
    // ---- the caller's own workspaces (D68) and instance administration (D69; JWT only) ----
    {
      // Found for whoever sees the project (the Owner, its members), 404 for anyone else: no existence leak.
      name: 'find the workspace of a project',
      route: 'GET /v1/me/project-workspace',
      level: 'project',
      need: 'visible',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'GET', `/v1/me/project-workspace?project=${t.project}`),
    },
    {
      name: 'list the instance workspaces',
      route: 'GET /v1/admin/workspaces',
      level: 'workspace',
      need: 'instanceAdmin',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'GET', '/v1/admin/workspaces'),
    },
    {
      name: "set a workspace's plan",
      route: 'PUT /v1/admin/workspaces/{id}/plan',
      level: 'workspace',
      need: 'instanceAdmin',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'PUT', `/v1/admin/workspaces/${workspaceId}/plan`, { plan: 'enterprise' }),
    },
    {
      name: 'list the instance users',
      route: 'GET /v1/admin/users',
      level: 'workspace',
      need: 'instanceAdmin',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'GET', '/v1/admin/users'),
    },
    {
      name: 'make a reset link',
      route: 'POST /v1/admin/users/{id}/reset-link',
      level: 'workspace',
      need: 'instanceAdmin',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'POST', `/v1/admin/users/${spare.id}/reset-link`),
    },
    {
      name: 'read the instance settings',
      route: 'GET /v1/admin/settings',
      level: 'workspace',
      need: 'instanceAdmin',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'GET', '/v1/admin/settings'),
    },
    {
      name: 'change the instance settings',
      route: 'PUT /v1/admin/settings',
      level: 'workspace',
      need: 'instanceAdmin',
      credential: 'jwt',
      ok: 200,
      run: (t) => call(t, 'PUT', '/v1/admin/settings', { signup: 'open' }),
    },
    // ---- connections (D70: Owners and project Admins; a token with the whole project's write scope) ----
    {
      name: 'list connections',
      route: 'GET /v1/projects/{id}/connections',
      level: 'project',
      need: 'admin',
      ok: 200,
      run: async (t) => {
        await ensureManaged();
        return call(t, 'GET', `/v1/projects/${t.project}/connections`);
      },
    },
    {
      name: 'create a connection',
      route: 'POST /v1/projects/{id}/connections',
      level: 'project',
      need: 'admin',
      ok: 201,
      run: async (t) =>
        call(t, 'POST', `/v1/projects/${t.project}/connections`, connectionBody(`c-${seq++}`, await redisUser())),
    },
    {
      name: 'read a connection',
      route: 'GET /v1/projects/{id}/connections/{name}',
      level: 'project',
      need: 'admin',
      ok: 200,
      run: async (t) => {
        await ensureManaged();
        return call(t, 'GET', `/v1/projects/${t.project}/connections/cache`);
      },
    },
    {
      name: 'update a connection',
      route: 'PATCH /v1/projects/{id}/connections/{name}',
      level: 'project',
      need: 'admin',
      ok: 200,
      run: async (t) => {
        await ensureManaged();
        return call(t, 'PATCH', `/v1/projects/${t.project}/connections/cache`, { port: REDIS.port });
      },
    },
    {
      name: 'delete a connection',
      route: 'DELETE /v1/projects/{id}/connections/{name}',
      level: 'project',
      need: 'admin',
      ok: 204,
      run: async (t) => {
        const name = `gone-${seq++}`;
        await asOwner('POST', `/v1/projects/${t.project}/connections`, connectionBody(name, await redisUser()));
        return call(t, 'DELETE', `/v1/projects/${t.project}/connections/${name}`);
      },
    },
    {
      name: 'test a connection',
      route: 'POST /v1/projects/{id}/connections/{name}/test',
      level: 'project',
      need: 'admin',
      ok: 200,
      run: async (t) => {
        await ensureManaged();
        return call(t, 'POST', `/v1/projects/${t.project}/connections/cache/test`, {});
      },
    },
    {
      name: "rotate a connection's own password",
      route: 'POST /v1/projects/{id}/connections/{name}/rotate-root',
      level: 'project',
      need: 'admin',
      ok: 200,
      run: async (t) => {
        await ensureManaged();
        return call(t, 'POST', `/v1/projects/${t.project}/connections/rootrot/rotate-root`, {});
      },
    },
    // ---- dynamic secrets and leases (D71: declared with write; what may pull may lease) ----
    {
      name: 'list dynamic secrets',
      route: 'GET /v1/projects/{id}/envs/{env}/dynamic',
      level: 'env',
      need: 'read',
      ok: 200,
      run: async (t) => {
        await ensureManaged();
        return call(t, 'GET', `${base(t)}/dynamic`);
      },
    },
    {
      name: 'read a dynamic secret',
      route: 'GET /v1/projects/{id}/envs/{env}/dynamic/{name}',
      level: 'env',
      need: 'read',
      ok: 200,
      run: async (t) => {
        await ensureManaged();
        return call(t, 'GET', `${base(t)}/dynamic/standing`);
      },
    },
    {
      name: 'declare a dynamic secret',
      route: 'PUT /v1/projects/{id}/envs/{env}/dynamic/{name}',
      level: 'env',
      need: 'write',
      ok: 200,
      run: async (t) => {
        await ensureManaged();
        return call(t, 'PUT', `${base(t)}/dynamic/d-${seq++}`, { connection: 'cache', create: leaseStatements });
      },
    },
    {
      name: 'delete a dynamic secret',
      route: 'DELETE /v1/projects/{id}/envs/{env}/dynamic/{name}',
      level: 'env',
      need: 'write',
      ok: 204,
      run: async (t) => {
        await ensureManaged();
        const name = `gone-${seq++}`;
        await asOwner('PUT', `${base(t)}/dynamic/${name}`, { connection: 'cache', create: leaseStatements });
        return call(t, 'DELETE', `${base(t)}/dynamic/${name}`);
      },
    },
    {
      name: 'list leases',
      route: 'GET /v1/projects/{id}/envs/{env}/dynamic/{name}/leases',
      level: 'env',
      need: 'read',
      ok: 200,
      run: async (t) => {
        await ensureManaged();
        return call(t, 'GET', `${base(t)}/dynamic/standing/leases`);
      },
    },
    {
      name: 'lease a dynamic secret',
      route: 'POST /v1/projects/{id}/envs/{env}/dynamic/{name}/leases',
      level: 'env',
      need: 'read',
      ok: 201,
      run: async (t) => {
        await ensureManaged();
        return call(t, 'POST', `${base(t)}/dynamic/standing/leases`, {});
      },
    },
    {
      // Another person's lease: its creator or anyone with write may renew it (D71 details).
      name: "renew another person's lease",
      route: 'POST /v1/projects/{id}/envs/{env}/dynamic/{name}/leases/{leaseId}/renew',
      level: 'env',
      need: 'write',
      ok: 200,
      run: async (t) => call(t, 'POST', `${base(t)}/dynamic/standing/leases/${await authorLease(t)}/renew`, {}),
    },
    {
      name: "revoke another person's lease",
      route: 'DELETE /v1/projects/{id}/envs/{env}/dynamic/{name}/leases/{leaseId}',
      level: 'env',
      need: 'write',
      ok: 204,
      run: async (t) => call(t, 'DELETE', `${base(t)}/dynamic/standing/leases/${await authorLease(t)}`),
    },
    // ---- rotation of a stored credential (D72: bound and rotated with write) ----
    {
      name: 'list rotations',
      route: 'GET /v1/projects/{id}/envs/{env}/rotations',
      level: 'env',
      need: 'read',
      ok: 200,
      run: async (t) => {
        await ensureManaged();
        return call(t, 'GET', `${base(t)}/rotations`);
      },
    },
    {
      name: 'bind a rotation',
      route: 'PUT /v1/projects/{id}/envs/{env}/rotations/{key}',
      level: 'env',
      need: 'write',
      ok: 200,
      run: async (t) => {
        await ensureManaged();
        return call(t, 'PUT', `${base(t)}/rotations/R${seq++}`, {
          connection: 'cache',
          username: `nobody_${seq}`,
          intervalSeconds: null,
        });
      },
    },
    {
      name: 'remove a rotation',
      route: 'DELETE /v1/projects/{id}/envs/{env}/rotations/{key}',
      level: 'env',
      need: 'write',
      ok: 204,
      run: async (t) => {
        await ensureManaged();
        const key = `R${seq++}`;
        await asOwner('PUT', `${base(t)}/rotations/${key}`, {
          connection: 'cache',
          username: 'nobody',
          intervalSeconds: null,
        });
        return call(t, 'DELETE', `${base(t)}/rotations/${key}`);
      },
    },
    {
      name: 'rotate now',
      route: 'POST /v1/projects/{id}/envs/{env}/rotations/{key}/rotate',
      level: 'env',
      need: 'write',
      ok: 200,
      run: async (t) => {
        await ensureManaged();
        return call(t, 'POST', `${base(t)}/rotations/ROT_PW/rotate`, {});
      },
    },
  ];

  it('has a row for every operation of the OpenAPI document that needs a credential, and none for another', async () => {
    const guarded = (await apiOperations(app)).filter((op) => !op.public).map((op) => `${op.method} ${op.path}`);
    expect(guarded.length).toBeGreaterThan(30);
    const covered = new Set(ops.map((op) => op.route));
    expect(
      guarded.filter((route) => !covered.has(route)),
      'guarded routes without a row',
    ).toEqual([]);
    expect(
      [...covered].filter((route) => !guarded.includes(route)),
      'rows for routes the document does not list as guarded',
    ).toEqual([]);
  });

  it('answers every combination as the spec says', async () => {
    // The operations in the document's order; routes without a row are the test above's failure.
    const routes = (await apiOperations(app)).filter((op) => !op.public).map((op) => `${op.method} ${op.path}`);
    const ordered = routes.flatMap((route) => ops.filter((op) => op.route === route));
    const failures: string[] = [];
    let checked = 0;
    for (const p of principals) {
      for (const [cred, auth] of Object.entries(p.creds) as [Cred, string][]) {
        for (const op of ordered) {
          const envList = op.level === 'env' ? envs : [envs[0]!];
          for (const e of envList) {
            const ctx: Ctx = { owner: p.owner, role: p.role, protected: e.protected, override: e.override, cred };
            const target: Target = {
              auth,
              principal: p,
              project: projectId,
              env: e.name,
              versionId: versions.get(e.name)!,
              fresh: async () => {
                const key = `D${seq++}`;
                await upsert(app, ownerJwt, projectId, [e.name], [{ key, value: 'x', type: 'plain' }]);
                return key;
              },
            };
            const want = expected(op, ctx);
            const got = await op.run(target);
            checked++;
            if (got !== want) failures.push(`${JSON.stringify(ctx)} ${op.name}: expected ${want}, got ${got}`);
          }
        }
      }
    }
    console.log(`authorization matrix: ${checked} combinations checked, ${failures.length} mismatches`);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(checked).toBeGreaterThan(2000);
  }, 600_000);
});
