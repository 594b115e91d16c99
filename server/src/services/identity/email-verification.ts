import type { AccountUser } from '@svcenv/contract';
import type { Db } from '../../db/index.js';
import { EMAIL_JOB } from '../../jobs/email.js';
import { sha256Hex } from '../../lib/crypto.js';
import { AppError, rateLimited } from '../../lib/errors.js';
import { randomBase62 } from '../../lib/ids.js';
import type { Ctx } from '../core/context.js';
import type { Deps } from '../core/deps.js';
import { RESEND_PER_USER } from './limits.js';

/**
 * D11 email verification. The link carries a random token (256 bits of base62); only its SHA-256 is stored,
 * which is enough for a value that random (no slow hash needed), so a database dump yields no usable link.
 * The email goes through the durable job queue, written in the caller's transaction (jobs/email.ts).
 */

/** ADR 0003: a link is valid for 24 hours; resend-verification issues a fresh one. */
export const VERIFICATION_LIFETIME_MS = 24 * 60 * 60_000;

/** Writes a verification token and its email job in `trx`; the caller kicks the queue after the commit. */
export async function queueVerificationEmail(
  deps: Pick<Deps, 'clock' | 'config' | 'jobs'>,
  trx: Db,
  user: { id: string; name: string; email: string },
): Promise<void> {
  const token = randomBase62(43);
  const now = deps.clock.now();
  await trx
    .insertInto('email_verifications')
    .values({
      token_hash: sha256Hex(token),
      user_id: user.id,
      email: user.email,
      expires_at: new Date(now.getTime() + VERIFICATION_LIFETIME_MS).toISOString(),
      created_at: now.toISOString(),
    })
    .execute();
  const link = `${deps.config.publicUrl}/verify-email?token=${token}`;
  await deps.jobs.enqueue(trx, {
    kind: EMAIL_JOB,
    payload: {
      to: user.email,
      subject: 'Verify your email address for svcenv',
      text:
        `Hello ${user.name},\n\nplease confirm your email address for svcenv by opening this link:\n\n${link}\n\n` +
        'The link is valid for 24 hours. If you did not create an svcenv account, ignore this email.\n',
      kind: 'email_verification',
    },
  });
}

/** POST /v1/auth/verify-email: a valid, unexpired token sets emailVerifiedAt (D11). */
export async function verifyEmail(deps: Deps, token: string): Promise<{ user: AccountUser }> {
  const now = deps.clock.now().toISOString();
  const userId = await deps.db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('email_verifications as v')
      .innerJoin('users as u', 'u.id', 'v.user_id')
      .select(['u.id', 'u.email_verified_at'])
      .where('v.token_hash', '=', sha256Hex(token))
      .where('v.expires_at', '>', now)
      // A link sent to an address the account no longer has verifies nothing.
      .whereRef('v.email', '=', 'u.email')
      .executeTakeFirst();
    // Unknown, used and expired links look the same, as invite links do (D17).
    if (!row) throw new AppError('NOT_FOUND', 'this verification link is invalid or has expired', 'token');
    if (!row.email_verified_at) {
      await trx.updateTable('users').set({ email_verified_at: now }).where('id', '=', row.id).execute();
    }
    await trx.deleteFrom('email_verifications').where('user_id', '=', row.id).execute();
    return row.id;
  });
  const user = await deps.db
    .selectFrom('users')
    .select(['id', 'name', 'email', 'email_verified_at'])
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
  return { user: { id: user.id, name: user.name, email: user.email, emailVerifiedAt: user.email_verified_at } };
}

/** POST /v1/auth/resend-verification (JWT): 409 when verified, 429 within a minute of the last resend (D11). */
export async function resendVerification(ctx: Ctx): Promise<{ sent: true }> {
  const { deps, principal } = ctx;
  const user = await deps.db
    .selectFrom('users')
    .select(['id', 'name', 'email', 'email_verified_at'])
    .where('id', '=', principal.userId)
    .executeTakeFirstOrThrow();
  if (user.email_verified_at) throw new AppError('CONFLICT', 'this email address is already verified');
  const r = await deps.limiter.consume(user.id, RESEND_PER_USER);
  if (!r.allowed) throw rateLimited(r.retryAfterMs, 'a verification email was sent less than a minute ago');
  await deps.db.transaction().execute((trx) => queueVerificationEmail(deps, trx, user));
  deps.jobs.kick();
  return { sent: true };
}
