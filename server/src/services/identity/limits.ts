import { sha256Hex } from '../../lib/crypto.js';
import { rateLimited } from '../../lib/errors.js';
import { clientKey, type LimitRule, type RateLimiter } from '../../lib/rate-limit.js';

/** Spec "Limits" and D14: 10 login requests per minute per client IP. */
export const LOGIN_PER_IP: LimitRule = { name: 'login-ip', max: 10, windowMs: 60_000 };
/**
 * Against password guessing from many IPs: 100 wrong passwords or second-factor codes per account per hour
 * (ADR 0003). Unknown emails are counted the same way, so the limit does not reveal which accounts exist.
 */
export const FAILURES_PER_ACCOUNT: LimitRule = { name: 'auth-fail', max: 100, windowMs: 3_600_000 };
/** D60: 60 workload-identity sign-ins per minute per client address and identity. */
export const OIDC_LOGIN_PER_IP_AND_IDENTITY: LimitRule = { name: 'oidc-login', max: 60, windowMs: 60_000 };
/** Spec "Limits" and D11: one resend-verification per minute per user. */
export const RESEND_PER_USER: LimitRule = { name: 'resend-verification', max: 1, windowMs: 60_000 };

/** D14: counts every login request from the client's address; the 11th within a minute is refused. */
export async function limitLoginByIp(limiter: RateLimiter, ip: string): Promise<void> {
  const r = await limiter.consume(clientKey(ip), LOGIN_PER_IP);
  if (!r.allowed) throw rateLimited(r.retryAfterMs, 'too many login attempts from this address; try again later');
}

/** The per-account key: a digest of the normalised email, so no address is written to Redis. */
export const accountKey = (normalizedEmail: string) => sha256Hex(`account:${normalizedEmail}`);

/** Refuses before any password or code is checked while the account's failure budget is spent. */
export async function assertAccountNotLocked(limiter: RateLimiter, normalizedEmail: string): Promise<void> {
  const r = await limiter.peek(accountKey(normalizedEmail), FAILURES_PER_ACCOUNT);
  if (!r.allowed)
    throw rateLimited(r.retryAfterMs, 'too many failed sign-in attempts for this account; try again later');
}

export async function recordAccountFailure(limiter: RateLimiter, normalizedEmail: string): Promise<void> {
  await limiter.consume(accountKey(normalizedEmail), FAILURES_PER_ACCOUNT);
}
