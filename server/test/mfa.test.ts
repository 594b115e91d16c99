import { backupCodesResponse, mfaSetupResponse, verifyMfaResponse } from '@svcenv/contract';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import { loginFrom, totpCode } from './account-helpers.js';
import {
  createProject,
  createToken,
  dialectName,
  loginChallenge,
  loginSession,
  signupUser,
  startApp,
  type TestApp,
} from './harness.js';

const STEP = 30_000;

describe(`two-factor authentication (${dialectName})`, () => {
  let app: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    // TRUST_PROXY: each login comes "from" its own address, so the per-IP limit (tested elsewhere) stays out of the way.
    app = await startApp({ clock, env: { TRUST_PROXY: 'true' } });
  });
  afterAll(() => app.stop());
  // Each test starts 10 s into a fresh TOTP step, the clock only moving forward.
  beforeEach(() => {
    const now = clock.now().getTime();
    clock.set(new Date((Math.floor(now / STEP) + 2) * STEP + 10_000));
  });

  const now = () => clock.now().getTime();

  async function setup(jwt: string) {
    const res = await app.request('POST', '/v1/me/mfa/setup', { token: jwt, schema: mfaSetupResponse });
    expect(res.status, res.text).toBe(200);
    return res.body;
  }

  /** A user with two-factor on: their secret, backup codes and password. */
  async function mfaUser() {
    const u = await signupUser(app);
    const { secret } = await setup(u.jwt);
    const res = await app.request('POST', '/v1/me/mfa/enable', {
      token: u.jwt,
      body: { code: totpCode(secret, now()) },
      schema: backupCodesResponse,
    });
    expect(res.status, res.text).toBe(200);
    // The enabling code's step is used up (D13): later logins in the test use the next step.
    clock.advance(STEP);
    return { ...u, secret, backupCodes: res.body.backupCodes };
  }

  async function mfaToken(u: { email: string; password: string }) {
    const res = await loginFrom(app, u.email, u.password, loginChallenge);
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['mfaRequired', 'mfaToken']);
    expect(res.body.mfaRequired).toBe(true);
    return res.body.mfaToken;
  }

  const verify = (token: string, code: string) =>
    app.request('POST', '/v1/auth/verify-mfa', { body: { mfaToken: token, code }, schema: verifyMfaResponse });

  async function audit(userId: string) {
    await app.deps.auditBatcher.drain();
    return app.db.db.selectFrom('audit_logs').selectAll().where('actor_id', '=', userId).orderBy('id').execute();
  }

  it('sets up a base32 SHA-1/30 s/6-digit secret, stored sealed and not yet enabled (D12, D13)', async () => {
    const u = await signupUser(app);
    const { secret, otpauthUrl } = await setup(u.jwt);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const url = new URL(otpauthUrl);
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(decodeURIComponent(url.pathname)).toBe(`/svcenv:${u.email}`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      secret,
      issuer: 'svcenv',
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });
    const row = await app.db.db
      .selectFrom('users')
      .select(['mfa_secret_sealed', 'mfa_enabled'])
      .where('id', '=', u.user.id)
      .executeTakeFirstOrThrow();
    expect(row.mfa_enabled).toBe(0);
    expect(row.mfa_secret_sealed).toMatch(/^v1\./);
    expect(row.mfa_secret_sealed).not.toContain(secret);
    // Not enabled yet: login still answers with a session.
    const login = await loginFrom(app, u.email, u.password, loginSession);
    expect(login.status).toBe(200);
    expect(login.body.token).toMatch(/^eyJ/);
    // Setting up again replaces the pending secret; the old one no longer enables.
    const again = await setup(u.jwt);
    expect(again.secret).not.toBe(secret);
    const stale = await app.request('POST', '/v1/me/mfa/enable', {
      token: u.jwt,
      body: { code: totpCode(secret, now()) },
    });
    expect(stale.status).toBe(401);
  });

  it('enables with a current code: 10 single-display backup codes stored hashed, older sessions ended (D9)', async () => {
    const u = await signupUser(app);
    const { secret } = await setup(u.jwt);
    const wrongCode = totpCode(secret, now() + 10 * STEP);
    const wrong = await app.request('POST', '/v1/me/mfa/enable', { token: u.jwt, body: { code: wrongCode } });
    expect(wrong.status).toBe(401);
    expect(wrong.error).toEqual({ code: 'UNAUTHORIZED', message: expect.any(String), field: '' });
    const ok = await app.request('POST', '/v1/me/mfa/enable', {
      token: u.jwt,
      body: { code: totpCode(secret, now()) },
      schema: backupCodesResponse,
    });
    expect(ok.status).toBe(200);
    const codes = ok.body.backupCodes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}$/);
    const stored = await app.db.db
      .selectFrom('mfa_backup_codes')
      .select('code_hash')
      .where('user_id', '=', u.user.id)
      .execute();
    expect(stored).toHaveLength(10);
    const dump = JSON.stringify(stored);
    for (const c of codes) {
      expect(dump).not.toContain(c);
      expect(dump).not.toContain(c.replaceAll('-', ''));
    }
    // D9: the session that enabled two-factor, like every older one, is over.
    expect((await app.request('GET', '/v1/me', { token: u.jwt })).status).toBe(401);
    // Already on: setup and enable are conflicts, not a silent secret swap.
    const fresh = await verify(await mfaToken(u), totpCode(secret, now() + STEP));
    expect(fresh.status).toBe(200);
    expect((await app.request('POST', '/v1/me/mfa/setup', { token: fresh.body.token })).status).toBe(409);
    const twice = await app.request('POST', '/v1/me/mfa/enable', {
      token: fresh.body.token,
      body: { code: totpCode(secret, now() + 2 * STEP) },
    });
    expect(twice.status).toBe(409);
    const actions = (await audit(u.user.id)).map((a) => a.action);
    expect(actions).toContain('mfa.enable');
    expect(actions).toContain('auth.mfa_failed');
  });

  it('login answers mfaRequired; the mfaToken is refused everywhere but verify-mfa (spec Login, Session)', async () => {
    const u = await mfaUser();
    const token = await mfaToken(u);
    expect(token).not.toMatch(/^eyJ/);
    const project = await createProject(app, (await verify(await mfaToken(u), totpCode(u.secret, now()))).body.token);
    for (const [method, path] of [
      ['GET', '/v1/auth/session'],
      ['GET', '/v1/me'],
      ['GET', '/v1/me/workspaces'],
      ['POST', '/v1/me/mfa/setup'],
      ['GET', '/v1/projects'],
      ['GET', `/v1/projects/${project.id}/envs/dev/vars`],
      ['GET', `/v1/projects/${project.id}/envs/dev/pull`],
      ['GET', '/v1/tokens'],
      ['POST', '/v1/auth/resend-verification'],
    ] as const) {
      const res = await app.request(method, path, { token });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.error.code).toBe('UNAUTHORIZED');
    }
    // Still usable afterwards with the next code: a refused use elsewhere does not spend it.
    clock.advance(STEP);
    const ok = await verify(token, totpCode(u.secret, now()));
    expect(ok.status).toBe(200);
    expect(ok.body.token).toMatch(/^eyJ/);
    expect(ok.body.user).toMatchObject({ id: u.user.id, wsRole: 'Owner' });
    expect((await app.request('GET', '/v1/auth/session', { token: ok.body.token })).status).toBe(200);
    // One mfaToken, one session.
    clock.advance(STEP);
    expect((await verify(token, totpCode(u.secret, now()))).status).toBe(401);
    const logins = (await audit(u.user.id)).filter((a) => a.action === 'auth.login');
    expect(logins.at(-1)!.detail).toBe(JSON.stringify({ mfa: 'totp' }));
  });

  it('refuses a replayed TOTP code, and codes of steps before the last accepted one (D13)', async () => {
    const u = await mfaUser();
    const code = totpCode(u.secret, now());
    expect((await verify(await mfaToken(u), code)).status).toBe(200);
    const replay = await verify(await mfaToken(u), code);
    expect(replay.status).toBe(401);
    expect(replay.error.code).toBe('UNAUTHORIZED');
    // The person is told the code was used and to wait for the next one, not that it is wrong.
    expect(replay.error.message).toMatch(/already used; wait for the next code/);
    const wrong = await verify(await mfaToken(u), code === '000000' ? '111111' : '000000');
    expect(wrong.error.message).toBe('invalid two-factor code');
    // Previous step: inside the window but older than the accepted one.
    expect((await verify(await mfaToken(u), totpCode(u.secret, now() - STEP))).status).toBe(401);
    expect((await verify(await mfaToken(u), totpCode(u.secret, now() + STEP))).status).toBe(200);
  });

  it('accepts the current step plus or minus one, and nothing further (D13, 90 s in all)', async () => {
    const u = await mfaUser();
    // Far enough past the enabling step that only the window, not the replay guard, can refuse t-2.
    clock.advance(3 * STEP);
    expect((await verify(await mfaToken(u), totpCode(u.secret, now() - 2 * STEP))).status).toBe(401);
    expect((await verify(await mfaToken(u), totpCode(u.secret, now() + 2 * STEP))).status).toBe(401);
    expect((await verify(await mfaToken(u), totpCode(u.secret, now() - STEP))).status).toBe(200);
    expect((await verify(await mfaToken(u), totpCode(u.secret, now() + STEP))).status).toBe(200);
    // The step boundary: 10 s into step s, a code of s-1 (up to 40 s old) is still inside the window.
    const v = await mfaUser();
    clock.advance(STEP);
    expect((await verify(await mfaToken(v), totpCode(v.secret, now() - STEP - 9_000))).status).toBe(200);
  });

  it('voids the mfaToken after 5 minutes (spec Limits, injected clock)', async () => {
    const u = await mfaUser();
    const early = await mfaToken(u);
    const late = await mfaToken(u);
    clock.advance(5 * 60_000 - 1_000);
    expect((await verify(early, totpCode(u.secret, now()))).status).toBe(200);
    // Exactly 5 minutes after issue; the next step's code would otherwise be accepted.
    clock.advance(1_000);
    const expired = await verify(late, totpCode(u.secret, now() + STEP));
    expect(expired.status).toBe(401);
    expect(expired.error.code).toBe('UNAUTHORIZED');
  });

  it('voids the mfaToken after 5 wrong codes; 4 wrong codes still allow the right one (D13)', async () => {
    const u = await mfaUser();
    const wrong = totpCode(u.secret, now() + 5 * STEP);
    const token = await mfaToken(u);
    for (let i = 0; i < 5; i++) {
      const res = await verify(token, i % 2 ? wrong : 'abcd-efgh-jkmn');
      expect(res.status).toBe(401);
      expect(res.error).toEqual({ code: 'UNAUTHORIZED', message: expect.any(String), field: '' });
    }
    const after = await verify(token, totpCode(u.secret, now()));
    expect(after.status).toBe(401);
    expect(
      await app.db.db.selectFrom('mfa_challenges').select('id').where('user_id', '=', u.user.id).execute(),
    ).toEqual([]);

    const second = await mfaToken(u);
    for (let i = 0; i < 4; i++) expect((await verify(second, wrong)).status).toBe(401);
    expect((await verify(second, totpCode(u.secret, now()))).status).toBe(200);
    const failed = (await audit(u.user.id)).filter((a) => a.action === 'auth.mfa_failed');
    expect(failed).toHaveLength(9);
  });

  it('never lets concurrent guesses exceed 5 per mfaToken', async () => {
    const u = await mfaUser();
    const token = await mfaToken(u);
    const wrong = totpCode(u.secret, now() + 7 * STEP);
    const results = await Promise.all(Array.from({ length: 12 }, () => verify(token, wrong)));
    expect(results.every((r) => r.status === 401)).toBe(true);
    const failed = (await audit(u.user.id)).filter((a) => a.action === 'auth.mfa_failed');
    expect(failed).toHaveLength(5);
  });

  it('accepts each backup code once, in any case and with or without dashes (D13)', async () => {
    const u = await mfaUser();
    const [first, second] = u.backupCodes as [string, string];
    const ok = await verify(await mfaToken(u), first.toUpperCase().replaceAll('-', ' '));
    expect(ok.status).toBe(200);
    expect((await verify(await mfaToken(u), first)).status).toBe(401);
    expect((await verify(await mfaToken(u), second.replaceAll('-', ''))).status).toBe(200);
    expect(
      await app.db.db.selectFrom('mfa_backup_codes').select('code_hash').where('user_id', '=', u.user.id).execute(),
    ).toHaveLength(8);
    const logins = (await audit(u.user.id)).filter((a) => a.action === 'auth.login');
    expect(logins.at(-1)!.detail).toBe(JSON.stringify({ mfa: 'backup' }));
  });

  it('accepts the same backup code exactly once among 50 concurrent submissions', async () => {
    const u = await mfaUser();
    const tokens = await Promise.all(Array.from({ length: 50 }, () => mfaToken(u)));
    const code = u.backupCodes[3]!;
    const results = await Promise.all(tokens.map((t) => verify(t, code)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 401)).toHaveLength(49);
    expect(
      await app.db.db.selectFrom('mfa_backup_codes').select('code_hash').where('user_id', '=', u.user.id).execute(),
    ).toHaveLength(9);
  });

  it('accepts the same TOTP code exactly once among 20 concurrent submissions', async () => {
    const u = await mfaUser();
    const tokens = await Promise.all(Array.from({ length: 20 }, () => mfaToken(u)));
    const code = totpCode(u.secret, now());
    const results = await Promise.all(tokens.map((t) => verify(t, code)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 401)).toHaveLength(19);
  });

  it('disables with a backup code: older sessions end, secret and codes are gone (D9, D12)', async () => {
    const u = await mfaUser();
    const session = (await verify(await mfaToken(u), totpCode(u.secret, now()))).body.token;
    const other = (await verify(await mfaToken(u), u.backupCodes[0]!)).body.token;
    const wrong = await app.request('POST', '/v1/me/mfa/disable', { token: session, body: { code: '000000' } });
    expect(wrong.status).toBe(401);
    // A code already used (for login) does not disable either.
    const used = await app.request('POST', '/v1/me/mfa/disable', { token: session, body: { code: u.backupCodes[0]! } });
    expect(used.status).toBe(401);
    const res = await app.request('POST', '/v1/me/mfa/disable', { token: session, body: { code: u.backupCodes[1]! } });
    expect(res.status).toBe(204);
    expect((await app.request('GET', '/v1/me', { token: session })).status).toBe(401);
    expect((await app.request('GET', '/v1/me', { token: other })).status).toBe(401);
    const row = await app.db.db
      .selectFrom('users')
      .select(['mfa_enabled', 'mfa_secret_sealed', 'mfa_last_step'])
      .where('id', '=', u.user.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ mfa_enabled: 0, mfa_secret_sealed: null, mfa_last_step: null });
    expect(
      await app.db.db.selectFrom('mfa_backup_codes').select('code_hash').where('user_id', '=', u.user.id).execute(),
    ).toEqual([]);
    const login = await loginFrom(app, u.email, u.password, loginSession);
    expect(login.status).toBe(200);
    expect(login.body.token).toMatch(/^eyJ/);
    expect(
      (await app.request('POST', '/v1/me/mfa/disable', { token: login.body.token, body: { code: '123456' } })).status,
    ).toBe(409);
    expect((await audit(u.user.id)).map((a) => a.action)).toContain('mfa.disable');
  });

  it('disables with a TOTP code', async () => {
    const u = await mfaUser();
    const session = (await verify(await mfaToken(u), totpCode(u.secret, now()))).body.token;
    clock.advance(STEP);
    const res = await app.request('POST', '/v1/me/mfa/disable', {
      token: session,
      body: { code: totpCode(u.secret, now()) },
    });
    expect(res.status).toBe(204);
  });

  it('regenerates backup codes: the new ten work, every old one is refused (D12)', async () => {
    const u = await mfaUser();
    const session = (await verify(await mfaToken(u), totpCode(u.secret, now()))).body.token;
    clock.advance(STEP);
    const res = await app.request('POST', '/v1/me/mfa/backup-codes', {
      token: session,
      body: { code: totpCode(u.secret, now()) },
      schema: backupCodesResponse,
    });
    expect(res.status).toBe(200);
    const fresh = res.body.backupCodes;
    expect(fresh).toHaveLength(10);
    expect(fresh.some((c) => u.backupCodes.includes(c))).toBe(false);
    expect((await verify(await mfaToken(u), u.backupCodes[5]!)).status).toBe(401);
    expect((await verify(await mfaToken(u), fresh[5]!)).status).toBe(200);
    // Regeneration itself needs a valid code.
    const bad = await app.request('POST', '/v1/me/mfa/backup-codes', { token: session, body: { code: '12345678' } });
    expect(bad.status).toBe(401);
  });

  it('answers bad input with 400 VALIDATION naming the field and changes nothing', async () => {
    const u = await signupUser(app);
    const { secret } = await setup(u.jwt);
    for (const body of [{}, { code: 123456 }, { code: '' }, { code: 'x'.repeat(100) }, { code: '123456', extra: 1 }]) {
      const res = await app.request('POST', '/v1/me/mfa/enable', { token: u.jwt, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error.code).toBe('VALIDATION');
      expect(res.error.field).toBeTruthy();
    }
    for (const body of [{}, { mfaToken: 'mfa_x' }, { code: '123456' }, { mfaToken: 7, code: '123456' }]) {
      const res = await app.request('POST', '/v1/auth/verify-mfa', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error.code).toBe('VALIDATION');
    }
    const garbage = await app.request('POST', '/v1/auth/verify-mfa', {
      body: { mfaToken: 'nonsense', code: '123456' },
    });
    expect(garbage.status).toBe(401);
    const row = await app.db.db
      .selectFrom('users')
      .select('mfa_enabled')
      .where('id', '=', u.user.id)
      .executeTakeFirstOrThrow();
    expect(row.mfa_enabled).toBe(0);
    expect(
      (await app.request('POST', '/v1/me/mfa/enable', { token: u.jwt, body: { code: totpCode(secret, now()) } }))
        .status,
    ).toBe(200);
  });

  it('answers an access token on the two-factor endpoints with 401 (D10)', async () => {
    const u = await signupUser(app);
    const { token } = await createToken(app, u.jwt, { scope: 'write' });
    for (const path of ['/v1/me/mfa/setup', '/v1/me/mfa/enable', '/v1/me/mfa/disable', '/v1/me/mfa/backup-codes']) {
      const res = await app.request('POST', path, {
        token,
        body: path.endsWith('setup') ? undefined : { code: '123456' },
      });
      expect(res.status, path).toBe(401);
    }
  });

  it('never writes a secret, code, backup code or mfaToken to a log line, an error body or an audit entry', async () => {
    const u = await mfaUser();
    const secrets = [u.secret, ...u.backupCodes, ...u.backupCodes.map((c) => c.replaceAll('-', ''))];
    const token = await mfaToken(u);
    const bodies: string[] = [];
    const wrong = totpCode(u.secret, now() + 9 * STEP);
    bodies.push((await verify(token, wrong)).text);
    bodies.push((await verify(token, `${u.backupCodes[0]!}x`)).text);
    const good = totpCode(u.secret, now());
    const session = (await verify(token, good)).body.token;
    bodies.push((await app.request('POST', '/v1/me/mfa/disable', { token: session, body: { code: wrong } })).text);
    bodies.push((await app.request('POST', '/v1/me/mfa/setup', { token: session })).text);
    await app.deps.auditBatcher.drain();
    const audits = JSON.stringify(await app.db.db.selectFrom('audit_logs').selectAll().execute());
    const logs = app.logs();
    for (const s of [...secrets, token, session]) {
      expect(logs).not.toContain(s);
      expect(audits).not.toContain(s);
    }
    // Six-digit codes can occur by chance in ids and timings, so they are looked for only in the error bodies.
    for (const b of bodies) for (const s of [...secrets, token, wrong, good]) expect(b).not.toContain(s);
    expect(bodies).toHaveLength(4);
    expect(logs).toContain('"path":"/v1/auth/verify-mfa"');
  });
});
