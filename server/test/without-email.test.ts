/**
 * A server without SMTP_URL (D3, ADR 0021): it says so (`GET /v1/auth/options`), and each message becomes one
 * log line with recipient, subject and kind only: no verification, invite or reset link, no token, no body.
 * With SMTP the same operation says it can send. Over HTTP, the logs captured from the server's own stream.
 */
import { authOptionsResponse, inviteSentResponse } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectName, signupUser, startApp, type TestApp } from './harness.js';
import { startSmtpCapture } from './smtp.js';

const PUBLIC_URL = 'https://svcenv.example.test';

/** The D3 lines of the captured log, parsed. */
function mailLines(app: TestApp) {
  return app
    .logs()
    .split('\n')
    .filter((l) => l.includes('"mail":'))
    .map((l) => JSON.parse(l) as { mail: Record<string, unknown>; msg: string });
}

describe(`without SMTP_URL (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ env: { PUBLIC_URL } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('tells the dashboard that it sends no email (public, no credential)', async () => {
    const res = await app.request('GET', '/v1/auth/options', { schema: authOptionsResponse });
    expect([res.status, res.body]).toEqual([200, { emailDelivery: false, signup: 'open' }]);
  });

  it('logs each message as recipient, subject and kind, never a link or token', async () => {
    const owner = await signupUser(app, 'Grace');
    const invitee = `newcomer-${Date.now()}@example.test`;
    const inv = await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: invitee, wsRole: 'Member' },
      schema: inviteSentResponse,
    });
    expect(inv.status).toBe(202);
    const inviteToken = /invite\?token=([A-Za-z0-9_-]+)/.exec(inv.body.inviteUrl!)![1]!;
    expect((await app.request('POST', '/v1/auth/forgot-password', { body: { email: owner.email } })).status).toBe(202);

    const kindsFor = (to: string) =>
      mailLines(app)
        .filter((l) => l.mail.to === to)
        .map((l) => l.mail.kind);
    await expect
      .poll(() => kindsFor(owner.email).sort(), { timeout: 15_000 })
      .toEqual(['email_verification', 'password_reset']);
    await expect.poll(() => kindsFor(invitee), { timeout: 15_000 }).toEqual(['invite']);

    for (const line of mailLines(app)) {
      expect(Object.keys(line.mail).sort()).toEqual(['kind', 'subject', 'to']);
      expect(line.msg).toBe('email not sent (no SMTP_URL configured)');
    }
    const logs = app.logs();
    expect(logs).not.toContain(inviteToken);
    expect(logs).not.toMatch(/token=/);
    expect(logs).not.toContain(`${PUBLIC_URL}/verify-email`);
    expect(logs).not.toContain(`${PUBLIC_URL}/invite`);
    expect(logs).not.toContain(`${PUBLIC_URL}/reset-password`);
  });
});

describe(`with SMTP_URL (${dialectName})`, () => {
  it('tells the dashboard that it sends email', async () => {
    const smtp = await startSmtpCapture();
    const app = await startApp({ env: { SMTP_URL: smtp.url, PUBLIC_URL } });
    try {
      const res = await app.request('GET', '/v1/auth/options', { schema: authOptionsResponse });
      expect([res.status, res.body]).toEqual([200, { emailDelivery: true, signup: 'open' }]);
    } finally {
      await app.stop();
      await smtp.stop();
    }
  });
});
