import { Secret, TOTP } from 'otpauth';

/**
 * D13 TOTP: SHA-1, 30-second period, 6 digits (what every authenticator app expects), through the
 * maintained `otpauth` library; the server only adds the time (from the injected clock) and the replay
 * guard (services/identity/mfa.ts).
 */
export const TOTP_PERIOD_S = 30;
const ISSUER = 'svcenv';

function totp(secretBase32: string, label = ''): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label,
    algorithm: 'SHA1',
    digits: 6,
    period: TOTP_PERIOD_S,
    secret: Secret.fromBase32(secretBase32),
  });
}

/** A new 160-bit secret (RFC 4226's recommended length), base32 as authenticator apps take it. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

export function otpauthUrl(secretBase32: string, accountEmail: string): string {
  return totp(secretBase32, accountEmail).toString();
}

export const totpStep = (nowMs: number): number => Math.floor(nowMs / 1000 / TOTP_PERIOD_S);

/**
 * The time step whose code `code` is, within the current step plus or minus one (D13, 90 seconds in all),
 * or null. The caller still has to make sure that step was not accepted before.
 */
export function matchTotpStep(secretBase32: string, code: string, nowMs: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totp(secretBase32).validate({ token: code, timestamp: nowMs, window: 1 });
  return delta === null ? null : totpStep(nowMs) + delta;
}
