/**
 * D60's exchange, `POST /v1/auth/oidc`, with the issuer's keys already cached: the real server (a child
 * process, SQLite; PostgreSQL when TEST_DATABASE_URL is set) and a real issuer on loopback (server/test/
 * oidc-issuer.ts). Each round runs, with BENCH_CONCURRENCY requests in flight (default 10), BENCH_REQUESTS
 * requests (default 1,000) of each load, interleaved:
 *   floor:  GET /bench/floor, a constant 2 KB answer of the same server (HTTP and Fastify alone);
 *   write:  PUT of one variable by a session (one transaction with its audit row: the durable write every
 *           exchange also makes);
 *   RS256 / ES256: the exchange of a platform JWT (signature and claims checked, a token issued).
 * The exchange is limited to 60 per minute per address and identity, so each round signs in to fresh
 * identities (one per 50 requests). Figures: median over BENCH_ROUNDS rounds (default 3) of req/s and p50/p99.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { operations as ops } from '@svcenv/contract/operations';
import { createProject, freshPgSchema, signupUser, startServer, upsert } from '../server/test/harness.js';
import { startIssuer } from '../server/test/oidc-issuer.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);
const PER_IDENTITY = 50;

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
const median = (xs: number[]) => pct(xs, 50);

interface Figure {
  rps: number;
  p50: number;
  p99: number;
}

/** `n` requests, `CONCURRENCY` at a time; each must answer `status`. */
async function load(n: number, send: (i: number) => Promise<number>, status: number): Promise<Figure> {
  const ms: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        const i = next++;
        const t0 = performance.now();
        const got = await send(i);
        ms.push(performance.now() - t0);
        if (got !== status) throw new Error(`request ${i}: ${got}, expected ${status}`);
      }
    }),
  );
  return { rps: n / ((performance.now() - started) / 1000), p50: pct(ms, 50), p99: pct(ms, 99) };
}

async function bench(dialect: string, databaseUrl?: string) {
  const issuer = await startIssuer();
  const srv = await startServer({
    env: {
      BENCH_FLOOR_ROUTE: 'true',
      DEFAULT_PLAN: 'enterprise',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      LOG_LEVEL: 'warn',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl, MASTER_KEY: randomBytes(32).toString('base64') } : {}),
    },
  });
  try {
    const { jwt } = await signupUser(srv, 'Bench');
    const p = await createProject(srv, jwt, { name: 'bench' });
    await upsert(srv, jwt, p.id, ['dev'], [{ key: 'K', value: 'v', type: 'plain' }]);
    const exp = Math.floor(Date.now() / 1000) + 3_600;
    const platform = {
      RS256: await issuer.sign(
        { iss: issuer.url, aud: 'svcenv', sub: 'repo:acme/app:ref:main', exp },
        { alg: 'RS256' },
      ),
      ES256: await issuer.sign(
        { iss: issuer.url, aud: 'svcenv', sub: 'repo:acme/app:ref:main', exp },
        { alg: 'ES256' },
      ),
    };
    const identities = async () => {
      const ids: string[] = [];
      for (let i = 0; i < Math.ceil(REQUESTS / PER_IDENTITY); i++) {
        const res = await srv.call(
          ops.createIdentity,
          {
            body: {
              name: `bench-${randomBytes(4).toString('hex')}`,
              issuer: issuer.url,
              audience: 'svcenv',
              subject: 'repo:acme/*',
              envs: ['dev'],
              projectId: p.id,
            },
          },
          jwt,
        );
        if (res.status !== 201) throw new Error(`create identity: ${res.status} ${res.text}`);
        ids.push(res.body.id);
      }
      return ids;
    };
    // Warm the key cache (and the JIT) once.
    const [warm] = await identities();
    await srv.call(ops.oidcLogin, { body: { identity: warm!, token: platform.RS256 } });
    const fetchesBefore = issuer.counts.jwks;

    const runs: Record<string, Figure[]> = { floor: [], write: [], RS256: [], ES256: [] };
    for (let r = 0; r < ROUNDS; r++) {
      runs.floor!.push(await load(REQUESTS, async () => (await srv.request('GET', '/bench/floor')).status, 200));
      runs.write!.push(
        await load(
          REQUESTS,
          async (i) =>
            (
              await srv.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/K`, {
                token: jwt,
                body: { value: `v${r}-${i}` },
              })
            ).status,
          200,
        ),
      );
      for (const alg of ['RS256', 'ES256'] as const) {
        const ids = await identities();
        runs[alg]!.push(
          await load(
            REQUESTS,
            async (i) =>
              (
                await srv.call(ops.oidcLogin, {
                  body: { identity: ids[Math.floor(i / PER_IDENTITY)]!, token: platform[alg] },
                })
              ).status,
            201,
          ),
        );
      }
    }
    const floor = median(runs.floor!.map((f) => f.rps));
    console.log(`\n${dialect}: ${ROUNDS} rounds x ${REQUESTS} requests, ${CONCURRENCY} in flight (medians)`);
    for (const [name, figs] of Object.entries(runs)) {
      const rps = median(figs.map((f) => f.rps));
      console.log(
        `${name.padEnd(8)} ${rps.toFixed(0).padStart(7)} req/s  p50 ${median(figs.map((f) => f.p50))
          .toFixed(1)
          .padStart(6)} ms  p99 ${median(figs.map((f) => f.p99))
          .toFixed(1)
          .padStart(6)} ms  ${((rps / floor) * 100).toFixed(0).padStart(4)}% of floor`,
      );
    }
    console.log(`JWKS fetches during the exchanges: ${issuer.counts.jwks - fetchesBefore} (warm cache: 0)`);
  } finally {
    await srv.stop();
    await issuer.stop();
  }
}

await bench('sqlite');
if (process.env.TEST_DATABASE_URL) {
  const pg = await freshPgSchema();
  try {
    await bench('postgres', pg.url);
  } finally {
    await pg.drop();
  }
}
