import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Secret, TOTP } from 'otpauth';
import type { z } from 'zod';
import type { Client } from './harness.js';

/** Helpers of the account-security suites. */

/** The TOTP code an authenticator app shows for `secret` at `atMs` (D13: SHA-1, 30 s, 6 digits). */
export function totpCode(secret: string, atMs: number): string {
  return TOTP.generate({
    secret: Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
    timestamp: atMs,
  });
}

let ipCounter = 1;
/**
 * A distinct client address per call (documentation range 198.51.100.0/24 and up; it only travels in a
 * header to a loopback server started with TRUST_PROXY=true), so suites that log in often are not slowed
 * by the per-IP login limit they do not test.
 */
export function freshIp(): string {
  const n = ipCounter++;
  return `198.51.${100 + ((n >> 8) & 15)}.${n & 255}`;
}

/** A login from a fresh address; `schema` is the answer expected (harness `loginSession` or `loginChallenge`). */
export async function loginFrom<S extends z.ZodType = z.ZodUnknown>(
  c: Client,
  email: string,
  password: string,
  schema?: S,
) {
  return c.request('POST', '/v1/auth/login', {
    body: { email, password },
    headers: { 'x-forwarded-for': freshIp() },
    ...(schema ? { schema } : {}),
  });
}

/**
 * Redis for the suites that need it: TEST_REDIS_URL, else the local default. Absent, the suite is skipped,
 * except under CI=true, where an unreachable Redis fails the run (as .ci/run requires it).
 */
export async function redisForTests(): Promise<string | null> {
  const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return url;
  } catch (e) {
    if (process.env.CI === 'true')
      throw new Error(`CI=true but Redis is unreachable at ${url}: ${(e as Error).message}`);
    return null;
  } finally {
    redis.disconnect();
  }
}

/** A Redis key prefix of its own per suite run, so runs never see each other's counters. */
export const testRedisPrefix = () => `svcenv-test-${randomBytes(6).toString('hex')}:`;
