import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import type { SessionUser, SignupMode } from '@svcenv/contract';
import type { Db } from '../../db/index.js';
import { refuseCommonPassword } from '../../lib/common-passwords.js';
import { AppError, unauthorized } from '../../lib/errors.js';
import { newId, randomBase62, slugify } from '../../lib/ids.js';
import { recordChange } from '../core/changes.js';
import { actingAs, type Ctx } from '../core/context.js';
import type { Deps } from '../core/deps.js';
import { liveWsRole, userActor } from '../core/principal.js';
import { assertSignupAllowed, signupModeOf } from '../workspace/instance-policy.js';
import { landingWorkspace, rememberWorkspace } from '../workspace/team.js';
import { signSessionJwt } from './authn.js';
import { queueVerificationEmail } from './email-verification.js';
import { assertAccountNotLocked, recordAccountFailure } from './limits.js';
import { createMfaChallenge, redeemMfaChallenge } from './mfa.js';
import { assertPasswordLoginAllowed, assertSignupWithoutSso, NO_PASSWORD_HASH } from './sso-policy.js';

/** D8: argon2id (the library's default algorithm) with OWASP-recommended memory and time cost. */
const ARGON = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export const hashPassword = (password: string) => argonHash(password, ARGON);
export const verifyPassword = (hash: string, password: string) => argonVerify(hash, password).catch(() => false);

/** Verified against when the email is unknown, so both failures take the same time (D8). */
let dummyHash: Promise<string> | null = null;

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

async function uniqueSlug(db: Db, name: string): Promise<string> {
  const base = slugify(name);
  for (let i = 0; i < 5; i++) {
    const slug = i === 0 ? base : `${base}-${randomBase62(6).toLowerCase()}`;
    const taken = await db.selectFrom('workspaces').select('id').where('slug', '=', slug).executeTakeFirst();
    if (!taken) return slug;
  }
  return `${base}-${newId().slice(0, 8)}`;
}

/**
 * GET /v1/auth/options: whether this server sends email at all (ADR 0021; without SMTP_URL, D3, no message
 * reaches anyone, so the dashboard says so and offers what works instead), and its signup mode (D69).
 */
export async function authOptions(
  deps: Pick<Deps, 'config' | 'db' | 'dialect'>,
): Promise<{ emailDelivery: boolean; signup: SignupMode }> {
  return { emailDelivery: Boolean(deps.config.SMTP_URL), signup: await signupModeOf(deps.db, deps) };
}

export async function sessionUser(
  db: Db,
  userId: string,
  workspaceId: string,
  /** D73: the moment a temporary role is judged at. */
  now: Date = new Date(),
): Promise<SessionUser> {
  const row = await db
    .selectFrom('users as u')
    .innerJoin('workspace_members as m', 'm.user_id', 'u.id')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select([
      'u.id',
      'u.name',
      'u.email',
      'u.email_verified_at',
      'u.instance_admin',
      'm.ws_role',
      'm.expires_at',
      'w.id as wid',
      'w.name as wname',
    ])
    .where('u.id', '=', userId)
    .where('m.workspace_id', '=', workspaceId)
    .executeTakeFirst();
  // D73: an expired temporary Owner is a Member, an expired temporary membership none, at once.
  const wsRole = row ? liveWsRole(row.ws_role, row.expires_at, now) : null;
  if (!row || !wsRole) throw unauthorized('invalid session');
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    workspaceId: row.wid,
    workspaceName: row.wname,
    wsRole,
    emailVerifiedAt: row.email_verified_at,
    instanceAdmin: row.instance_admin === 1,
  };
}

/**
 * D7: creates the user, a workspace `<name>'s workspace` and makes the user its Owner. D69: the instance's
 * signup mode may refuse it (checked before the costly hash, and again in the transaction), and the first
 * account of the instance is its administrator.
 */
export async function signup(deps: Deps, input: { name: string; email: string; password: string }) {
  await refuseCommonPassword(input.password, 'password');
  const email = normalizeEmail(input.email);
  await assertSignupAllowed(deps.db, await signupModeOf(deps.db, deps), email, deps.clock.now());
  await assertSignupWithoutSso(deps.db, email);
  const passwordHash = await argonHash(input.password, ARGON);
  const now = deps.clock.now().toISOString();
  const userId = newId();
  const workspaceId = newId();
  const workspaceName = `${input.name}'s workspace`;
  await deps.db.transaction().execute(async (trx) => {
    await assertSignupAllowed(trx, await signupModeOf(trx, deps, true), email, deps.clock.now());
    const exists = await trx.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
    if (exists) throw new AppError('CONFLICT', 'an account with this email already exists', 'email');
    const anyone = await trx.selectFrom('users').select('id').limit(1).executeTakeFirst();
    await trx
      .insertInto('users')
      .values({
        id: userId,
        name: input.name,
        email,
        password_hash: passwordHash,
        email_verified_at: null,
        mfa_secret_sealed: null,
        last_workspace_id: null,
        instance_admin: anyone ? 0 : 1,
        created_at: now,
      })
      .execute();
    await trx
      .insertInto('workspaces')
      .values({
        id: workspaceId,
        name: workspaceName,
        slug: await uniqueSlug(trx, workspaceName),
        plan: deps.config.DEFAULT_PLAN,
        operator_last_sync: null,
        created_at: now,
      })
      .execute();
    await trx
      .insertInto('workspace_members')
      .values({ workspace_id: workspaceId, user_id: userId, ws_role: 'Owner', joined_at: now })
      .execute();
    // D11: the verification email commits with the account, or neither does.
    await queueVerificationEmail(deps, trx, { id: userId, name: input.name, email });
  });
  deps.jobs.kick();
  const token = await signSessionJwt(deps.authn, { userId, workspaceId, sessionVersion: 0 });
  return { token, user: { id: userId, name: input.name, email } };
}

/**
 * Password login (D8). The per-IP limit (D14) is applied by the route before this runs; here the per-account
 * failure budget (ADR 0003) is checked before the password, and a wrong password spends from it. With
 * two-factor on, the answer is an mfaToken instead of a session (spec "Login" MFA-pending).
 */
export async function login(deps: Deps, input: { email: string; password: string }) {
  const email = normalizeEmail(input.email);
  await assertAccountNotLocked(deps.limiter, email);
  const user = await deps.db
    .selectFrom('users')
    .select(['id', 'password_hash', 'session_version', 'mfa_enabled'])
    .where('email', '=', email)
    .executeTakeFirst();
  dummyHash ??= argonHash('svcenv-dummy-password', ARGON);
  // An account made by single sign-on has no password (D63): checked against the dummy, for the same time,
  // and refused like a wrong password whatever was typed.
  const hasPassword = user !== undefined && user.password_hash !== NO_PASSWORD_HASH;
  const ok =
    (await argonVerify(hasPassword ? user.password_hash : await dummyHash, input.password).catch(() => false)) &&
    hasPassword;
  const workspaceId = user ? await landingWorkspace(deps.db, user.id) : null;
  try {
    await assertPasswordLoginAllowed(deps.db, email, user, ok);
  } catch (e) {
    if (!ok) await recordAccountFailure(deps.limiter, email);
    if (user && workspaceId) {
      await recordChange(deps.db, actingAs(deps, userActor(user.id, workspaceId)), {
        action: 'auth.login_failed',
        detail: { reason: 'sso_required' },
      });
    }
    throw e;
  }
  if (!user || !ok || !workspaceId) {
    if (!ok) await recordAccountFailure(deps.limiter, email);
    if (user && workspaceId) {
      await recordChange(deps.db, actingAs(deps, userActor(user.id, workspaceId)), { action: 'auth.login_failed' });
    }
    throw unauthorized('wrong email or password');
  }
  if (user.mfa_enabled) {
    // auth.login is recorded when verify-mfa completes the login, not here.
    return { mfaRequired: true as const, mfaToken: await createMfaChallenge(deps, user.id) };
  }
  const token = await signSessionJwt(deps.authn, {
    userId: user.id,
    workspaceId,
    sessionVersion: user.session_version,
  });
  await recordChange(deps.db, actingAs(deps, userActor(user.id, workspaceId)), { action: 'auth.login' });
  return { token, user: await sessionUser(deps.db, user.id, workspaceId) };
}

/** POST /v1/auth/verify-mfa: the second factor (services/identity/mfa.ts), then a full session JWT. */
export async function verifyMfaLogin(deps: Deps, input: { mfaToken: string; code: string }) {
  const done = await redeemMfaChallenge(deps, input);
  const token = await signSessionJwt(deps.authn, done);
  await recordChange(deps.db, actingAs(deps, userActor(done.userId, done.workspaceId)), {
    action: 'auth.login',
    detail: { mfa: done.method },
  });
  return { token, user: await sessionUser(deps.db, done.userId, done.workspaceId) };
}

export async function switchWorkspace(ctx: Ctx, input: { workspaceId: string }) {
  const { deps, principal } = ctx;
  const { workspaceId } = input;
  const member = await deps.db
    .selectFrom('workspace_members as m')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['w.id', 'w.name', 'u.session_version', 'm.ws_role', 'm.expires_at'])
    .where('m.user_id', '=', principal.userId)
    .where('m.workspace_id', '=', workspaceId)
    .executeTakeFirst();
  // Not a member (D73: also a temporary membership that ended): indistinguishable from a workspace that does
  // not exist.
  if (!member || !liveWsRole(member.ws_role, member.expires_at, deps.clock.now()))
    throw new AppError('NOT_FOUND', 'workspace not found', 'workspaceId');
  await rememberWorkspace(deps.db, principal.userId, workspaceId);
  const token = await signSessionJwt(deps.authn, {
    userId: principal.userId,
    workspaceId,
    sessionVersion: member.session_version,
  });
  return { token, workspaceId: member.id, workspaceName: member.name };
}
