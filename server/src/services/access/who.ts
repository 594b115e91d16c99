import type { AccessEntry } from '@svcenv/contract';
import { authorizeEnv, roleDefault } from '../core/authz.js';
import type { Ctx } from '../core/context.js';
import { grantLive, liveWsRole } from '../core/principal.js';

/**
 * D76: who can read or write an environment now, and why: the workspace's Owners (`owner`), the project's
 * members by their role's default (`role`), by a per-environment permission (`env-permission`) or by one an
 * approved D74 request granted (`request`, with its id). Judged by the same rules as every check (roleDefault,
 * grantLive, liveWsRole), at this moment: an expired grant is not listed even before the job removes it.
 * `expiresAt` is when the access ends by itself: the earliest end of the grants it rests on. Tokens follow
 * their creators (D32) and are not listed. Project Admins and workspace Owners only (need `admin`).
 */
export async function listEnvAccess(ctx: Ctx, input: { projectId: string; env: string }): Promise<AccessEntry[]> {
  const { env, access } = await authorizeEnv(ctx, { ...input, need: 'admin' });
  const db = ctx.deps.db;
  const now = ctx.deps.clock.now();
  const [people, grants] = await Promise.all([
    db
      .selectFrom('workspace_members as wm')
      .innerJoin('users as u', 'u.id', 'wm.user_id')
      .leftJoin('project_members as pm', (j) =>
        j.onRef('pm.user_id', '=', 'wm.user_id').on('pm.project_id', '=', access.project.id),
      )
      .select([
        'u.id',
        'u.name',
        'u.email',
        'wm.ws_role',
        'wm.expires_at as ws_expires_at',
        'pm.role',
        'pm.expires_at as pm_expires_at',
      ])
      .where('wm.workspace_id', '=', ctx.principal.workspaceId)
      .execute(),
    db
      .selectFrom('env_permissions')
      .select(['user_id', 'permission', 'expires_at', 'request_id'])
      .where('project_id', '=', access.project.id)
      .where('environment_id', '=', env.id)
      .execute(),
  ]);
  const byUser = new Map(grants.map((g) => [g.user_id, g]));
  const out: AccessEntry[] = [];
  for (const p of people) {
    const wsRole = liveWsRole(p.ws_role, p.ws_expires_at, now);
    if (wsRole === null) continue;
    const person = { userId: p.id, name: p.name, email: p.email };
    if (wsRole === 'Owner') {
      out.push({ ...person, permission: 'write', source: 'owner', expiresAt: p.ws_expires_at, requestId: null });
      continue;
    }
    if (p.role === null || !grantLive(p.pm_expires_at, now)) continue;
    // A Member's own temporary membership, then the project role's end, bound what rests on them.
    const ends = [p.ws_role === 'Member' ? p.ws_expires_at : null, p.pm_expires_at];
    const g = byUser.get(p.id);
    const override = g && grantLive(g.expires_at, now) ? g : undefined;
    const permission = override ? override.permission : roleDefault(p.role, env.protected === 1);
    if (permission === 'none') continue;
    if (override) ends.push(override.expires_at);
    out.push({
      ...person,
      permission,
      source: override ? (override.request_id ? 'request' : 'env-permission') : 'role',
      expiresAt: earliest(ends),
      requestId: override?.request_id ?? null,
    });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name) || a.userId.localeCompare(b.userId));
}

function earliest(times: (string | null)[]): string | null {
  const set = times.filter((t): t is string => t !== null);
  if (set.length === 0) return null;
  return set.reduce((a, b) => (Date.parse(a) <= Date.parse(b) ? a : b));
}
