/**
 * Instructions per pull: the compiled server runs under valgrind's callgrind, which counts the instructions
 * the server process executes (every thread: the request thread, the audit writer, libuv's pool) while a load
 * runs, and not those of the rest of the machine. A count is repeatable where a time is not: on this shared
 * 2-core machine a round's req/s moves by ±20% with the neighbours' load, far more than the few per cent a
 * comparison such as D73's (a temporary grant against permanent ones, within 3%) must tell apart
 * (pull.bench.ts measures the time; this measures the work).
 *
 * Loads, each a fixed number of requests (BENCH_REQUESTS, default 1,000) after a warm-up that is not counted
 * (BENCH_WARMUP, default 300; and a whole round of every load, uncounted, before the first), over BENCH_CONNECTIONS (default 1: with one request at a time each 200 pull
 * makes its own audit commit, so a count does not depend on how many pulls one commit happened to group):
 *   the floor, GET /bench/floor of the same server (a constant 2 KB text: the framework's own work);
 *   a pull of 100 variables (10 with references) and its 304, by the Owner's token;
 *   the same pull and 304 by tokens of two Members, one whose access rests on a temporary grant (D73) and one
 *   on permanent grants;
 *   with BENCH_BASELINE (a checkout of another build with `npm ci` run in it) the Owner's pull and 304 of that
 *   build, in a second server under callgrind, seeded alike.
 * BENCH_ROUNDS (default 5) rounds, the loads taking turns in each place; each figure is the median of its
 * rounds, with the spread (lowest to highest) beside it.
 * Instrumentation is switched on and off around each load (`vgdb ... instrumentation on|off`) and the counts
 * are dumped to a file per load. The server's timers (jobs that wake every few seconds) run during a load too;
 * under callgrind a load takes tens of seconds, so their part is what the spread shows.
 * Needs valgrind (Debian's package `valgrind`); without it this prints why and exits 0.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { seedPullSetup, serve } from './pull-setup.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 300);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BASELINE = process.env.BENCH_BASELINE;
/**
 * V8 flags of the counted servers. By default:
 * - `--max-opt=1`: V8 runs the code in its baseline tier (Sparkplug) and never re-optimizes it. With the
 *   optimizing compilers on, when a function is optimized, inlined or deoptimized changed from round to round,
 *   and their work (counted: it runs in the server's threads) moved a round's count by up to 30%. The figures
 *   are then those of unoptimized code, larger than in production, and compare two loads on the same code,
 *   which is the question.
 * - `--initial-old-space-size=2048 --no-memory-reducer`: no full garbage collection during the benchmark; one
 *   (about 240 M instructions) fell into one load of some runs and added 25% to it.
 * With these a load's rounds agree within about 1% (2026-12-04: 1,054 k to 1,067 k instructions a pull).
 */
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '--max-opt=1 --initial-old-space-size=2048 --no-memory-reducer')
  .split(' ')
  .filter(Boolean);
/** Only these loads (comma-separated names as below), e.g. while finding where a difference comes from. */
const ONLY = process.env.BENCH_LOADS?.split(',');

if (spawnSync('valgrind', ['--version']).status !== 0) {
  console.log('pull instructions: valgrind is not installed (apt-get install valgrind); skipped');
  process.exit(0);
}

const outDir = mkdtempSync(join(tmpdir(), 'svcenv-callgrind-'));

/** A server under callgrind, counting nothing until told to. */
async function counted(dir: string | undefined, name: string) {
  const out = join(outDir, `${name}.out`);
  const server = await serve(
    dir,
    { DEFAULT_PLAN: 'enterprise', BENCH_FLOOR_ROUTE: 'true' },
    {
      wrapper: ['valgrind', '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`],
      nodeFlags: NODE_FLAGS,
      startTimeoutMs: 300_000,
    },
  );
  const pid = server.srv.child.pid!;
  // vgdb finds the process by a file named after the user and $HOST; valgrind read HOST from the server's
  // environment, where the harness sets it to the address to listen on.
  const vgdb = (...command: string[]) =>
    execFileSync('vgdb', [`--pid=${pid}`, ...command], {
      env: { ...process.env, HOST: '127.0.0.1' },
      stdio: 'ignore',
    });
  /** Instructions per request of `amount` requests (after WARMUP uncounted ones), and the statuses seen. */
  const count = async (url: string, headers: Record<string, string>, expect: number) => {
    const opts = { url, headers, connections: CONNECTIONS };
    await autocannon({ ...opts, amount: WARMUP });
    vgdb('zero');
    vgdb('instrumentation', 'on');
    const r = await autocannon({ ...opts, amount: REQUESTS });
    vgdb('instrumentation', 'off');
    vgdb('dump');
    const total = lastTotal(out);
    const seen = expect === 304 ? r['3xx'] : r['2xx'];
    if (seen !== r.requests.total || r.requests.total < REQUESTS)
      throw new Error(`${url}: ${r.requests.total} requests, ${seen} answered ${expect}, ${r.non2xx} other`);
    return total / r.requests.total;
  };
  return { ...server, count };
}

const lastDump = new Map<string, number>();
/** The `totals:` line of the newest dump of `out` (callgrind numbers them out.1, out.2, ...). */
function lastTotal(out: string): number {
  const n = (lastDump.get(out) ?? 0) + 1;
  lastDump.set(out, n);
  const text = readFileSync(`${out}.${n}`, 'utf8');
  const line = /^totals: (\d+)/m.exec(text) ?? /^summary: (\d+)/m.exec(text);
  if (!line) throw new Error(`no totals in ${out}.${n}`);
  return Number(line[1]);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const k = (n: number) => `${(n / 1000).toFixed(0)} k`;

const current = await counted(undefined, 'current');
const baseline = BASELINE ? await counted(BASELINE, 'baseline') : null;
try {
  const setup = await seedPullSetup(current.srv);
  const permanent = await setup.memberToken(false);
  const temporary = await setup.memberToken(true);
  const base = baseline ? await seedPullSetup(baseline.srv) : null;
  const loads: Record<string, () => Promise<number>> = {
    floor: () => current.count(`${current.srv.url}/bench/floor`, {}, 200),
    pull: () => current.count(setup.pullUrl, setup.auth, 200),
    notModified: () => current.count(setup.pullUrl, { ...setup.auth, 'if-none-match': setup.etag }, 304),
    permanentPull: () => current.count(setup.pullUrl, permanent.auth, 200),
    permanentNotModified: () =>
      current.count(setup.pullUrl, { ...permanent.auth, 'if-none-match': permanent.etag }, 304),
    temporaryPull: () => current.count(setup.pullUrl, temporary.auth, 200),
    temporaryNotModified: () =>
      current.count(setup.pullUrl, { ...temporary.auth, 'if-none-match': temporary.etag }, 304),
    ...(base && baseline
      ? {
          basePull: () => baseline.count(base.pullUrl, base.auth, 200),
          baseNotModified: () => baseline.count(base.pullUrl, { ...base.auth, 'if-none-match': base.etag }, 304),
        }
      : {}),
  };
  const names = Object.keys(loads).filter((n) => !ONLY || ONLY.includes(n));
  // V8 compiles a function hot after enough calls, not after enough time, in threads that callgrind counts:
  // every load runs uncounted first until its code is compiled, so no round counts another's compilation.
  for (const name of names) await loads[name]!();
  console.error('warm-up done');
  const runs: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length]!;
      runs[name]!.push(await loads[name]!());
    }
    console.error(`round ${round + 1} of ${ROUNDS} done`);
  }
  const has = (...ns: string[]) => ns.every((n) => runs[n]?.length);
  const fig = (name: string) => {
    const xs = runs[name]!;
    return `${k(median(xs))} instructions per request (rounds ${k(Math.min(...xs))} to ${k(Math.max(...xs))})`;
  };
  /** The median of the per-round ratios a/b in per cent, and each round's (a round that met a WAL checkpoint or a
   * job shows as one apart). */
  const ratio = (a: string, b: string) => {
    if (!has(a, b)) return 'not measured';
    const rs = runs[a]!.map((x, i) => (100 * x) / runs[b]![i]!);
    return `${median(rs).toFixed(1)}% (rounds: ${rs.map((r) => r.toFixed(1)).join(', ')})`;
  };
  console.log(
    `pull instructions: callgrind, ${REQUESTS} requests per load after ${WARMUP} uncounted, ${CONNECTIONS} connection(s), ${ROUNDS} rounds, SQLite, the compiled server${NODE_FLAGS.length ? `, node ${NODE_FLAGS.join(' ')}` : ''}`,
  );
  const labels: Record<string, string> = {
    floor: 'floor: GET /bench/floor of the same server (2 KB text)',
    pull: "pull, 100 vars (10 references), Owner's token",
    notModified: "conditional pull (304), Owner's token",
    permanentPull: 'pull, Member, permanent grants',
    permanentNotModified: '304, Member, permanent grants',
    temporaryPull: 'pull, Member, temporary grant (D73)',
    temporaryNotModified: '304, Member, temporary grant (D73)',
    basePull: `baseline pull (${BASELINE})`,
    baseNotModified: 'baseline conditional pull (304)',
  };
  for (const [name, label] of Object.entries(labels)) if (has(name)) console.log(`${label.padEnd(56)} ${fig(name)}`);
  console.log(
    `temporary grant vs permanent grants (D73, target within 3%): pull ${ratio('temporaryPull', 'permanentPull')}, 304 ${ratio('temporaryNotModified', 'permanentNotModified')} of the instructions`,
  );
  console.log(
    `pull vs the floor: ${ratio('pull', 'floor')}; 304 vs the floor: ${ratio('notModified', 'floor')} of the instructions`,
  );
  if (base) {
    console.log(
      `this build vs the baseline: pull ${ratio('pull', 'basePull')}, 304 ${ratio('notModified', 'baseNotModified')} of the instructions`,
    );
  }
} finally {
  await current.stop();
  await baseline?.stop();
  // BENCH_KEEP_DUMPS: left for callgrind_annotate (which functions a load's instructions went to).
  if (process.env.BENCH_KEEP_DUMPS) console.log(`callgrind dumps kept in ${outDir}`);
  else rmSync(outDir, { recursive: true, force: true });
}
