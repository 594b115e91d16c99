import type { ProjectMember } from '@svcenv/contract';
import type { Db } from '../db/index.js';
import { notFound } from '../lib/errors.js';
import { auditRow, recordAudit } from './audit.js';
import { loadProjectAccess, requireProjectAdmin } from './authz.js';
import type { Deps } from './deps.js';
import type { Permission, Principal, ProjectRole } from './principal.js';
import { findEnv } from './projects.js';

/** D22: project members with their role and only their per-environment overrides. */
async function membersOf(db: Db, projectId: string, userId?: string): Promise<ProjectMember[]> {
  let q = db
    .selectFrom('project_members as pm')
    .innerJoin('users as u', 'u.id', 'pm.user_id')
    .select(['u.id', 'u.name', 'u.email', 'pm.role'])
    .where('pm.project_id', '=', projectId);
  if (userId) q = q.where('pm.user_id', '=', userId);
  const members = await q.orderBy('u.name').execute();
  const overrides = await db
    .selectFrom('env_permissions as p')
    .innerJoin('environments as e', 'e.id', 'p.environment_id')
    .select(['p.user_id', 'e.name', 'p.permission'])
    .where('p.project_id', '=', projectId)
    .execute();
  return members.map((m) => ({
    userId: m.id,
    name: m.name,
    email: m.email,
    role: m.role,
    envPermissions: Object.fromEntries(overrides.filter((o) => o.user_id === m.id).map((o) => [o.name, o.permission])),
  }));
}

async function adminAccess(deps: Deps, principal: Principal, projectId: string) {
  const access = await loadProjectAccess(deps.db, principal, projectId);
  requireProjectAdmin(access);
  return access;
}

export async function listProjectMembers(deps: Deps, principal: Principal, projectId: string) {
  await adminAccess(deps, principal, projectId);
  return membersOf(deps.db, projectId);
}

/** Adds a workspace member to the project or changes their role. */
export async function setProjectRole(
  deps: Deps,
  principal: Principal,
  projectId: string,
  userId: string,
  role: ProjectRole,
): Promise<ProjectMember> {
  await adminAccess(deps, principal, projectId);
  return deps.db.transaction().execute(async (trx) => {
    const inWorkspace = await trx
      .selectFrom('workspace_members')
      .select('user_id')
      .where('workspace_id', '=', principal.workspaceId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (!inWorkspace) throw notFound('workspace member');
    await trx
      .insertInto('project_members')
      .values({ project_id: projectId, user_id: userId, role })
      .onConflict((oc) => oc.columns(['project_id', 'user_id']).doUpdateSet({ role }))
      .execute();
    await recordAudit(
      trx,
      auditRow(deps.clock, principal, { action: 'project_member.set', projectId, detail: { userId, role } }),
    );
    return (await membersOf(trx, projectId, userId))[0]!;
  });
}

export async function removeProjectMember(deps: Deps, principal: Principal, projectId: string, userId: string) {
  await adminAccess(deps, principal, projectId);
  await deps.db.transaction().execute(async (trx) => {
    const res = await trx
      .deleteFrom('project_members')
      .where('project_id', '=', projectId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (Number(res.numDeletedRows) === 0) throw notFound('project member');
    await trx.deleteFrom('env_permissions').where('project_id', '=', projectId).where('user_id', '=', userId).execute();
    await recordAudit(
      trx,
      auditRow(deps.clock, principal, { action: 'project_member.remove', projectId, detail: { userId } }),
    );
  });
}

async function requireProjectMember(db: Db, projectId: string, userId: string) {
  const m = await db
    .selectFrom('project_members')
    .select('role')
    .where('project_id', '=', projectId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!m) throw notFound('project member');
}

/** Spec layer 3: an override (none/read/write) of the role default for one environment. */
export async function setEnvPermission(
  deps: Deps,
  principal: Principal,
  projectId: string,
  userId: string,
  envName: string,
  permission: Permission,
): Promise<ProjectMember> {
  await adminAccess(deps, principal, projectId);
  const env = await findEnv(deps.db, projectId, envName);
  return deps.db.transaction().execute(async (trx) => {
    await requireProjectMember(trx, projectId, userId);
    await trx
      .insertInto('env_permissions')
      .values({ project_id: projectId, user_id: userId, environment_id: env.id, permission })
      .onConflict((oc) => oc.columns(['project_id', 'user_id', 'environment_id']).doUpdateSet({ permission }))
      .execute();
    await recordAudit(
      trx,
      auditRow(deps.clock, principal, {
        action: 'env_permission.set',
        projectId,
        targetEnv: envName,
        detail: { userId, permission },
      }),
    );
    return (await membersOf(trx, projectId, userId))[0]!;
  });
}

/** Back to the role default. */
export async function clearEnvPermission(
  deps: Deps,
  principal: Principal,
  projectId: string,
  userId: string,
  envName: string,
): Promise<void> {
  await adminAccess(deps, principal, projectId);
  const env = await findEnv(deps.db, projectId, envName);
  await deps.db.transaction().execute(async (trx) => {
    await requireProjectMember(trx, projectId, userId);
    await trx
      .deleteFrom('env_permissions')
      .where('project_id', '=', projectId)
      .where('user_id', '=', userId)
      .where('environment_id', '=', env.id)
      .execute();
    await recordAudit(
      trx,
      auditRow(deps.clock, principal, {
        action: 'env_permission.set',
        projectId,
        targetEnv: envName,
        detail: { userId, permission: null },
      }),
    );
  });
}
