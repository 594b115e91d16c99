/**
 * Pull throughput. The real server (SQLite, default settings) in its own process on loopback, driven by
 * autocannon with 10 connections, beside the floor: a bare `node:http` server in another process of its own,
 * answering the same bytes as the pull (what a client sees of the fastest possible server on this machine):
 *   1. floor; 2. pull of 100 variables (10 with references) by an access token; 3. conditional pull (304);
 *   4. GET /bench/floor of the svcenv server itself (a constant 2 KB text: the framework's own cost);
 *   5. the same pull after seeding BENCH_SEED (default 1,000) other projects of 100 variables each.
 * The floor used to be (4), a route of the same server: every cost the server adds to each request (hooks,
 * logging, metrics) then lowered the floor as much as the pull, and the ratio hid it.
 * The machine is shared and its disk's fsync latency drifts (every pull waits for one), so the loads run
 * in interleaved rounds (floor, pull, 304, floor, pull, 304, ...) and each figure is the median of its
 * rounds; a ratio is the median of the per-round ratios, each against the floor of its own round.
 * Beside req/s each load reports the server process's CPU time per request (all its threads, from
 * /proc): the neighbours' load moves throughput from round to round far more than it moves that.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, fdatasyncSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createProject, createToken, signupUser, startServer, upsert } from '../server/test/harness.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = 10;

/** A process's CPU time (user + system, all threads) in µs; NaN where /proc is missing. */
let serverPid = 0;
function cpuMicros(pid: number): number {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return Number.NaN;
  const fields = readFileSync(stat, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

async function load(url: string, headers: Record<string, string> = {}, pid = serverPid) {
  const cpu0 = cpuMicros(pid);
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers });
  const cpuPerRequest = (cpuMicros(pid) - cpu0) / r.requests.total;
  if (r.non2xx > 0 && !headers['if-none-match']) throw new Error(`${url}: ${r.non2xx} non-2xx responses`);
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    cpuPerRequest,
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

type Load = Awaited<ReturnType<typeof load>>;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** ROUNDS interleaved rounds of the given loads; per load: median req/s, median p99, median ratio to floor. */
async function rounds(loads: Record<string, () => Promise<Load>>) {
  const runs: Record<string, Load[]> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, run] of Object.entries(loads)) {
      runs[name] ??= [];
      runs[name].push(await run());
    }
  }
  const floor = runs.floor!;
  return Object.fromEntries(
    Object.entries(runs).map(([name, rs]) => [
      name,
      {
        rps: median(rs.map((x) => x.rps)),
        p99: median(rs.map((x) => x.p99)),
        cpu: median(rs.map((x) => x.cpuPerRequest)),
        ratio: median(rs.map((x, i) => x.rps / floor[i]!.rps)),
        ratios: rs.map((x, i) => x.rps / floor[i]!.rps),
      },
    ]),
  );
}
type Figure = Awaited<ReturnType<typeof rounds>>[string];

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
const row = (name: string, f: Figure) =>
  `${name.padEnd(34)} ${f.rps.toFixed(0).padStart(8)} req/s   p99 ${String(f.p99).padStart(4)} ms   ${pct(f.ratio).padStart(4)} of floor   server CPU ${f.cpu.toFixed(0).padStart(4)} µs/req   (rounds: ${f.ratios.map(pct).join(', ')})`;

/**
 * The disk's part of every pull: the fdatasync latency of a small append in the server's data directory,
 * as the audit writer's commit pays it. Ten closed-loop connections whose answers each wait for a commit
 * cannot go faster than about 10 / (2 x commit) requests a second (a row that arrives during one commit
 * waits for the next), however cheap the rest is; printed so the pull figures can be read against it.
 */
function fdatasyncMicros(dir: string, n = 500) {
  const file = join(dir, 'bench-fsync.tmp');
  const fd = openSync(file, 'a');
  const times: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      writeSync(fd, Buffer.alloc(200, 120));
      const t = process.hrtime.bigint();
      fdatasyncSync(fd);
      times.push(Number(process.hrtime.bigint() - t) / 1000);
    }
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  times.sort((a, b) => a - b);
  return { median: times[n >> 1]!, p99: times[Math.floor(n * 0.99)]! };
}

/**
 * The floor: a bare node:http server in a process of its own (the same Node as the server), answering `body`
 * with the pull's content type; nothing of svcenv runs in it.
 */
async function bareFloor(body: string): Promise<{ url: string; pid: number; stop: () => void }> {
  const script = `
    const body = Buffer.from(process.env.FLOOR_BODY, 'base64');
    const headers = { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.length) };
    const server = require('node:http').createServer((req, res) => { res.writeHead(200, headers); res.end(body); });
    server.keepAliveTimeout = 60000;
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ['-e', script], {
    env: { ...process.env, FLOOR_BODY: Buffer.from(body).toString('base64') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  return { url: `http://127.0.0.1:${line.toString().trim()}/`, pid: child.pid!, stop: () => child.kill() };
}

const SEED = Number(process.env.BENCH_SEED ?? 1000);
const srv = await startServer({ env: { DEFAULT_PLAN: 'enterprise', BENCH_FLOOR_ROUTE: 'true', LOG_LEVEL: 'warn' } });
serverPid = srv.child.pid!;
let bare: Awaited<ReturnType<typeof bareFloor>> | undefined;
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
  bare = await bareFloor(first.text);
  const floorProcess = bare;
  const floor = () => load(floorProcess.url, {}, floorProcess.pid);

  const cond = await srv.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, {
    token,
    headers: { 'if-none-match': etag },
  });
  if (cond.status !== 304) throw new Error(`conditional pull answered ${cond.status}, not 304`);
  // Warm-up before each phase, the same in both: the floor route, then pulls (JIT, caches, and after the
  // seeding the checkpoints of its writes, which are the seeding's cost, not the pulls').
  const warmUp = async () => {
    await floor();
    await load(pullUrl, auth);
  };
  await warmUp();
  const before = await rounds({
    floor,
    pull: () => load(pullUrl, auth),
    notModified: () => load(pullUrl, { ...auth, 'if-none-match': etag }),
    serverRoute: () => load(`${srv.url}/bench/floor`),
  });

  const started = Date.now();
  for (let i = 0; i < SEED; i++) {
    const other = await createProject(srv, jwt, { name: `other-${i}`, envs: ['dev'] });
    await upsert(srv, jwt, other.id, ['dev'], vars(100, 0));
  }
  const seedS = ((Date.now() - started) / 1000).toFixed(0);
  await warmUp();
  const after = SEED > 0 ? await rounds({ floor, pull: () => load(pullUrl, auth) }) : null;

  console.log(
    `pull benchmark: ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${DURATION} s, SQLite (WAL, synchronous=FULL)`,
  );
  const sync = fdatasyncMicros(srv.dataDir);
  console.log(
    `disk: fdatasync of a small append in DATA_DIR, median ${sync.median.toFixed(0)} µs, p99 ${sync.p99.toFixed(0)} µs (each pull's audit commit waits for one)`,
  );
  const floorName = `floor: bare node:http, same ${first.text.length} B`;
  console.log(row(floorName, before.floor!));
  console.log(row('pull, 100 vars (10 references)', before.pull!));
  console.log(row('conditional pull (304)', before.notModified!));
  console.log(row('svcenv route, constant 2 KB text', before.serverRoute!));
  if (after) {
    console.log(`-- after seeding ${SEED} projects x 100 variables (${seedS} s) --`);
    console.log(row(floorName, after.floor!));
    console.log(row('pull, 100 vars (10 references)', after.pull!));
    console.log(
      `pull with a seeded database vs an empty one: ${pct(after.pull!.ratio / before.pull!.ratio)} (ratio of ratios); server CPU per pull ${pct(after.pull!.cpu / before.pull!.cpu)} of the empty database's`,
    );
  }
  console.log('targets (against the bare floor): pull >= 35%, 304 >= 50%, no slowdown with database size');
} finally {
  bare?.stop();
  await srv.stop();
}
