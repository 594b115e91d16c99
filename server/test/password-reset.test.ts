import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  auditPage,
  backupCodesResponse,
  forgotPasswordResponse,
  mfaSetupResponse,
  verifyMfaResponse,
} from '@svcenv/contract';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import { freshIp, loginFrom, redisForTests, testRedisPrefix, totpCode } from './account-helpers.js';
import {
  type Client,
  dialectName,
  freshPgSchema,
  loginChallenge,
  loginSession,
  repoRoot,
  signupUser,
  startApp,
  startServer,
  type TestApp,
} from './harness.js';
import { startSmtpCapture } from './smtp.js';

const PUBLIC_URL = 'https://svcenv.example.test';
const HOUR = 3_600_000;
const STEP = 30_000;
const linkPattern = /https:\/\/svcenv\.example\.test\/reset-password\?token=([0-9A-Za-z]+)/g;

function forgot(c: Client, email: string, ip = freshIp()) {
  return c.request('POST', '/v1/auth/forgot-password', { body: { email }, headers: { 'x-forwarded-for': ip } });
}

function reset(c: Client, body: Record<string, unknown>) {
  return c.request('POST', '/v1/auth/reset-password', { body });
}

const uniqueEmail = (name: string) => `${name}-${Date.now()}-${randomBytes(4).toString('hex')}@example.test`;

describe(`password reset (D54, ${dialectName})`, () => {
  let app: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtpCapture>>;
  const clock = new ManualClock();
  beforeAll(async () => {
    smtp = await startSmtpCapture();
    // TRUST_PROXY: each request names its client address, so the per-IP limit is tested on its own.
    app = await startApp({ clock, env: { SMTP_URL: smtp.url, PUBLIC_URL, TRUST_PROXY: 'true' } });
  });
  afterAll(async () => {
    await app.stop();
    await smtp.stop();
  });
  // Every test starts 10 s into a fresh TOTP step, a fresh hour of rate-limit window, the clock only moving on.
  beforeEach(() => {
    const now = clock.now().getTime() + HOUR;
    clock.set(new Date((Math.floor(now / STEP) + 1) * STEP + 10_000));
  });

  /** Every reset token mailed to `email` so far, oldest first. */
  const tokensFor = (email: string) =>
    smtp.mails
      .filter((m) => m.to.includes(email.toLowerCase()) && /reset/i.test(m.subject))
      .flatMap((m) => [...m.text.matchAll(linkPattern)].map((x) => x[1]!));

  async function resetToken(email: string, nth = 0) {
    await smtp.waitFor(email, () => tokensFor(email).length > nth);
    return tokensFor(email)[nth]!;
  }

  async function requestToken(email: string) {
    const before = tokensFor(email).length;
    const res = await forgot(app, email);
    expect(res.status, res.text).toBe(202);
    return resetToken(email, before);
  }

  /** Waits until the job runner has nothing left to do (the reset request and its email are both done). */
  async function idle() {
    await expect
      .poll(
        async () =>
          (await app.db.db.selectFrom('jobs').select('id').where('status', 'in', ['pending', 'running']).execute())
            .length,
        { timeout: 15_000, interval: 20 },
      )
      .toBe(0);
  }

  async function mfaUser() {
    const u = await signupUser(app);
    const setup = await app.request('POST', '/v1/me/mfa/setup', { token: u.jwt, schema: mfaSetupResponse });
    const enabled = await app.request('POST', '/v1/me/mfa/enable', {
      token: u.jwt,
      body: { code: totpCode(setup.body.secret, clock.now().getTime()) },
      schema: backupCodesResponse,
    });
    expect(enabled.status, enabled.text).toBe(200);
    // The enabling code's step is used up (D13).
    clock.advance(STEP);
    return { ...u, secret: setup.body.secret, backupCodes: enabled.body.backupCodes };
  }

  it('mails a one-hour PUBLIC_URL/reset-password link; the token is stored only as a digest (D54, D3)', async () => {
    const u = await signupUser(app, 'Grace');
    const res = await forgot(app, `  ${u.email.toUpperCase()} `);
    expect(res.status).toBe(202);
    expect(res.json(forgotPasswordResponse)).toEqual({ sent: true });
    const token = await resetToken(u.email);
    expect(token.length).toBeGreaterThanOrEqual(40);
    const mail = smtp.mails.find((m) => m.text.includes(token))!;
    expect(mail.subject).toBe('Reset your svcenv password');
    expect(mail.text).toContain('Grace');
    const rows = await app.db.db.selectFrom('password_resets').selectAll().where('user_id', '=', u.user.id).execute();
    expect(rows).toHaveLength(1);
    expect(Date.parse(rows[0]!.expires_at) - clock.now().getTime()).toBe(HOUR);
    expect(JSON.stringify(rows)).not.toContain(token);
    const jobs = await app.db.db.selectFrom('jobs').select(['payload_sealed', 'last_error']).execute();
    expect(JSON.stringify(jobs)).not.toContain(token);
    expect(JSON.stringify(jobs)).not.toContain(u.email);
    expect(app.logs()).not.toContain(token);
  });

  it('refuses a common new password with 400 field newPassword; the link stays usable', async () => {
    const u = await signupUser(app);
    const token = await requestToken(u.email);
    const common = await reset(app, { token, newPassword: 'Password1' });
    expect(common.status, common.text).toBe(400);
    expect(common.error).toMatchObject({ code: 'VALIDATION', field: 'newPassword' });
    expect(common.error.message).toMatch(/commonly used passwords/);
    expect(common.text).not.toContain('Password1');
    expect((await reset(app, { token, newPassword: 'lantern-quarry-51' })).status).toBe(204);
    expect((await loginFrom(app, u.email, 'lantern-quarry-51', loginSession)).status).toBe(200);
  });

  it('answers an address without an account exactly as one with, and does the same work before answering', async () => {
    const u = await signupUser(app);
    const nobody = uniqueEmail('nobody');
    // With the runner stopped, what each request did before its answer stays in the database to compare.
    await idle();
    await app.deps.jobs.stop();
    const counts = async () => {
      const rows = await app.db.db.selectFrom('jobs').select(['kind', 'status']).execute();
      const resets = await app.db.db.selectFrom('password_resets').select('user_id').execute();
      return {
        jobs: rows.length,
        resetRequests: rows.filter((r) => r.kind === 'password-reset.request').length,
        resets: resets.length,
      };
    };
    let known: Awaited<ReturnType<typeof forgot>>;
    let unknown: Awaited<ReturnType<typeof forgot>>;
    try {
      const c0 = await counts();
      known = await forgot(app, u.email);
      const c1 = await counts();
      unknown = await forgot(app, nobody);
      const c2 = await counts();
      // Each wrote one reset-request job and nothing else; no token and no email exist yet for either.
      expect([c1.jobs - c0.jobs, c1.resetRequests - c0.resetRequests, c1.resets - c0.resets]).toEqual([1, 1, 0]);
      expect([c2.jobs - c1.jobs, c2.resetRequests - c1.resetRequests, c2.resets - c1.resets]).toEqual([1, 1, 0]);
    } finally {
      app.deps.jobs.start();
    }
    expect(known.status).toBe(202);
    expect(unknown.status).toBe(202);
    expect(unknown.text).toBe(known.text);
    const headers = (r: typeof known) =>
      [...r.headers.entries()].filter(([k]) => !['date', 'x-request-id'].includes(k)).sort();
    expect(headers(unknown)).toEqual(headers(known));
    // The job then mails the account holder, and no one for the unknown address.
    await resetToken(u.email);
    await idle();
    expect(smtp.mails.filter((m) => m.to.includes(nobody))).toEqual([]);
  });

  it('takes comparable time for addresses with and without an account', async () => {
    const u = await signupUser(app);
    const time = async (email: string) => {
      // The previous request's job is run and finished first (the test kicks the runner rather than wait
      // for its poll), so each measured request has the server to itself.
      app.deps.jobs.kick();
      await idle();
      const t0 = performance.now();
      const res = await forgot(app, email);
      const ms = performance.now() - t0;
      expect(res.status).toBe(202);
      return ms;
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let round = 0; round < 16; round++) {
      // A new window every 4 rounds keeps the per-address limit (5 an hour) out of the measurement.
      if (round % 4 === 0) clock.advance(HOUR);
      // Alternating which goes first, so a drift in the machine's load weighs on both alike.
      if (round % 2) unknown.push(await time(uniqueEmail('ghost')));
      known.push(await time(u.email));
      if (!(round % 2)) unknown.push(await time(uniqueEmail('ghost')));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    // Generous: an argon2 check or a mail sent on one path only would cost tens of milliseconds.
    expect(Math.abs(median(known) - median(unknown)), `known ${known} unknown ${unknown}`).toBeLessThan(15);
  });

  it('resets the password once: old password and every session end, audited as auth.password_reset (D54, D9)', async () => {
    const u = await signupUser(app);
    const token = await requestToken(u.email);
    const newPassword = 'a brand new password';
    expect((await reset(app, { token, newPassword })).status).toBe(204);
    expect((await app.request('GET', '/v1/auth/session', { token: u.jwt })).status).toBe(401);
    expect((await loginFrom(app, u.email, u.password)).status).toBe(401);
    const login = await loginFrom(app, u.email, newPassword, loginSession);
    expect(login.status).toBe(200);
    const again = await reset(app, { token, newPassword: 'yet another password' });
    expect(again.status).toBe(404);
    expect(again.error).toMatchObject({ code: 'NOT_FOUND', field: 'token' });
    expect((await loginFrom(app, u.email, newPassword)).status).toBe(200);
    const audit = await app.request('GET', '/v1/workspace/audit?limit=10', {
      token: login.body.token,
      schema: auditPage,
    });
    const entry = audit.body.logs.find((l) => l.action === 'auth.password_reset');
    expect(entry).toMatchObject({ actorId: u.user.id, actorType: 'user', targetKey: null });
    expect(JSON.stringify(audit.body)).not.toContain(token);
    expect(JSON.stringify(audit.body)).not.toContain(newPassword);
    expect(app.logs()).not.toContain(newPassword);
  });

  it('voids a link when a newer one is sent, and after one hour (D54)', async () => {
    const u = await signupUser(app);
    const first = await requestToken(u.email);
    const second = await requestToken(u.email);
    expect(second).not.toBe(first);
    expect((await reset(app, { token: first, newPassword: 'password one' })).status).toBe(404);
    const third = await requestToken(u.email);
    expect((await reset(app, { token: second, newPassword: 'password two' })).status).toBe(404);
    // Valid for one hour: a millisecond before, it still works.
    clock.advance(HOUR - 1);
    expect((await reset(app, { token: third, newPassword: 'password three' })).status).toBe(204);
    const fourth = await requestToken(u.email);
    clock.advance(HOUR);
    expect((await reset(app, { token: fourth, newPassword: 'password four' })).status).toBe(404);
    expect((await loginFrom(app, u.email, 'password three')).status).toBe(200);
  });

  it('redeems a link once when several resets carry it at the same moment', async () => {
    const u = await signupUser(app);
    const token = await requestToken(u.email);
    const passwords = Array.from({ length: 5 }, (_, i) => `concurrent password ${i}`);
    const answers = await Promise.all(passwords.map((newPassword) => reset(app, { token, newPassword })));
    expect(answers.map((r) => r.status).sort()).toEqual([204, 404, 404, 404, 404]);
    const winner = passwords[answers.findIndex((r) => r.status === 204)]!;
    for (const p of passwords) expect((await loginFrom(app, u.email, p)).status).toBe(p === winner ? 200 : 401);
  });

  it('refuses bad input with 400 in the error shape, changing nothing; the link still works after (D8)', async () => {
    const u = await signupUser(app);
    const token = await requestToken(u.email);
    for (const [body, field] of [
      [{ token, newPassword: 'short' }, 'newPassword'],
      [{ token, newPassword: 'x'.repeat(129) }, 'newPassword'],
      [{ token }, 'newPassword'],
      [{ newPassword: 'long enough' }, 'token'],
      [{ token: '', newPassword: 'long enough' }, 'token'],
      [{ token: 'x'.repeat(300), newPassword: 'long enough' }, 'token'],
      [{ token, newPassword: 'long enough', code: '12' }, 'code'],
    ] as const) {
      const res = await reset(app, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error).toMatchObject({ code: 'VALIDATION', field });
    }
    const extra = await reset(app, { token, newPassword: 'long enough', admin: true });
    expect(extra.status).toBe(400);
    for (const body of [{}, { email: 'not an address' }, { email: u.email, more: 1 }, { email: 5 }]) {
      const res = await app.request('POST', '/v1/auth/forgot-password', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error.code).toBe('VALIDATION');
    }
    expect((await reset(app, { token: `${token}x`, newPassword: 'long enough' })).status).toBe(404);
    expect((await loginFrom(app, u.email, u.password)).status).toBe(200);
    expect((await reset(app, { token, newPassword: 'long enough' })).status).toBe(204);
  });

  it('with two-factor on, needs a TOTP or backup code, each single-use; open MFA challenges end (D54, D13)', async () => {
    const u = await mfaUser();
    const pending = await loginFrom(app, u.email, u.password, loginChallenge);
    const token = await requestToken(u.email);
    // Without a code: 401 naming the field, and nothing spent (the dashboard then asks for the code).
    const noCode = await reset(app, { token, newPassword: 'mfa reset one' });
    expect(noCode.status).toBe(401);
    expect(noCode.error).toMatchObject({ code: 'UNAUTHORIZED', field: 'code' });
    const wrong = await reset(app, { token, newPassword: 'mfa reset one', code: '000000' });
    expect(wrong.status).toBe(401);
    const code = totpCode(u.secret, clock.now().getTime());
    expect((await reset(app, { token, newPassword: 'mfa reset one', code })).status).toBe(204);
    // The open login challenge is void, as is every session.
    const verify = await app.request('POST', '/v1/auth/verify-mfa', {
      body: { mfaToken: pending.body.mfaToken, code: totpCode(u.secret, clock.now().getTime() + STEP) },
    });
    expect(verify.status).toBe(401);
    expect((await app.request('GET', '/v1/auth/session', { token: u.jwt })).status).toBe(401);
    // The TOTP step is used up: the same code completes nothing else (D13).
    const token2 = await requestToken(u.email);
    expect((await reset(app, { token: token2, newPassword: 'mfa reset two', code })).status).toBe(401);
    // A backup code works once.
    const backup = u.backupCodes[0]!;
    expect((await reset(app, { token: token2, newPassword: 'mfa reset two', code: backup })).status).toBe(204);
    const token3 = await requestToken(u.email);
    expect((await reset(app, { token: token3, newPassword: 'mfa reset three', code: backup })).status).toBe(401);
    // Signing in needs the new password and the second factor still.
    const challenge = await loginFrom(app, u.email, 'mfa reset two', loginChallenge);
    clock.advance(STEP);
    const done = await app.request('POST', '/v1/auth/verify-mfa', {
      body: { mfaToken: challenge.body.mfaToken, code: totpCode(u.secret, clock.now().getTime()) },
      schema: verifyMfaResponse,
    });
    expect(done.status).toBe(200);
    const audit = await app.request('GET', '/v1/workspace/audit?limit=50', {
      token: done.body.token,
      schema: auditPage,
    });
    const actions = audit.body.logs.map((l) => l.action);
    expect(actions.filter((a) => a === 'auth.password_reset')).toHaveLength(2);
    expect(actions.filter((a) => a === 'auth.mfa_failed').length).toBeGreaterThanOrEqual(3);
  });

  it('voids the link at the fifth wrong code, and counts wrong codes against the account (D13)', async () => {
    const u = await mfaUser();
    const token = await requestToken(u.email);
    for (let i = 0; i < 5; i++) {
      const res = await reset(app, { token, newPassword: 'never set this', code: `00000${i}` });
      expect(res.status).toBe(401);
    }
    const code = totpCode(u.secret, clock.now().getTime());
    expect((await reset(app, { token, newPassword: 'never set this', code })).status).toBe(404);
    expect((await loginFrom(app, u.email, u.password, loginChallenge)).status).toBe(200);
  });

  it('allows 5 requests an hour per address, known or not, then 429 with Retry-After (D54)', async () => {
    const u = await signupUser(app);
    const nobody = uniqueEmail('limit');
    for (const email of [u.email, nobody]) {
      for (let i = 0; i < 5; i++) expect((await forgot(app, email)).status).toBe(202);
      clock.advance(60_000);
      const refused = await forgot(app, email);
      expect(refused.status).toBe(429);
      expect(refused.error.code).toBe('RATE_LIMIT');
      expect(Number(refused.headers.get('retry-after'))).toBe(HOUR / 1000 - 60);
    }
    clock.advance(HOUR - 60_000);
    expect((await forgot(app, u.email)).status).toBe(202);
  });

  it('allows 5 requests an hour per client address, then 429 with Retry-After (D54)', async () => {
    const ip = freshIp();
    for (let i = 0; i < 5; i++) expect((await forgot(app, uniqueEmail('ip'), ip)).status).toBe(202);
    const refused = await forgot(app, uniqueEmail('ip'), ip);
    expect(refused.status).toBe(429);
    expect(refused.error.code).toBe('RATE_LIMIT');
    expect(Number(refused.headers.get('retry-after'))).toBe(HOUR / 1000);
    expect((await forgot(app, uniqueEmail('ip'), freshIp())).status).toBe(202);
    clock.advance(HOUR);
    expect((await forgot(app, uniqueEmail('ip'), ip)).status).toBe(202);
  });
});

describe(`password reset without SMTP, and the admin command (D54, D3, ${dialectName})`, () => {
  it('logs no link without SMTP_URL and issues none; the admin prints a one-hour link instead', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-reset-'));
    const pg = process.env.TEST_DATABASE_URL ? await freshPgSchema() : null;
    const env: Record<string, string> = pg
      ? { DATABASE_URL: pg.url, MASTER_KEY: randomBytes(32).toString('base64') }
      : {};
    const srv = await startServer({ dataDir, env: { ...env, PUBLIC_URL } });
    const admin = (...args: string[]) =>
      spawnSync(join(repoRoot, 'node_modules', '.bin', 'tsx'), [join(repoRoot, 'server', 'src', 'admin.ts'), ...args], {
        env: { PATH: process.env.PATH, DATA_DIR: dataDir, PUBLIC_URL, ...env },
        encoding: 'utf8',
      });
    try {
      const u = await signupUser(srv);
      expect((await forgot(srv, u.email)).status).toBe(202);
      await expect.poll(() => srv.logs(), { timeout: 15_000 }).toContain('admin -- reset-link');
      expect(srv.logs()).not.toMatch(/reset-password\?token=/);

      const first = admin('reset-link', u.email.toUpperCase());
      expect(first.stderr).toBe('');
      expect(first.status).toBe(0);
      const firstToken = [...first.stdout.matchAll(linkPattern)][0]![1]!;
      const second = admin('reset-link', u.email);
      const token = [...second.stdout.matchAll(linkPattern)][0]![1]!;
      expect(second.stdout).toContain('valid for one hour');
      expect(second.stdout).not.toContain(u.password);

      expect((await reset(srv, { token: firstToken, newPassword: 'set by the operator link' })).status).toBe(404);
      expect((await reset(srv, { token, newPassword: 'set by the operator link' })).status).toBe(204);
      expect((await loginFrom(srv, u.email, 'set by the operator link')).status).toBe(200);
      expect((await reset(srv, { token, newPassword: 'set by the operator link' })).status).toBe(404);

      const unknown = admin('reset-link', 'nobody@example.test');
      expect(unknown.status).toBe(1);
      expect(unknown.stdout).toContain('no account');
      expect(admin('reset-link').status).toBe(1);
    } finally {
      await srv.stop();
      await pg?.drop();
    }
  });
});

const redisUrl = await redisForTests();

describe.skipIf(!redisUrl)('forgot-password limits shared through Redis (D54, D2)', () => {
  it('counts requests for one address on two instances together', async () => {
    const clock = new ManualClock();
    const env = { REDIS_URL: redisUrl!, REDIS_KEY_PREFIX: testRedisPrefix(), TRUST_PROXY: 'true' };
    const a = await startApp({ clock, env });
    const b = await startApp({ clock, env });
    try {
      const email = uniqueEmail('shared');
      for (let i = 0; i < 5; i++) expect((await forgot(i % 2 ? a : b, email)).status).toBe(202);
      expect((await forgot(a, email)).status).toBe(429);
      expect((await forgot(b, email)).status).toBe(429);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
