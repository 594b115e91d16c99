/**
 * References across environments (D49, ADR 0017). The real server (SQLite, default settings) on loopback,
 * driven by autocannon with 10 connections, in interleaved rounds (medians), beside floors of the same run:
 *   1. floor: GET /bench/floor (a constant 2 KB text);
 *   2. plain pull: 100 variables of which 20 reference a variable of the same environment (the floor of 3);
 *   3. cross pull: 100 variables of which 20 reference `${staging.KEY}` and `${prod.KEY}` (cache hit: each
 *      pull checks the revisions of both environments and the reader's permission on them);
 *   4. after a change (cache miss): the latency of one pull right after a write to a referenced environment,
 *      beside one right after a write to the pulled environment of the plain project, and a cache hit
 *      (sequential, BENCH_MISSES times each, medians).
 * Target: the cross pull within 10% of the plain pull.
 */
import { existsSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { createProject, createToken, signupUser, startServer, upsert } from '../server/test/harness.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MISSES = Number(process.env.BENCH_MISSES ?? 50);
const CONNECTIONS = 10;

let serverPid = 0;
/** Server process CPU time (user + system, all threads) in µs; NaN where /proc is missing. */
function serverCpuMicros(): number {
  const stat = `/proc/${serverPid}/stat`;
  if (!existsSync(stat)) return Number.NaN;
  const fields = readFileSync(stat, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

async function load(url: string, headers: Record<string, string> = {}) {
  const cpu0 = serverCpuMicros();
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers });
  if (r.non2xx > 0) throw new Error(`${url}: ${r.non2xx} non-2xx responses`);
  return { rps: r.requests.average, p99: r.latency.p99, cpu: (serverCpuMicros() - cpu0) / r.requests.total };
}
type Load = Awaited<ReturnType<typeof load>>;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (x: number) => `${(x * 100).toFixed(0)}%`;

const secret = (i: number) => (i % 2 ? 'plain' : 'secret');
const filler = (n: number, from: number) =>
  Array.from({ length: n }, (_, i) => ({
    key: `VAR_${from + i}`,
    value: `value-${from + i}-${'x'.repeat(20)}`,
    type: secret(i),
  }));

const srv = await startServer({ env: { DEFAULT_PLAN: 'enterprise', BENCH_FLOOR_ROUTE: 'true', LOG_LEVEL: 'warn' } });
serverPid = srv.child.pid!;
try {
  const { jwt } = await signupUser(srv, 'Bench');
  // Plain: 20 references into the same environment.
  const plain = await createProject(srv, jwt, { name: 'plain', envs: ['dev'] });
  await upsert(
    srv,
    jwt,
    plain.id,
    ['dev'],
    [
      ...Array.from({ length: 20 }, (_, i) => ({
        key: `REF_${i}`,
        value: `a-\${VAR_${i}}-b-\${VAR_${i + 20}}-c`,
        type: secret(i),
      })),
      ...filler(80, 0),
    ],
  );
  // Cross: the same 20 references, into two other environments.
  const cross = await createProject(srv, jwt, { name: 'cross', envs: ['dev', 'staging', 'prod'] });
  await upsert(srv, jwt, cross.id, ['staging', 'prod'], filler(100, 0));
  await upsert(
    srv,
    jwt,
    cross.id,
    ['dev'],
    [
      ...Array.from({ length: 20 }, (_, i) => ({
        key: `REF_${i}`,
        value: `a-\${staging.VAR_${i}}-b-\${prod.VAR_${i + 20}}-c`,
        type: secret(i),
      })),
      ...filler(80, 0),
    ],
  );
  const { token } = await createToken(srv, jwt, { scope: 'read' });
  const auth = { authorization: `Bearer ${token}` };
  const url = (p: { id: string }) => `${srv.url}/v1/projects/${p.id}/envs/dev/pull`;
  for (const p of [plain, cross]) {
    const r = await srv.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token });
    if (r.status !== 200 || !r.text.includes('REF_19=a-value-')) throw new Error(`pull failed: ${r.status} ${r.text}`);
  }

  const loads: Record<string, () => Promise<Load>> = {
    floor: () => load(`${srv.url}/bench/floor`),
    plain: () => load(url(plain), auth),
    cross: () => load(url(cross), auth),
  };
  for (const run of Object.values(loads)) await run(); // warm-up: JIT, caches
  const runs: Record<string, Load[]> = { floor: [], plain: [], cross: [] };
  // The order of the two pulls alternates between rounds: the audit rows each load appends grow the WAL
  // the next one pays for (checkpoints), which would otherwise always fall on the same one.
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? ['floor', 'cross', 'plain'] : ['floor', 'plain', 'cross'];
    for (const name of order) runs[name]!.push(await loads[name]!());
  }
  const fig = (name: string) => {
    const rs = runs[name]!;
    return {
      rps: median(rs.map((x) => x.rps)),
      p99: median(rs.map((x) => x.p99)),
      cpu: median(rs.map((x) => x.cpu)),
      ofFloor: median(rs.map((x, i) => x.rps / runs.floor![i]!.rps)),
      ofPlain: rs.map((x, i) => x.rps / runs.plain![i]!.rps),
    };
  };

  // Cache misses: one pull after each write, timed alone.
  const timed = async (p: { id: string }) => {
    const t = process.hrtime.bigint();
    const r = await fetch(url(p), { headers: auth });
    await r.text();
    if (r.status !== 200) throw new Error(`pull answered ${r.status}`);
    return Number(process.hrtime.bigint() - t) / 1e6;
  };
  const put = (p: { id: string }, env: string, key: string, value: string) =>
    srv.request('PUT', `/v1/projects/${p.id}/envs/${env}/vars/${key}`, { token: jwt, body: { value } });
  const hit: number[] = [];
  const plainMiss: number[] = [];
  const crossMiss: number[] = [];
  for (let i = 0; i < MISSES; i++) {
    await put(plain, 'dev', 'VAR_0', `changed-${i}`);
    plainMiss.push(await timed(plain));
    await put(cross, 'staging', 'VAR_0', `changed-${i}`);
    crossMiss.push(await timed(cross));
    hit.push(await timed(cross));
  }

  console.log(
    `references benchmark: ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${DURATION} s, SQLite (WAL, synchronous=FULL)`,
  );
  const row = (label: string, name: string) => {
    const f = fig(name);
    return `${label.padEnd(52)} ${f.rps.toFixed(0).padStart(7)} req/s   p99 ${String(f.p99).padStart(3)} ms   ${pct(f.ofFloor).padStart(4)} of floor   server CPU ${f.cpu.toFixed(0).padStart(4)} µs/req`;
  };
  console.log(row('floor: constant 2 KB text', 'floor'));
  console.log(row('plain pull: 100 vars, 20 same-environment refs', 'plain'));
  console.log(row('cross pull: 100 vars, 20 refs into 2 other envs (hit)', 'cross'));
  const rel = fig('cross').ofPlain;
  console.log(
    `cross pull vs plain pull: ${pct(median(rel))} (rounds: ${rel.map(pct).join(', ')}); server CPU per pull ${pct(fig('cross').cpu / fig('plain').cpu)} of the plain pull's`,
  );
  const ms = (xs: number[]) => `median ${median(xs).toFixed(2)} ms`;
  console.log(`one pull after a write (sequential, ${MISSES} each):`);
  console.log(`  cross pull, cache hit                                   ${ms(hit)}`);
  console.log(`  plain pull after a write to its own environment (miss)  ${ms(plainMiss)}`);
  console.log(`  cross pull after a write to a referenced one (miss)     ${ms(crossMiss)}`);
  console.log('target: cross pull (hit) within 10% of the plain pull');
} finally {
  await srv.stop();
}
