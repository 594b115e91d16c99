import { refuseCommonPassword } from '../../lib/common-passwords.js';
import { AppError, notFound, unauthorized } from '../../lib/errors.js';
import { recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import { liveWsRole } from '../core/principal.js';
import { hashPassword, sessionUser, verifyPassword } from './accounts.js';
import { assertAccountNotLocked, recordAccountFailure } from './limits.js';

/** D12 account endpoints of the signed-in user (JWT only, D10). */

export async function getMe(ctx: Ctx) {
  const { deps, principal } = ctx;
  return { user: await sessionUser(deps.db, principal.userId, principal.workspaceId) };
}

export async function updateMe(ctx: Ctx, input: { name: string }) {
  const { deps, principal } = ctx;
  await deps.db.updateTable('users').set({ name: input.name }).where('id', '=', principal.userId).execute();
  return { user: await sessionUser(deps.db, principal.userId, principal.workspaceId) };
}

/**
 * D12/D9: needs the current password; the new hash and a bumped session version commit together, so every
 * JWT issued before (this request's included) is refused from the next request on, on every instance.
 */
export async function changePassword(ctx: Ctx, input: { currentPassword: string; newPassword: string }): Promise<void> {
  const { deps, principal } = ctx;
  await refuseCommonPassword(input.newPassword, 'newPassword');
  const user = await deps.db
    .selectFrom('users')
    .select(['email', 'password_hash'])
    .where('id', '=', principal.userId)
    .executeTakeFirstOrThrow();
  // A stolen session must not become a password oracle: wrong guesses spend the account's failure budget.
  await assertAccountNotLocked(deps.limiter, user.email);
  if (!(await verifyPassword(user.password_hash, input.currentPassword))) {
    await recordAccountFailure(deps.limiter, user.email);
    throw new AppError('UNAUTHORIZED', 'the current password is wrong', 'currentPassword');
  }
  const newHash = await hashPassword(input.newPassword);
  await deps.db.transaction().execute(async (trx) => {
    const r = await trx
      .updateTable('users')
      .set((eb) => ({ password_hash: newHash, session_version: eb('session_version', '+', 1) }))
      .where('id', '=', principal.userId)
      // Two concurrent changes from the same old password: the second finds the hash changed.
      .where('password_hash', '=', user.password_hash)
      .executeTakeFirst();
    if (r.numUpdatedRows !== 1n) throw unauthorized('the password was changed meanwhile');
    await recordChange(trx, ctx, { action: 'auth.password_change' });
  });
}

/** D12: every workspace the user belongs to, with their role there. */
export async function myWorkspaces(ctx: Ctx) {
  const { deps, principal } = ctx;
  const rows = await deps.db
    .selectFrom('workspace_members as m')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select(['w.id', 'w.name', 'w.slug', 'm.ws_role', 'm.expires_at'])
    .where('m.user_id', '=', principal.userId)
    .orderBy('m.joined_at')
    .orderBy('w.id')
    .execute();
  // D73: roles as they stand now; a temporary membership that ended is not listed.
  const now = deps.clock.now();
  return {
    workspaces: rows.flatMap((r) => {
      const wsRole = liveWsRole(r.ws_role, r.expires_at, now);
      return wsRole ? [{ id: r.id, name: r.name, slug: r.slug, wsRole }] : [];
    }),
  };
}

/**
 * D68: which of the caller's workspaces holds the project `ref` (an id or a slug, D58), so that the dashboard,
 * given a link to it, switches there. Only a project the caller could see after switching is found (the
 * workspace's Owner sees every project, anyone else the projects they are a member of, D23): any other
 * project, of a workspace of theirs or not, is the same 404 as one that does not exist.
 */
export async function findProjectWorkspace(ctx: Ctx, input: { project: string }) {
  const { deps, principal } = ctx;
  const row = await deps.db
    .selectFrom('projects as p')
    .innerJoin('workspace_members as m', (j) =>
      j.onRef('m.workspace_id', '=', 'p.workspace_id').on('m.user_id', '=', principal.userId),
    )
    .innerJoin('workspaces as w', 'w.id', 'p.workspace_id')
    .select(['p.id', 'w.id as workspaceId', 'w.name as workspaceName'])
    .where((eb) => eb.or([eb('p.id', '=', input.project), eb('p.slug', '=', input.project)]))
    .where((eb) =>
      eb.or([
        eb('m.ws_role', '=', 'Owner'),
        eb.exists(
          eb
            .selectFrom('project_members as pm')
            .select('pm.project_id')
            .whereRef('pm.project_id', '=', 'p.id')
            .where('pm.user_id', '=', principal.userId),
        ),
      ]),
    )
    // The current workspace first, then the others in the order they were joined.
    .orderBy((eb) => eb.case().when('w.id', '=', principal.workspaceId).then(0).else(1).end())
    .orderBy('m.joined_at')
    .executeTakeFirst();
  if (!row) throw notFound('project');
  return { workspaceId: row.workspaceId, workspaceName: row.workspaceName, projectId: row.id };
}
