import type { Db } from '../../db/index.js';
import { EMAIL_JOB } from '../../jobs/email.js';
import { exponentialBackoff, type JobKinds } from '../../jobs/queue.js';
import type { Clock } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { AppError, rateLimited } from '../../lib/errors.js';
import { randomBase62 } from '../../lib/ids.js';
import { clientKey, type LimitRule } from '../../lib/rate-limit.js';
import { recordChange } from '../core/changes.js';
import { actingAs } from '../core/context.js';
import type { Deps } from '../core/deps.js';
import { userActor } from '../core/principal.js';
import { landingWorkspace } from '../workspace/team.js';
import { hashPassword, normalizeEmail } from './accounts.js';
import { accountKey } from './limits.js';
import { MFA_MAX_ATTEMPTS, withUserSecondFactor } from './mfa.js';

/**
 * D54 password reset (ADR 0011).
 *
 * Existence never shows: `forgot-password` does the same thing for every address, it counts the two rate
 * limits and writes one job holding the address, and answers. Whether an account exists is looked up only
 * by that job, after the answer has left, so neither the body nor the time of the answer can depend on it.
 * The job issues the link and queues the email (jobs/email.ts), like every other mail.
 *
 * The link carries 256 bits of base62, stored as its SHA-256 only (as D11's links). `password_resets`
 * holds one row per user, so a newer link replaces the older one in the same write; redeeming deletes the
 * row in the transaction that sets the password, so a link works once even when sent twice at once.
 */

/** D54: a link is valid for one hour. */
export const RESET_LIFETIME_MS = 3_600_000;
/** D54: 5 forgot-password requests per hour per address and per client IP. */
export const FORGOT_PER_EMAIL: LimitRule = { name: 'forgot-password-email', max: 5, windowMs: 3_600_000 };
export const FORGOT_PER_IP: LimitRule = { name: 'forgot-password-ip', max: 5, windowMs: 3_600_000 };

export const PASSWORD_RESET_JOB = 'password-reset.request';

type LinkDeps = { db: Db; clock: Clock; config: { publicUrl: string } };

/**
 * Issues a fresh link for the account of `email` in `trx`, voiding the older one; null when no account has
 * that address. Shared by the emailed link and the operator's `npm run admin -- reset-link`.
 */
export async function issueResetLink(
  deps: LinkDeps,
  trx: Db,
  email: string,
): Promise<{ link: string; user: { id: string; name: string; email: string } } | null> {
  const user = await trx
    .selectFrom('users')
    .select(['id', 'name', 'email'])
    .where('email', '=', normalizeEmail(email))
    .executeTakeFirst();
  if (!user) return null;
  const token = randomBase62(43);
  const now = deps.clock.now();
  const row = {
    token_hash: sha256Hex(token),
    email: user.email,
    attempts: 0,
    expires_at: new Date(now.getTime() + RESET_LIFETIME_MS).toISOString(),
    created_at: now.toISOString(),
  };
  await trx
    .insertInto('password_resets')
    .values({ user_id: user.id, ...row })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(row))
    .execute();
  return { link: `${deps.config.publicUrl}/reset-password?token=${token}`, user };
}

/** The job behind forgot-password: an address without an account ends here, having sent nothing. */
async function performResetRequest(deps: Deps, email: string): Promise<void> {
  const sent = await deps.db.transaction().execute(async (trx) => {
    if (!deps.config.SMTP_URL) {
      // Without SMTP no message reaches the person, so no link is made at all (a reset link is a credential).
      // The D3 log line (recipient, subject, kind) tells the operator, who can hand out `admin reset-link`
      // (D54); the dashboard's forgot-password page says to ask them (ADR 0021).
      const user = await trx.selectFrom('users').select('email').where('email', '=', email).executeTakeFirst();
      if (!user) return false;
      await deps.jobs.enqueue(trx, {
        kind: EMAIL_JOB,
        payload: {
          to: user.email,
          subject:
            'svcenv password reset requested (no email server: an instance administrator makes a link on the Instance page, or with npm run admin -- reset-link)',
          text: 'A password reset was requested, but this server cannot send email.\n',
          kind: 'password_reset',
        },
      });
      return true;
    }
    const issued = await issueResetLink(deps, trx, email);
    if (!issued) return false;
    await deps.jobs.enqueue(trx, {
      kind: EMAIL_JOB,
      // The link is only in the body, which only SMTP sends (lib/mail.ts).
      payload: {
        kind: 'password_reset',
        to: issued.user.email,
        subject: 'Reset your svcenv password',
        text:
          `Hello ${issued.user.name},\n\nsomeone (hopefully you) asked to reset the password of your svcenv account. ` +
          `Choose a new password here:\n\n${issued.link}\n\n` +
          'The link works once, for one hour, and only the newest link you were sent works. Resetting signs you ' +
          'out everywhere. If you did not ask for this, ignore this email: your password stays as it is.\n',
      },
    });
    return true;
  });
  if (sent) deps.jobs.kick();
}

/** Job kinds of this module; registered by the auth routes at start-up on every instance. */
export function passwordResetJobs(deps: Deps): JobKinds {
  return {
    [PASSWORD_RESET_JOB]: {
      maxAttempts: 10,
      backoffMs: exponentialBackoff(5_000, 300_000),
      perform: (payload: { email: string }) => performResetRequest(deps, payload.email),
    },
  };
}

/** POST /v1/auth/forgot-password: the same work and answer for every address (D54). */
export async function requestPasswordReset(deps: Deps, input: { email: string; ip: string }): Promise<{ sent: true }> {
  const email = normalizeEmail(input.email);
  const byIp = await deps.limiter.consume(clientKey(input.ip), FORGOT_PER_IP);
  if (!byIp.allowed) throw rateLimited(byIp.retryAfterMs, 'too many password reset requests from this address');
  // Keyed by a digest of the address (as the account lockout is), so no address is written to Redis.
  const byEmail = await deps.limiter.consume(accountKey(email), FORGOT_PER_EMAIL);
  if (!byEmail.allowed) throw rateLimited(byEmail.retryAfterMs, 'too many password reset requests for this email');
  await deps.jobs.enqueue(deps.db, { kind: PASSWORD_RESET_JOB, payload: { email } });
  // No kick: the runner's next poll (within half a second) takes the job, at a moment unrelated to this
  // request, so the job's work (more of it for a real account; synchronous on SQLite) never runs while
  // this answer is still being written.
  return { sent: true };
}

const codeRequired = () =>
  new AppError('UNAUTHORIZED', 'this account uses two-factor authentication: a code is required', 'code');
const invalidLink = () => new AppError('NOT_FOUND', 'this password reset link is invalid or has expired', 'token');

/**
 * POST /v1/auth/reset-password (D54): a live link sets the password, bumps the session version (every JWT
 * ends, D9) and voids open MFA challenges. With two-factor on, a TOTP or backup code is redeemed in the same
 * transaction (single use, D13); a wrong one counts like any other and takes one of the link's 5 tries.
 */
export async function resetPassword(
  deps: Deps,
  input: { token: string; newPassword: string; code?: string | undefined },
): Promise<void> {
  const tokenHash = sha256Hex(input.token);
  const nowIso = deps.clock.now().toISOString();
  const row = await deps.db
    .selectFrom('password_resets as r')
    .innerJoin('users as u', 'u.id', 'r.user_id')
    .select(['u.id', 'u.mfa_enabled'])
    .where('r.token_hash', '=', tokenHash)
    .where('r.expires_at', '>', nowIso)
    .where('r.attempts', '<', MFA_MAX_ATTEMPTS)
    // A link sent to an address the account no longer has resets nothing.
    .whereRef('r.email', '=', 'u.email')
    .executeTakeFirst();
  // Unknown, used, replaced and expired links look the same, as verification links do (D11).
  if (!row) throw invalidLink();
  const mfa = row.mfa_enabled === 1;
  // The dashboard learns from this answer (field `code`) that it must ask for a code; nothing is spent.
  if (mfa && input.code === undefined) throw codeRequired();
  const workspaceId = await landingWorkspace(deps.db, row.id);
  if (mfa) {
    // One of the link's tries is taken before the code is looked at, so concurrent guesses cannot exceed 5.
    const claimed = await deps.db
      .updateTable('password_resets')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('token_hash', '=', tokenHash)
      .where('attempts', '<', MFA_MAX_ATTEMPTS)
      .where('expires_at', '>', nowIso)
      .executeTakeFirst();
    if (claimed.numUpdatedRows !== 1n) throw invalidLink();
  }
  const passwordHash = await hashPassword(input.newPassword);

  const apply = async (trx: Db) => {
    const used = await trx
      .deleteFrom('password_resets')
      .where('token_hash', '=', tokenHash)
      .where('expires_at', '>', nowIso)
      .executeTakeFirst();
    // Another request redeemed the link first: this one changes nothing (a code it redeemed is rolled back).
    if (used.numDeletedRows !== 1n) throw invalidLink();
    const updated = await trx
      .updateTable('users')
      .set((eb) => ({ password_hash: passwordHash, session_version: eb('session_version', '+', 1) }))
      .where('id', '=', row.id)
      // Two-factor switched on since the lookup: the code it now needs was not checked.
      .where('mfa_enabled', '=', mfa ? 1 : 0)
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) throw codeRequired();
    await trx.deleteFrom('mfa_challenges').where('user_id', '=', row.id).execute();
    // Audited where account events are (login, D36); an account in no workspace has no audit log to hold it.
    if (workspaceId) {
      await recordChange(trx, actingAs(deps, userActor(row.id, workspaceId)), { action: 'auth.password_reset' });
    }
  };

  if (!mfa) {
    await deps.db.transaction().execute(apply);
    return;
  }
  try {
    await withUserSecondFactor(deps, { id: row.id, workspaceId }, input.code!, 'password-reset', apply);
  } catch (e) {
    if (e instanceof AppError && e.code === 'UNAUTHORIZED') {
      // The fifth wrong code voids the link now, rather than leaving a dead row until it expires.
      await deps.db
        .deleteFrom('password_resets')
        .where('token_hash', '=', tokenHash)
        .where('attempts', '>=', MFA_MAX_ATTEMPTS)
        .execute();
    }
    throw e;
  }
}

/**
 * `npm run admin -- reset-link <email>` (D54): a one-hour link printed for the operator, for installs
 * without SMTP; it voids the account's older link like any newer one.
 */
export async function adminResetLink(deps: LinkDeps, email: string): Promise<{ ok: boolean; message: string }> {
  const issued = await deps.db.transaction().execute((trx) => issueResetLink(deps, trx, email));
  if (!issued) return { ok: false, message: `no account has the email ${normalizeEmail(email)}` };
  return {
    ok: true,
    message: `${issued.link}\n(valid for one hour, once; any older reset link of ${issued.user.email} no longer works)`,
  };
}
