import type { ProjectMember } from '@svcenv/contract';
import type { Db } from '../../db/index.js';
import { notFound } from '../../lib/errors.js';
import { authorizeEnv, authorizeProject, grantExpiry } from '../core/authz.js';
import { recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import type { Permission, ProjectRole } from '../core/principal.js';

/** D22: project members with their role and only their per-environment overrides. */
async function membersOf(db: Db, projectId: string, userId?: string): Promise<ProjectMember[]> {
  let q = db
    .selectFrom('project_members as pm')
    .innerJoin('users as u', 'u.id', 'pm.user_id')
    .select(['u.id', 'u.name', 'u.email', 'pm.role', 'pm.expires_at'])
    .where('pm.project_id', '=', projectId);
  if (userId) q = q.where('pm.user_id', '=', userId);
  const members = await q.orderBy('u.name').execute();
  const overrides = await db
    .selectFrom('env_permissions as p')
    .innerJoin('environments as e', 'e.id', 'p.environment_id')
    .select(['p.user_id', 'e.name', 'p.permission', 'p.expires_at'])
    .where('p.project_id', '=', projectId)
    .execute();
  return members.map((m) => {
    const own = overrides.filter((o) => o.user_id === m.id);
    return {
      userId: m.id,
      name: m.name,
      email: m.email,
      role: m.role,
      envPermissions: Object.fromEntries(own.map((o) => [o.name, o.permission])),
      // D73: the temporary ones, beside envPermissions.
      expiresAt: m.expires_at,
      envPermissionExpiry: Object.fromEntries(
        own.filter((o) => o.expires_at !== null).map((o) => [o.name, o.expires_at as string]),
      ),
    };
  });
}

/** One member of one project, as the member routes name them. */
interface MemberTarget {
  projectId: string;
  userId: string;
}

export async function listProjectMembers(ctx: Ctx, input: { projectId: string }) {
  await authorizeProject(ctx, input.projectId, 'admin');
  return membersOf(ctx.deps.db, input.projectId);
}

/**
 * Adds a workspace member to the project or changes their role; D73: with `expiresAt` the role is temporary
 * (when it ends, the project membership ends), without it permanent.
 */
export async function setProjectRole(
  ctx: Ctx,
  input: MemberTarget & { role: ProjectRole; expiresAt?: string | null },
): Promise<ProjectMember> {
  const { projectId, userId, role } = input;
  const expires_at = grantExpiry(input.expiresAt, ctx.deps.clock.now());
  await authorizeProject(ctx, projectId, 'admin');
  return ctx.deps.db.transaction().execute(async (trx) => {
    const inWorkspace = await trx
      .selectFrom('workspace_members')
      .select('user_id')
      .where('workspace_id', '=', ctx.principal.workspaceId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (!inWorkspace) throw notFound('workspace member');
    await trx
      .insertInto('project_members')
      .values({ project_id: projectId, user_id: userId, role, expires_at })
      .onConflict((oc) => oc.columns(['project_id', 'user_id']).doUpdateSet({ role, expires_at }))
      .execute();
    await recordChange(trx, ctx, {
      action: 'project_member.set',
      projectId,
      detail: { userId, role, ...(expires_at ? { expiresAt: expires_at } : {}) },
    });
    return (await membersOf(trx, projectId, userId))[0]!;
  });
}

export async function removeProjectMember(ctx: Ctx, input: MemberTarget): Promise<void> {
  const { projectId, userId } = input;
  await authorizeProject(ctx, projectId, 'admin');
  await ctx.deps.db.transaction().execute(async (trx) => {
    const res = await trx
      .deleteFrom('project_members')
      .where('project_id', '=', projectId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (Number(res.numDeletedRows) === 0) throw notFound('project member');
    await trx.deleteFrom('env_permissions').where('project_id', '=', projectId).where('user_id', '=', userId).execute();
    await recordChange(trx, ctx, { action: 'project_member.remove', projectId, detail: { userId } });
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

/**
 * Spec authorization layer 3: an override (none/read/write) of the role default for one environment; `null` removes it
 * (back to the role default). Both are audited as `env_permission.set`.
 */
export async function setEnvPermission(
  ctx: Ctx,
  input: MemberTarget & { env: string; permission: Permission | null; expiresAt?: string | null },
): Promise<ProjectMember> {
  const { projectId, userId, permission } = input;
  // D73: a temporary override ends by itself (the role default applies again).
  const expires_at = grantExpiry(input.expiresAt, ctx.deps.clock.now());
  const { env } = await authorizeEnv(ctx, { projectId, env: input.env, need: 'admin' });
  return ctx.deps.db.transaction().execute(async (trx) => {
    await requireProjectMember(trx, projectId, userId);
    if (permission === null) {
      await trx
        .deleteFrom('env_permissions')
        .where('project_id', '=', projectId)
        .where('user_id', '=', userId)
        .where('environment_id', '=', env.id)
        .execute();
    } else {
      await trx
        .insertInto('env_permissions')
        .values({ project_id: projectId, user_id: userId, environment_id: env.id, permission, expires_at })
        .onConflict((oc) =>
          oc
            .columns(['project_id', 'user_id', 'environment_id'])
            .doUpdateSet({ permission, expires_at, request_id: null }),
        )
        .execute();
    }
    await recordChange(trx, ctx, {
      action: 'env_permission.set',
      projectId,
      targetEnv: env.name,
      detail: { userId, permission, ...(expires_at ? { expiresAt: expires_at } : {}) },
    });
    return (await membersOf(trx, projectId, userId))[0]!;
  });
}
