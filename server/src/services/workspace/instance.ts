import type { AdminUser, AdminWorkspace, PlanName, SignupMode } from '@svcenv/contract';
import type { Db } from '../../db/index.js';
import { AppError, forbidden, notFound } from '../../lib/errors.js';
import { requireUser } from '../core/authz.js';
import { recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import { issueResetLink, RESET_LIFETIME_MS } from '../identity/password-reset.js';
import { isInstanceAdmin, signupModeOf } from './instance-policy.js';
import { landingWorkspace } from './team.js';

/**
 * D69: what an instance administrator does from the dashboard: every workspace with its plan, every account,
 * a password reset link for installs without email, and the signup mode. Administrators only (403 for
 * anyone else, read from the database on each request, as roles are, D9); a session, not an access token.
 */
async function requireInstanceAdmin(ctx: Ctx): Promise<void> {
  requireUser(ctx.principal);
  if (!(await isInstanceAdmin(ctx.deps.db, ctx.principal.userId))) {
    throw forbidden('only an administrator of this instance may do this');
  }
}

function workspaceRows(db: Db) {
  return db
    .selectFrom('workspaces as w')
    .select((eb) => [
      'w.id',
      'w.name',
      'w.slug',
      'w.plan',
      'w.created_at',
      eb
        .selectFrom('workspace_members as m')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('m.workspace_id', '=', 'w.id')
        .as('members'),
      eb
        .selectFrom('projects as p')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('p.workspace_id', '=', 'w.id')
        .as('projects'),
    ]);
}

type WorkspaceRow = Awaited<ReturnType<ReturnType<typeof workspaceRows>['executeTakeFirstOrThrow']>>;

const workspaceView = (r: WorkspaceRow): AdminWorkspace => ({
  id: r.id,
  name: r.name,
  slug: r.slug,
  plan: r.plan,
  members: Number(r.members ?? 0),
  projects: Number(r.projects ?? 0),
  createdAt: r.created_at,
});

export async function listWorkspaces(ctx: Ctx): Promise<{ workspaces: AdminWorkspace[] }> {
  await requireInstanceAdmin(ctx);
  const rows = await workspaceRows(ctx.deps.db).orderBy('w.created_at').orderBy('w.id').execute();
  return { workspaces: rows.map(workspaceView) };
}

/** D15's plans, changed by an administrator; audited in the workspace whose plan changed. */
export async function setWorkspacePlan(ctx: Ctx, input: { id: string; plan: PlanName }): Promise<AdminWorkspace> {
  await requireInstanceAdmin(ctx);
  const { deps, principal } = ctx;
  return deps.db.transaction().execute(async (trx) => {
    const before = await trx.selectFrom('workspaces').select('plan').where('id', '=', input.id).executeTakeFirst();
    if (!before) throw notFound('workspace');
    if (before.plan !== input.plan) {
      await trx.updateTable('workspaces').set({ plan: input.plan }).where('id', '=', input.id).execute();
      // The workspace's Owners see who changed their plan, though the administrator may not be a member.
      await recordChange(
        trx,
        { deps, principal: { ...principal, workspaceId: input.id } },
        { action: 'workspace.plan_change', detail: { from: before.plan, to: input.plan, byInstanceAdmin: true } },
      );
    }
    return workspaceView(await workspaceRows(trx).where('w.id', '=', input.id).executeTakeFirstOrThrow());
  });
}

export async function listUsers(ctx: Ctx): Promise<{ users: AdminUser[] }> {
  await requireInstanceAdmin(ctx);
  const rows = await ctx.deps.db
    .selectFrom('users as u')
    .select((eb) => [
      'u.id',
      'u.name',
      'u.email',
      'u.instance_admin',
      'u.email_verified_at',
      'u.mfa_enabled',
      'u.created_at',
      eb
        .selectFrom('workspace_members as m')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('m.user_id', '=', 'u.id')
        .as('workspaces'),
    ])
    .orderBy('u.created_at')
    .orderBy('u.id')
    .execute();
  return {
    users: rows.map((r) => ({
      id: r.id,
      name: r.name,
      email: r.email,
      instanceAdmin: r.instance_admin === 1,
      emailVerifiedAt: r.email_verified_at,
      mfaEnabled: r.mfa_enabled === 1,
      workspaces: Number(r.workspaces ?? 0),
      createdAt: r.created_at,
    })),
  };
}

/**
 * D54's one-hour link, for installs without email: it goes to the administrator in the answer (never to a
 * log or an audit entry) and voids the user's older link. Audited `admin.reset_link` in the administrator's
 * workspace and in the one the user lands in, so that the account's own workspace sees it too.
 */
export async function resetLinkFor(ctx: Ctx, input: { id: string }): Promise<{ link: string; expiresAt: string }> {
  await requireInstanceAdmin(ctx);
  const { deps, principal } = ctx;
  const user = await deps.db.selectFrom('users').select(['id', 'email']).where('id', '=', input.id).executeTakeFirst();
  if (!user) throw notFound('user');
  const landing = await landingWorkspace(deps.db, user.id);
  return deps.db.transaction().execute(async (trx) => {
    const issued = await issueResetLink(deps, trx, user.email);
    if (!issued) throw notFound('user');
    const detail = { userId: user.id, email: user.email };
    await recordChange(trx, ctx, { action: 'admin.reset_link', detail });
    if (landing && landing !== principal.workspaceId) {
      await recordChange(
        trx,
        { deps, principal: { ...principal, workspaceId: landing } },
        {
          action: 'admin.reset_link',
          detail,
        },
      );
    }
    return { link: issued.link, expiresAt: new Date(deps.clock.now().getTime() + RESET_LIFETIME_MS).toISOString() };
  });
}

export async function getSettings(ctx: Ctx): Promise<{ signup: SignupMode }> {
  await requireInstanceAdmin(ctx);
  return { signup: await signupModeOf(ctx.deps.db, ctx.deps) };
}

/** Audited in the administrator's workspace (the setting belongs to no workspace). */
export async function updateSettings(ctx: Ctx, input: { signup: SignupMode }): Promise<{ signup: SignupMode }> {
  await requireInstanceAdmin(ctx);
  const { deps } = ctx;
  await deps.db.transaction().execute(async (trx) => {
    const before = await signupModeOf(trx, deps, true);
    if (before === input.signup) return;
    const res = await trx
      .updateTable('instance_settings')
      .set({ signup: input.signup })
      .where('id', '=', 1)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) throw new AppError('SERVER', 'the instance settings row is missing');
    await recordChange(trx, ctx, {
      action: 'instance.settings_update',
      detail: { signup: input.signup, from: before },
    });
  });
  return { signup: input.signup };
}
