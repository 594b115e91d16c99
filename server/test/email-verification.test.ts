import { resendVerificationResponse, sessionResponse, verifyEmailResponse } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import { createToken, dialectName, signupUser, startApp, type TestApp } from './harness.js';
import { startSmtpCapture } from './smtp.js';

const PUBLIC_URL = 'https://svcenv.example.test';

describe(`email verification through real SMTP (${dialectName})`, () => {
  let app: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtpCapture>>;
  const clock = new ManualClock();
  beforeAll(async () => {
    smtp = await startSmtpCapture();
    app = await startApp({ clock, env: { SMTP_URL: smtp.url, PUBLIC_URL } });
  });
  afterAll(async () => {
    await app.stop();
    await smtp.stop();
  });

  const linkPattern = /https:\/\/svcenv\.example\.test\/verify-email\?token=([0-9A-Za-z]+)/g;
  /** Every verification token mailed to `email` so far, oldest first. */
  const tokensFor = (email: string) =>
    smtp.mails
      .filter((m) => m.to.includes(email.toLowerCase()))
      .flatMap((m) => [...m.text.matchAll(linkPattern)].map((x) => x[1]!));

  async function verificationToken(email: string, nth = 0) {
    await smtp.waitFor(email, () => tokensFor(email).length > nth);
    return tokensFor(email)[nth]!;
  }

  it('signup mails a PUBLIC_URL/verify-email link; the token is stored only hashed (D11, D3)', async () => {
    const u = await signupUser(app, 'Hedy');
    const mail = await smtp.waitFor(u.email);
    expect(mail.subject).toMatch(/verify/i);
    expect(mail.text).toContain('Hedy');
    const token = await verificationToken(u.email);
    expect(token.length).toBeGreaterThanOrEqual(40);
    const rows = await app.db.db
      .selectFrom('email_verifications')
      .selectAll()
      .where('user_id', '=', u.user.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(token);
    const jobs = await app.db.db.selectFrom('jobs').select('payload_sealed').execute();
    expect(JSON.stringify(jobs)).not.toContain(token);
  });

  it('verify-email sets emailVerifiedAt once; the link then stops working (D11)', async () => {
    const u = await signupUser(app);
    const token = await verificationToken(u.email);
    const at = clock.now().toISOString();
    const res = await app.request('POST', '/v1/auth/verify-email', { body: { token }, schema: verifyEmailResponse });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ user: { id: u.user.id, name: 'Ada', email: u.email, emailVerifiedAt: at } });
    const session = await app.request('GET', '/v1/auth/session', { token: u.jwt, schema: sessionResponse });
    expect(session.body.user.emailVerifiedAt).toBe(at);
    const again = await app.request('POST', '/v1/auth/verify-email', { body: { token } });
    expect(again.status).toBe(404);
    expect(again.error).toMatchObject({ code: 'NOT_FOUND', field: 'token' });
    // Verified: resend is a conflict (D11).
    const resend = await app.request('POST', '/v1/auth/resend-verification', { token: u.jwt });
    expect(resend.status).toBe(409);
    expect(resend.error.code).toBe('CONFLICT');
  });

  it('refuses unknown, malformed and expired (24 h) links, changing nothing', async () => {
    const u = await signupUser(app);
    const token = await verificationToken(u.email);
    for (const body of [{}, { token: '' }, { token: 5 }, { token: 'x'.repeat(300) }, { token, more: 1 }]) {
      const res = await app.request('POST', '/v1/auth/verify-email', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error.code).toBe('VALIDATION');
    }
    const unknown = await app.request('POST', '/v1/auth/verify-email', { body: { token: `${token}x` } });
    expect(unknown.status).toBe(404);
    clock.advance(24 * 3600 * 1000);
    const expired = await app.request('POST', '/v1/auth/verify-email', { body: { token } });
    expect(expired.status).toBe(404);
    const session = await app.request('GET', '/v1/auth/session', { token: u.jwt, schema: sessionResponse });
    expect(session.body.user.emailVerifiedAt).toBeNull();
  });

  it('resend-verification: 202 and a new working link; again within a minute 429 with Retry-After (D11)', async () => {
    const u = await signupUser(app);
    await verificationToken(u.email);
    const first = await app.request('POST', '/v1/auth/resend-verification', {
      token: u.jwt,
      schema: resendVerificationResponse,
    });
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ sent: true });
    const resent = await verificationToken(u.email, 1);

    clock.advance(59_000);
    const second = await app.request('POST', '/v1/auth/resend-verification', { token: u.jwt });
    expect(second.status).toBe(429);
    expect(second.error).toEqual({ code: 'RATE_LIMIT', message: expect.any(String), field: '' });
    expect(Number(second.headers.get('retry-after'))).toBe(1);
    clock.advance(1_000);
    const third = await app.request('POST', '/v1/auth/resend-verification', { token: u.jwt });
    expect(third.status).toBe(202);
    await verificationToken(u.email, 2);

    const other = await signupUser(app);
    // The limit is per user: another user's resend is unaffected.
    expect((await app.request('POST', '/v1/auth/resend-verification', { token: other.jwt })).status).toBe(202);

    const res = await app.request('POST', '/v1/auth/verify-email', {
      body: { token: resent },
      schema: verifyEmailResponse,
    });
    expect(res.status).toBe(200);
    expect(res.body.user.emailVerifiedAt).toBe(clock.now().toISOString());
  });

  it('answers an access token on resend-verification with 401 (D10)', async () => {
    const u = await signupUser(app);
    const { token } = await createToken(app, u.jwt);
    const res = await app.request('POST', '/v1/auth/resend-verification', { token });
    expect(res.status).toBe(401);
    expect((await app.request('POST', '/v1/auth/resend-verification')).status).toBe(401);
  });
});
