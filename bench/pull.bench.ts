/**
 * Pull throughput (issue: server core). The real server (SQLite, default settings) on loopback, driven by
 * autocannon with 10 connections, beside GET /bench/floor on the same server (a constant 2 KB text):
 *   1. floor; 2. pull of 100 variables (10 with references) by an access token; 3. conditional pull (304);
 *   4. the same pull after seeding 1,000 other projects of 100 variables each.
 */
import autocannon from 'autocannon';
import { createProject, createToken, signupUser, startServer, upsert } from '../server/test/harness.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = 10;

async function load(url: string, headers: Record<string, string> = {}) {
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers });
  if (r.non2xx > 0 && !headers['if-none-match']) throw new Error(`${url}: ${r.non2xx} non-2xx responses`);
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    statuses: { '2xx': r['2xx'], '3xx': r['3xx'], non2xx: r.non2xx },
  };
}

function vars(n: number, refs: number) {
  return Array.from({ length: n }, (_, i) => ({
    key: `VAR_${i}`,
    value: i < refs ? `prefix-\${VAR_${i + refs}}-suffix` : `value-${i}-${'x'.repeat(20)}`,
    type: i % 2 ? 'plain' : 'secret',
  }));
}

const row = (name: string, r: { rps: number; p99: number }, floor: { rps: number }) =>
  `${name.padEnd(34)} ${r.rps.toFixed(0).padStart(8)} req/s   p99 ${String(r.p99).padStart(4)} ms   ${((r.rps / floor.rps) * 100).toFixed(0).padStart(4)}% of floor`;

const srv = await startServer({ env: { DEFAULT_PLAN: 'enterprise', BENCH_FLOOR_ROUTE: 'true', LOG_LEVEL: 'warn' } });
try {
  const { jwt } = await signupUser(srv, 'Bench');
  const p = await createProject(srv, jwt, { name: 'bench' });
  await upsert(srv, jwt, p.id, ['dev'], vars(100, 10));
  const { token } = await createToken(srv, jwt, { scope: 'read' });
  const pullUrl = `${srv.url}/v1/projects/${p.id}/envs/dev/pull`;
  const auth = { authorization: `Bearer ${token}` };
  const first = await srv.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token });
  if (first.status !== 200) throw new Error(`pull failed: ${first.status} ${first.text}`);
  const etag = first.headers.get('etag')!;

  await load(`${srv.url}/bench/floor`); // warm-up
  const floor = await load(`${srv.url}/bench/floor`);
  const pull = await load(pullUrl, auth);
  const notModified = await load(pullUrl, { ...auth, 'if-none-match': etag });
  if (notModified.statuses['3xx'] === 0) throw new Error('conditional pull did not answer 304');

  const started = Date.now();
  for (let i = 0; i < 1000; i++) {
    const other = await createProject(srv, jwt, { name: `other-${i}`, envs: ['dev'] });
    await upsert(srv, jwt, other.id, ['dev'], vars(100, 0));
  }
  const seedS = ((Date.now() - started) / 1000).toFixed(0);
  const floorBig = await load(`${srv.url}/bench/floor`);
  const pullBig = await load(pullUrl, auth);

  console.log(`pull benchmark: ${CONNECTIONS} connections, ${DURATION} s each, SQLite (WAL, synchronous=FULL)`);
  console.log(row('floor: constant 2 KB text', floor, floor));
  console.log(row('pull, 100 vars (10 references)', pull, floor));
  console.log(row('conditional pull (304)', notModified, floor));
  console.log(`-- after seeding 1,000 projects x 100 variables (${seedS} s) --`);
  console.log(row('floor: constant 2 KB text', floorBig, floorBig));
  console.log(row('pull, 100 vars (10 references)', pullBig, floorBig));
  console.log(
    `pull with a 100,000-variable database vs an empty one: ${((pullBig.rps / floorBig.rps / (pull.rps / floor.rps)) * 100).toFixed(0)}% (ratio of ratios)`,
  );
  console.log('targets: pull >= 50% of floor, 304 >= 80% of floor, no slowdown with database size');
} finally {
  await srv.stop();
}
