/**
 * Invites on a server without an email server (ADR 0012): the inviting Owner gets the
 * link in the invite answer (`inviteUrl`) only when no SMTP_URL is configured, since the link otherwise went
 * to the log alone; with SMTP the answer never carries it. The public `GET /v1/auth/invite?token=` names the
 * workspace, the inviter and the invited email for a live token only (404 for used, revoked, expired or
 * unknown ones), rate-limited per client IP. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import { randomBytes } from 'node:crypto';
import { acceptInviteResponse, inviteInfoResponse, inviteSentResponse } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import { freshIp } from './account-helpers.js';
import { type Client, dialectName, signupUser, startApp, type TestApp } from './harness.js';
import { startSmtpCapture } from './smtp.js';

const PUBLIC_URL = 'https://svcenv.example.test';
const linkPattern = /^https:\/\/svcenv\.example\.test\/invite\?token=([A-Za-z0-9_-]{40,})$/;
const newcomerEmail = (name: string) => `${name}-${Date.now()}-${randomBytes(3).toString('hex')}@example.test`;

function info(c: Client, token: string, ip = freshIp()) {
  return c.request('GET', `/v1/auth/invite?token=${encodeURIComponent(token)}`, {
    headers: { 'x-forwarded-for': ip },
  });
}

describe(`invite link without an email server (${dialectName})`, () => {
  let app: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    // No SMTP_URL: the log mailer (D3). TRUST_PROXY: each request names its client address for the limit.
    app = await startApp({ clock, env: { PUBLIC_URL, TRUST_PROXY: 'true' } });
  });
  afterAll(async () => app?.stop());

  async function inviteNewcomer(ownerJwt: string, email = newcomerEmail('new')) {
    const res = await app.request('POST', '/v1/workspace/invites', {
      token: ownerJwt,
      body: { email, wsRole: 'Member' },
      schema: inviteSentResponse,
    });
    expect(res.status, res.text).toBe(202);
    return { email, body: res.body };
  }

  it('hands the Owner the invite link, which names workspace, inviter and email, and can be accepted', async () => {
    const owner = await signupUser(app, 'Olga');
    const { email, body } = await inviteNewcomer(owner.jwt);
    expect(body.inviteUrl).toMatch(linkPattern);
    const token = linkPattern.exec(body.inviteUrl!)![1]!;

    const seen = await info(app, token);
    expect(seen.status, seen.text).toBe(200);
    expect(inviteInfoResponse.strict().parse(seen.body)).toEqual({
      workspaceName: "Olga's workspace",
      inviterName: 'Olga',
      email,
    });

    // The link is the real one: the invitee signs up with that email and accepts it.
    const signup = await app.request('POST', '/v1/auth/signup', {
      body: { name: 'Newcomer', email, password: 'a-long-password' },
    });
    expect(signup.status).toBe(201);
    const jwt = (signup.body as { token: string }).token;
    const accepted = await app.request('POST', '/v1/auth/accept-invite', {
      token: jwt,
      body: { token },
      schema: acceptInviteResponse,
    });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.workspaceName).toBe("Olga's workspace");
    // Used: the greeting is gone with it.
    expect((await info(app, token)).status).toBe(404);
  });

  it('answers 404 for an unknown, replaced, revoked or expired token, in the same words', async () => {
    const owner = await signupUser(app, 'Omar');
    const unknown = await info(app, randomBytes(32).toString('base64url'));
    expect(unknown.status).toBe(404);

    // A second invite to the same address replaces the first (its link stops working).
    const email = newcomerEmail('twice');
    const first = await inviteNewcomer(owner.jwt, email);
    const second = await inviteNewcomer(owner.jwt, email);
    const firstToken = linkPattern.exec(first.body.inviteUrl!)![1]!;
    const secondToken = linkPattern.exec(second.body.inviteUrl!)![1]!;
    const replaced = await info(app, firstToken);
    expect(replaced.status).toBe(404);
    expect(replaced.error?.message).toBe(unknown.error?.message);
    expect((await info(app, secondToken)).status).toBe(200);

    const list = await app.request('GET', '/v1/workspace/invites', { token: owner.jwt });
    const pending = (list.body as { invites: { id: string; email: string }[] }).invites.find((i) => i.email === email)!;
    expect((await app.request('DELETE', `/v1/workspace/invites/${pending.id}`, { token: owner.jwt })).status).toBe(204);
    expect((await info(app, secondToken)).status).toBe(404);

    const later = await inviteNewcomer(owner.jwt);
    const laterToken = linkPattern.exec(later.body.inviteUrl!)![1]!;
    expect((await info(app, laterToken)).status).toBe(200);
    clock.advance(7 * 24 * 3_600_000 + 1_000);
    expect((await info(app, laterToken)).status).toBe(404);
  });

  it('gives no link when the invitee already has an account (they are added at once)', async () => {
    const owner = await signupUser(app, 'Odile');
    const other = await signupUser(app, 'Pat');
    const res = await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: other.email, wsRole: 'Member' },
    });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('inviteUrl');
  });

  it('limits look-ups per client IP: the 31st within a minute is 429 with Retry-After', async () => {
    const ip = freshIp();
    const token = randomBytes(32).toString('base64url');
    for (let i = 0; i < 30; i++) expect((await info(app, token, ip)).status).toBe(404);
    const refused = await info(app, token, ip);
    expect(refused.status).toBe(429);
    expect(refused.error?.code).toBe('RATE_LIMIT');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another address is counted on its own.
    expect((await info(app, token, freshIp())).status).toBe(404);
  });
});

describe(`invite link with an email server (${dialectName})`, () => {
  let app: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtpCapture>>;
  beforeAll(async () => {
    smtp = await startSmtpCapture();
    app = await startApp({ env: { SMTP_URL: smtp.url, PUBLIC_URL } });
  });
  afterAll(async () => {
    await app?.stop();
    await smtp?.stop();
  });

  it('never puts the link in the answer: it goes by email only', async () => {
    const owner = await signupUser(app, 'Sam');
    const email = newcomerEmail('mailed');
    const res = await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email, wsRole: 'Member' },
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ invited: true, email });
    const mail = await smtp.waitFor(email);
    const token = /invite\?token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]!;
    const seen = await info(app, token);
    expect(seen.status).toBe(200);
    expect(seen.body).toEqual({ workspaceName: "Sam's workspace", inviterName: 'Sam', email });
  });
});
