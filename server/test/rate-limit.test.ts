import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import { clientKey } from '../src/lib/rate-limit.js';
import { RESEND_PER_USER } from '../src/services/identity/limits.js';
import { loginFrom, redisForTests, testRedisPrefix } from './account-helpers.js';
import {
  dialectName,
  freePort,
  freshPgSchema,
  loginSession,
  type Res,
  type ServerProcess,
  signupUser,
  startApp,
  startServer,
  TEST_DATABASE_URL,
  type TestApp,
} from './harness.js';

const login = (app: TestApp | ServerProcess, body: unknown, headers: Record<string, string> = {}) =>
  app.request('POST', '/v1/auth/login', { body, headers, schema: loginSession });

function expectRateLimited(res: Res, maxSeconds: number) {
  expect(res.status).toBe(429);
  expect(res.error).toEqual({ code: 'RATE_LIMIT', message: expect.any(String), field: '' });
  const retry = Number(res.headers.get('retry-after'));
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(maxSeconds);
  return retry;
}

describe(`login rate limit per client address (${dialectName})`, () => {
  let app: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    app = await startApp({ clock });
  });
  afterAll(() => app.stop());

  it('refuses the 11th login within a minute with 429 and Retry-After; a forged X-Forwarded-For does not help (D14)', async () => {
    const u = await signupUser(app);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const body = i % 3 === 0 ? { email: u.email, password: u.password } : { email: u.email, password: 'wrong-pass' };
      statuses.push((await login(app, body, { 'x-forwarded-for': `203.0.113.${i}` })).status);
      clock.advance(1_000);
    }
    expect(statuses).toEqual([200, 401, 401, 200, 401, 401, 200, 401, 401, 200]);
    // Without TRUST_PROXY the socket address counts, whatever the header claims.
    const eleventh = await login(app, { email: u.email, password: u.password }, { 'x-forwarded-for': '203.0.113.99' });
    expect(expectRateLimited(eleventh, 60)).toBe(50);
    // Malformed requests count too, and are refused before their body is even looked at.
    expect(
      (await app.request('POST', '/v1/auth/login', { rawBody: '{', headers: { 'content-type': 'application/json' } }))
        .status,
    ).toBe(429);

    // Sliding window: the first hit leaves it 60 s after it was made, and one more login fits.
    clock.advance(49_000);
    expect(expectRateLimited(await login(app, { email: u.email, password: u.password }), 1)).toBe(1);
    clock.advance(1_000);
    expect((await login(app, { email: u.email, password: u.password })).status).toBe(200);
    expect((await login(app, { email: u.email, password: u.password })).status).toBe(429);
    // Other endpoints are not limited (spec: no hard limit).
    expect((await app.request('GET', '/healthz')).status).toBe(200);
    expect((await app.request('POST', '/v1/auth/signup', { body: {} })).status).toBe(400);
    clock.advance(60_000);
  });
});

describe(`login rate limit behind a trusted proxy, and per account (${dialectName})`, () => {
  let app: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    app = await startApp({ clock, env: { TRUST_PROXY: 'true' } });
  });
  afterAll(() => app.stop());

  it('counts the address the proxy appended, not the one the client wrote (D4, D14)', async () => {
    const u = await signupUser(app);
    const body = { email: u.email, password: u.password };
    for (let i = 0; i < 10; i++) {
      // The left-most entry is whatever the client sent; the proxy appended the real address last.
      expect((await login(app, body, { 'x-forwarded-for': `10.${i}.0.1, 192.0.2.10` })).status).toBe(200);
    }
    expectRateLimited(await login(app, body, { 'x-forwarded-for': '10.99.0.1, 192.0.2.10' }), 60);
    expect((await login(app, body, { 'x-forwarded-for': '192.0.2.11' })).status).toBe(200);
  });

  it('counts an IPv6 client by its /64', async () => {
    const u = await signupUser(app);
    const body = { email: u.email, password: u.password };
    for (let i = 0; i < 10; i++) {
      expect((await login(app, body, { 'x-forwarded-for': `2001:db8:1:2::${i.toString(16)}` })).status).toBe(200);
    }
    expectRateLimited(await login(app, body, { 'x-forwarded-for': '2001:db8:1:2:ffff:1:2:3' }), 60);
    expect((await login(app, body, { 'x-forwarded-for': '2001:db8:1:3::1' })).status).toBe(200);
    expect(clientKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(clientKey('2001:db8::1')).toBe('2001:0db8:0000:0000::/64');
  });

  it('locks an account for the rest of the hour after 100 wrong passwords from rotating addresses', async () => {
    const u = await signupUser(app);
    for (let i = 0; i < 100; i++) {
      expect((await loginFrom(app, u.email, `wrong-${i}`)).status).toBe(401);
      clock.advance(10_000);
    }
    // 1,000 s in: even the right password is refused until the first failure is an hour old.
    const locked = await loginFrom(app, u.email, u.password);
    expect(expectRateLimited(locked, 3600)).toBe(2600);
    // Other accounts, from the same addresses, are unaffected.
    const other = await signupUser(app);
    expect((await loginFrom(app, other.email, other.password)).status).toBe(200);
    clock.advance(2_600_000);
    expect((await loginFrom(app, u.email, u.password)).status).toBe(200);
  });

  it('treats an unknown email exactly like a known one, so the lock reveals no account', async () => {
    const nobody = `nobody-${randomBytes(4).toString('hex')}@example.test`;
    for (let i = 0; i < 100; i++) expect((await loginFrom(app, nobody, 'whatever-pw')).status).toBe(401);
    expectRateLimited(await loginFrom(app, nobody, 'whatever-pw'), 3600);
    clock.advance(3_600_000);
  });
});

describe('login rate limit when Redis is unreachable', () => {
  let app: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    // A port nothing listens on: the limiter falls back to counting in this process.
    app = await startApp({ clock, env: { REDIS_URL: `redis://127.0.0.1:${await freePort()}` } });
  });
  afterAll(() => app.stop());

  it('keeps limiting in memory, with no 500 and a warning in the log', async () => {
    const u = await signupUser(app);
    for (let i = 0; i < 10; i++) expect((await login(app, { email: u.email, password: u.password })).status).toBe(200);
    expectRateLimited(await login(app, { email: u.email, password: u.password }), 60);
    expect(app.logs()).toContain('rate-limit store (Redis) unavailable');
  });
});

const redisUrl = await redisForTests();

describe.skipIf(!redisUrl)('login rate limit shared through Redis (D2, D14)', () => {
  const prefix = testRedisPrefix();
  const clock = new ManualClock();
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const env = { REDIS_URL: redisUrl!, REDIS_KEY_PREFIX: prefix };
    a = await startApp({ clock, env });
    b = await startApp({ clock, env });
  });
  afterAll(async () => {
    await a.stop();
    await b.stop();
  });

  it('counts logins on two instances together; the window follows the injected clock', async () => {
    const ua = await signupUser(a);
    const ub = await signupUser(b);
    for (let i = 0; i < 10; i++) {
      const [app, u] = i % 2 ? [a, ua] : [b, ub];
      expect((await login(app, { email: u.email, password: u.password })).status).toBe(200);
      clock.advance(1_000);
    }
    expect(expectRateLimited(await login(a, { email: ua.email, password: ua.password }), 60)).toBe(50);
    expectRateLimited(await login(b, { email: ub.email, password: ub.password }), 60);
    clock.advance(50_000);
    expect((await login(b, { email: ub.email, password: ub.password })).status).toBe(200);
  });

  it('shares the resend-verification limit too (D11)', async () => {
    const u = await signupUser(a);
    expect((await a.request('POST', '/v1/auth/resend-verification', { token: u.jwt })).status).toBe(202);
    expectRateLimited(await a.request('POST', '/v1/auth/resend-verification', { token: u.jwt }), 60);
    // The other instance sees the same count (it has its own database, so it is asked directly).
    expect((await b.deps.limiter.peek(u.user.id, RESEND_PER_USER)).allowed).toBe(false);
    clock.advance(60_000);
    expect((await b.deps.limiter.peek(u.user.id, RESEND_PER_USER)).allowed).toBe(true);
  });
});

describe.skipIf(!redisUrl || !TEST_DATABASE_URL)('two server processes on one PostgreSQL and Redis (D2, D14)', () => {
  const servers: ServerProcess[] = [];
  let dropSchema: () => Promise<void> = async () => {};
  beforeAll(async () => {
    const schema = await freshPgSchema();
    dropSchema = schema.drop;
    const env = {
      DATABASE_URL: schema.url,
      MASTER_KEY: randomBytes(32).toString('base64'),
      REDIS_URL: redisUrl!,
      REDIS_KEY_PREFIX: testRedisPrefix(),
      LOG_LEVEL: 'warn',
    };
    // One at a time: both would otherwise race to run the migrations.
    servers.push(await startServer({ env }));
    servers.push(await startServer({ env }));
  });
  afterAll(async () => {
    for (const s of servers) await s.stop();
    await dropSchema();
  });

  it('refuses the 11th login within a minute spread over both instances', async () => {
    const [one, two] = servers as [ServerProcess, ServerProcess];
    const u = await signupUser(one);
    const body = { email: u.email, password: u.password };
    const sessions: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await login(i % 2 ? two : one, body);
      expect(res.status, `login ${i + 1}`).toBe(200);
      sessions.push(res.body.token);
    }
    // The two really are one service: a session from one is valid on the other.
    expect((await two.request('GET', '/v1/me', { token: sessions[0] })).status).toBe(200);
    expectRateLimited(await login(one, body), 60);
    expectRateLimited(await login(two, body), 60);
  });
});
