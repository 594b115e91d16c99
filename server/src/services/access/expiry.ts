import { randomUUID } from 'node:crypto';
import { claimTaskLease } from '../../jobs/task-lease.js';
import { recordChange } from '../core/changes.js';
import type { Deps } from '../core/deps.js';
import { systemActor } from '../core/principal.js';
import { endMembershipGrants } from '../workspace/team.js';

/**
 * D73: the access-expiry job. The authorization already refuses an expired grant at once
 * (services/core/authz.ts, grantLive); this removes what expired, every ACCESS_SWEEP_MS on one instance at a
 * time (a task lease), well within D73's 60 s, and audits each removal `access.expire` (svcenv as the actor).
 * D74: pending access requests older than 24 hours expire here too (services/access/requests.ts).
 */
export const ACCESS_SWEEP_MS = 10_000;
const BATCH = 500;

export function registerAccessJobs(deps: Deps, log: { error(o: object, msg: string): void }): void {
  const holder = randomUUID();
  const name = 'access-expiry';
  deps.jobs.every(name, ACCESS_SWEEP_MS, async () => {
    if (!(await claimTaskLease(deps.db, name, holder, deps.clock.now(), ACCESS_SWEEP_MS * 6))) return;
    await expireAccess(deps).catch((e: unknown) => log.error({ err: e, task: name }, 'access expiry failed'));
  });
}

/** One sweep: the grants whose time passed are removed and audited; returns how many. */
export async function expireAccess(deps: Deps): Promise<number> {
  const now = deps.clock.now().toISOString();
  let n = 0;
  n += await expireEnvPermissions(deps, now);
  n += await expireProjectRoles(deps, now);
  n += await expireWorkspaceRoles(deps, now);
  n += await expirePendingRequests(deps);
  return n;
}

async function expireEnvPermissions(deps: Deps, now: string): Promise<number> {
  const due = await deps.db
    .selectFrom('env_permissions as o')
    .innerJoin('projects as p', 'p.id', 'o.project_id')
    .innerJoin('environments as e', 'e.id', 'o.environment_id')
    .select([
      'o.project_id',
      'o.user_id',
      'o.environment_id',
      'o.permission',
      'o.expires_at',
      'o.request_id',
      'p.workspace_id',
      'e.name as env',
    ])
    .where('o.expires_at', 'is not', null)
    .where('o.expires_at', '<=', now)
    .limit(BATCH)
    .execute();
  let n = 0;
  for (const g of due) {
    const ctx = { deps, principal: systemActor(g.workspace_id) };
    await deps.db.transaction().execute(async (trx) => {
      // Only the grant that was read: one renewed in the meantime stays.
      const res = await trx
        .deleteFrom('env_permissions')
        .where('project_id', '=', g.project_id)
        .where('user_id', '=', g.user_id)
        .where('environment_id', '=', g.environment_id)
        .where('expires_at', '=', g.expires_at)
        .executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) return;
      n++;
      await recordChange(trx, ctx, {
        action: 'access.expire',
        projectId: g.project_id,
        targetEnv: g.env,
        detail: {
          grant: 'env-permission',
          userId: g.user_id,
          permission: g.permission,
          expiresAt: g.expires_at,
          ...(g.request_id ? { requestId: g.request_id } : {}),
        },
        event: { keys: [] },
      });
    });
  }
  return n;
}

async function expireProjectRoles(deps: Deps, now: string): Promise<number> {
  const due = await deps.db
    .selectFrom('project_members as pm')
    .innerJoin('projects as p', 'p.id', 'pm.project_id')
    .select(['pm.project_id', 'pm.user_id', 'pm.role', 'pm.expires_at', 'p.workspace_id'])
    .where('pm.expires_at', 'is not', null)
    .where('pm.expires_at', '<=', now)
    .limit(BATCH)
    .execute();
  let n = 0;
  for (const g of due) {
    const ctx = { deps, principal: systemActor(g.workspace_id) };
    await deps.db.transaction().execute(async (trx) => {
      const res = await trx
        .deleteFrom('project_members')
        .where('project_id', '=', g.project_id)
        .where('user_id', '=', g.user_id)
        .where('expires_at', '=', g.expires_at)
        .executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) return;
      n++;
      // The membership ended: its overrides go with it, as when a member is removed (D22).
      await trx
        .deleteFrom('env_permissions')
        .where('project_id', '=', g.project_id)
        .where('user_id', '=', g.user_id)
        .execute();
      await recordChange(trx, ctx, {
        action: 'access.expire',
        projectId: g.project_id,
        detail: { grant: 'project-role', userId: g.user_id, role: g.role, expiresAt: g.expires_at },
      });
    });
  }
  return n;
}

async function expireWorkspaceRoles(deps: Deps, now: string): Promise<number> {
  const due = await deps.db
    .selectFrom('workspace_members')
    .select(['workspace_id', 'user_id', 'ws_role', 'expires_at'])
    .where('expires_at', 'is not', null)
    .where('expires_at', '<=', now)
    .limit(BATCH)
    .execute();
  let n = 0;
  for (const g of due) {
    const ctx = { deps, principal: systemActor(g.workspace_id) };
    await deps.db.transaction().execute(async (trx) => {
      const still = trx
        .updateTable('workspace_members')
        .where('workspace_id', '=', g.workspace_id)
        .where('user_id', '=', g.user_id)
        .where('expires_at', '=', g.expires_at);
      if (g.ws_role === 'Owner') {
        // D73: an expired temporary Owner is a Member again.
        const res = await still.set({ ws_role: 'Member', expires_at: null }).executeTakeFirst();
        if (Number(res.numUpdatedRows) === 0) return;
      } else {
        // D73: an expired temporary membership ends the membership, as removing the member does (team.ts).
        const res = await trx
          .deleteFrom('workspace_members')
          .where('workspace_id', '=', g.workspace_id)
          .where('user_id', '=', g.user_id)
          .where('expires_at', '=', g.expires_at)
          .executeTakeFirst();
        if (Number(res.numDeletedRows) === 0) return;
        await endMembershipGrants(trx, g.workspace_id, g.user_id, deps.clock.now());
      }
      n++;
      await recordChange(trx, ctx, {
        action: 'access.expire',
        detail: { grant: 'workspace-role', userId: g.user_id, wsRole: g.ws_role, expiresAt: g.expires_at },
      });
    });
  }
  return n;
}

/** D74: a request left pending for 24 hours expires. */
export const REQUEST_PENDING_MS = 24 * 60 * 60 * 1000;

async function expirePendingRequests(deps: Deps): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - REQUEST_PENDING_MS).toISOString();
  const due = await deps.db
    .selectFrom('access_requests as r')
    .innerJoin('environments as e', 'e.id', 'r.environment_id')
    .select(['r.id', 'r.workspace_id', 'r.project_id', 'r.requester_id', 'r.permission', 'e.name as env'])
    .where('r.status', '=', 'pending')
    .where('r.created_at', '<=', cutoff)
    .limit(BATCH)
    .execute();
  let n = 0;
  for (const r of due) {
    const ctx = { deps, principal: systemActor(r.workspace_id) };
    await deps.db.transaction().execute(async (trx) => {
      const res = await trx
        .updateTable('access_requests')
        .set({ status: 'expired', decided_at: deps.clock.now().toISOString() })
        .where('id', '=', r.id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) return;
      n++;
      await recordChange(trx, ctx, {
        action: 'access.expire',
        projectId: r.project_id,
        targetEnv: r.env,
        detail: { grant: 'request', requestId: r.id, userId: r.requester_id, permission: r.permission },
        event: { keys: [] },
      });
    });
  }
  return n;
}
