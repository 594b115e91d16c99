import type { SignupMode } from '@svcenv/contract';
import type { Db } from '../../db/index.js';
import { AppError } from '../../lib/errors.js';
import { exceededLimit, type LimitName, planLimitMessage } from '../../lib/plans.js';
import type { Deps } from '../core/deps.js';

/**
 * D69: the instance-wide rules every service may need (who administers the instance, who may sign up) and
 * D15's plan limits, whose message depends on the first. Imports no other service, so that accounts, teams
 * and projects can all use it.
 */

/** Read from the database on every call, never from a credential (as roles are, D9). */
export async function isInstanceAdmin(db: Db, userId: string): Promise<boolean> {
  const row = await db.selectFrom('users').select('instance_admin').where('id', '=', userId).executeTakeFirst();
  return row?.instance_admin === 1;
}

/**
 * Throws PLAN_LIMIT (403, D15) when `wanted` would exceed the plan's limit; the message names the remedy
 * for the caller (the Instance page, or their instance administrator). The caller's flag is read only when
 * the limit is hit.
 */
export async function checkLimit(
  db: Db,
  caller: { userId: string },
  plan: string,
  limit: LimitName,
  wanted: number,
): Promise<void> {
  const max = exceededLimit(plan, limit, wanted);
  if (max === null) return;
  const admin = await isInstanceAdmin(db, caller.userId);
  throw new AppError('PLAN_LIMIT', planLimitMessage(plan, limit, max, admin), limit);
}

/**
 * D69: the signup mode. On PostgreSQL `lock` takes the settings row FOR UPDATE, which serialises signups
 * (they are rare): the first account's administrator flag and the mode it was admitted under cannot race.
 * SQLite's write transactions are serial already.
 */
export async function signupModeOf(db: Db, deps: Pick<Deps, 'dialect'>, lock = false): Promise<SignupMode> {
  let q = db.selectFrom('instance_settings').select('signup').where('id', '=', 1);
  if (lock && deps.dialect === 'postgres') q = q.forUpdate();
  return (await q.executeTakeFirst())?.signup ?? 'open';
}

/**
 * D69: refuses a signup the mode does not allow: `closed` always, `invite` unless the (normalised) email
 * has a pending, unexpired invite to some workspace. The same 403 SIGNUP_CLOSED for both, naming the way in.
 */
export async function assertSignupAllowed(db: Db, mode: SignupMode, email: string, now: Date): Promise<void> {
  if (mode === 'open') return;
  if (mode === 'invite') {
    const invited = await db
      .selectFrom('invites')
      .select('id')
      .where('email', '=', email)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now.toISOString())
      .executeTakeFirst();
    if (invited) return;
    throw new AppError(
      'SIGNUP_CLOSED',
      'sign-up on this instance is by invitation only: ask a workspace Owner to invite this email address, then use the link of the invite',
      'email',
    );
  }
  throw new AppError(
    'SIGNUP_CLOSED',
    'sign-up is closed on this instance: ask its administrator for an account',
    'email',
  );
}
