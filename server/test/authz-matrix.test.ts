import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';

/**
 * The authorization matrix, generated: every workspace role × project role × `protected` flag ×
 * per-environment override × credential type, against every variable and project operation. The expected
 * answer comes from `expected()` below, which restates the spec's rules ("Authorization layers",
 * "Access token scopes", D23, D32) and shares no code with the server.
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
  level: 'env' | 'project';
  /** env ops: the permission needed (D23); project ops: who may. */
  need: Perm | 'visible' | 'admin' | 'owner';
  tokenOnly?: boolean;
  ok: number;
  run(t: Target): Promise<number>;
}

function expected(op: Op, c: Ctx): number {
  if (c.cred === 'expired' || c.cred === 'removed') return 401;
  if (op.tokenOnly && c.cred === 'jwt') return 401; // pull rejects a JWT
  if (c.cred === 'projectRestricted') return 403;
  if (!c.owner && c.role === null) return 404; // invisible project: 404, not 403 (D23)
  const wholeProjectWriteToken = c.cred === 'jwt' || c.cred === 'write';
  if (op.level === 'env') {
    if (c.cred === 'envRestricted') return 403;
    return rank[effective(c)] >= rank[op.need as Perm] ? op.ok : 403;
  }
  if (op.need === 'visible') return op.ok;
  if (op.need === 'admin') return (c.owner || c.role === 'Admin') && wholeProjectWriteToken ? op.ok : 403;
  return c.owner && wholeProjectWriteToken ? op.ok : 403; // owner
}

// ---- the live setup ----
interface Target {
  auth: string;
  project: string;
  env: string;
  versionId: number;
  fresh: () => Promise<string>;
}

describe(`authorization matrix (${dialectName})`, () => {
  let app: TestApp;
  let ownerJwt: string;
  let projectId: string;
  const envs: { name: string; protected: boolean; override: Override }[] = [];
  const principals: { owner: boolean; role: Role; creds: Partial<Record<Cred, string>> }[] = [];
  const versions = new Map<string, number>();
  let seq = 0;

  beforeAll(async () => {
    app = await startApp({ env: { DEFAULT_PLAN: 'enterprise' } });
    const owner = await signupUser(app, 'Owner');
    ownerJwt = owner.jwt;
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
      });
      versions.set(e.name, h.body.history[0].id);
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
      const inv = await app.request('POST', '/v1/workspace/invites', {
        token: ownerJwt,
        body: { email: u.email, wsRole: 'Member' },
      });
      expect(inv.status).toBe(200);
      const wsId = (await app.request('GET', '/v1/auth/session', { token: ownerJwt })).body.user.workspaceId;
      const sw = await app.request('POST', '/v1/auth/switch-workspace', { token: u.jwt, body: { workspaceId: wsId } });
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
      return { user: u, jwt: sw.body.token as string };
    };

    principals.push({ owner: true, role: null, creds: await tokensFor(ownerJwt) });
    for (const role of ['Admin', 'Developer', 'Read-only', null] as Role[]) {
      const m = await addMember(`M-${role ?? 'none'}`, role);
      if (role) {
        for (const e of envs) {
          if (e.override === 'unset') continue;
          const r = await app.request('PUT', `/v1/projects/${projectId}/members/${m.user.user.id}/envs/${e.name}`, {
            token: ownerJwt,
            body: { permission: e.override },
          });
          expect(r.status).toBe(200);
        }
      }
      principals.push({ owner: false, role, creds: await tokensFor(m.jwt) });
    }
    // Owner-side overrides must be ignored: the Owner bypasses project checks.
    const ownerId = (await app.request('GET', '/v1/auth/session', { token: ownerJwt })).body.user.id;
    for (const e of envs) {
      if (e.override !== 'unset') {
        await app.request('PUT', `/v1/projects/${projectId}/members/${ownerId}/envs/${e.name}`, {
          token: ownerJwt,
          body: { permission: e.override },
        });
      }
    }
    // A token whose creator (an Admin) was removed from the workspace afterwards.
    const removed = await addMember('Removed', 'Admin');
    const removedTok = (await createToken(app, removed.jwt, { scope: 'write' })).token;
    const rm = await app.request('DELETE', `/v1/workspace/members/${removed.user.user.id}`, { token: ownerJwt });
    expect(rm.status).toBe(204);
    principals.push({ owner: false, role: 'Admin', creds: { removed: removedTok } });
  }, 180_000);
  afterAll(() => app.stop());

  const base = (t: Target) => `/v1/projects/${t.project}/envs/${t.env}`;
  const st = async (p: Promise<{ status: number }>) => (await p).status;
  const ops: Op[] = [
    {
      name: 'list',
      level: 'env',
      need: 'read',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/vars`, { token: t.auth })),
    },
    {
      name: 'reveal',
      level: 'env',
      need: 'write',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/vars?reveal=true`, { token: t.auth })),
    },
    {
      name: 'history',
      level: 'env',
      need: 'read',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/vars/K/history`, { token: t.auth })),
    },
    {
      name: 'history reveal',
      level: 'env',
      need: 'write',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/vars/K/history?reveal=true`, { token: t.auth })),
    },
    {
      name: 'pull',
      level: 'env',
      need: 'read',
      tokenOnly: true,
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/pull`, { token: t.auth })),
    },
    {
      name: 'export',
      level: 'env',
      need: 'read',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/export`, { token: t.auth })),
    },
    {
      name: 'export reveal',
      level: 'env',
      need: 'write',
      ok: 200,
      run: (t) => st(app.request('GET', `${base(t)}/export?reveal=true`, { token: t.auth })),
    },
    {
      name: 'diff',
      level: 'env',
      need: 'read',
      ok: 200,
      run: (t) => st(app.request('GET', `/v1/projects/${t.project}/diff?env=${t.env}&env=${t.env}`, { token: t.auth })),
    },
    {
      name: 'bulk upsert',
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
      level: 'env',
      need: 'write',
      ok: 200,
      run: (t) => st(app.request('PUT', `${base(t)}/vars/K`, { token: t.auth, body: { value: 'secret-value' } })),
    },
    {
      name: 'restore',
      level: 'env',
      need: 'write',
      ok: 200,
      run: (t) =>
        st(app.request('POST', `${base(t)}/vars/K/restore`, { token: t.auth, body: { versionId: t.versionId } })),
    },
    {
      name: 'bulk delete',
      level: 'env',
      need: 'write',
      ok: 200,
      run: (t) =>
        st(app.request('POST', `${base(t)}/vars:bulkDelete`, { token: t.auth, body: { keys: ['NOT_THERE'] } })),
    },
    {
      name: 'delete',
      level: 'env',
      need: 'write',
      ok: 204,
      run: async (t) => st(app.request('DELETE', `${base(t)}/vars/${await t.fresh()}`, { token: t.auth })),
    },
    {
      name: 'get project',
      level: 'project',
      need: 'visible',
      ok: 200,
      run: (t) => st(app.request('GET', `/v1/projects/${t.project}`, { token: t.auth })),
    },
    {
      name: 'create env',
      level: 'project',
      need: 'admin',
      ok: 201,
      run: (t) =>
        st(app.request('POST', `/v1/projects/${t.project}/envs`, { token: t.auth, body: { name: `x${seq++}` } })),
    },
    {
      name: 'recolour project',
      level: 'project',
      need: 'admin',
      ok: 200,
      run: (t) => st(app.request('PATCH', `/v1/projects/${t.project}`, { token: t.auth, body: { color: '#123456' } })),
    },
    {
      name: 'toggle protection',
      level: 'project',
      need: 'owner',
      ok: 200,
      run: (t) =>
        st(
          app.request('PATCH', `/v1/projects/${t.project}/envs/p-unset`, { token: t.auth, body: { protected: true } }),
        ),
    },
  ];

  it('answers every combination as the spec says', async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const p of principals) {
      for (const [cred, auth] of Object.entries(p.creds) as [Cred, string][]) {
        for (const op of ops) {
          const envList = op.level === 'env' ? envs : [envs[0]!];
          for (const e of envList) {
            const ctx: Ctx = { owner: p.owner, role: p.role, protected: e.protected, override: e.override, cred };
            const target: Target = {
              auth,
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
  }, 300_000);
});
