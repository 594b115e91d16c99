/**
 * Server start-up ("Operating"): how `npm start` used to run the server (TypeScript compiled by
 * tsx at every start) beside how it runs it now (dist/server/main.mjs, built by server/scripts/build.mjs),
 * in the same run, each on an empty DATA_DIR, interleaved run by run (`npx tsx bench/startup.bench.ts`).
 *   1. cold start: from spawn to the first 200 on GET /healthz        floor: `node -e 0` (spawn to exit)
 *      and the CPU time (user + system, all threads) the process spent until then, which the neighbours'
 *      load moves far less than the wall time                           floor: `node -e 0`'s CPU time
 *   2. idle RSS: the process's resident memory BENCH_IDLE_MS (default 3,000) after that first 200, with no
 *      request since                                                    floor: an idle `node` process
 * Medians of BENCH_STARTUP_RUNS (default 7). Targets: cold start ≤ 0.5 s, idle RSS ≤ 120 MB.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildServer } from '../server/scripts/build.mjs';
import { freePort } from '../server/test/harness.js';

const repoRoot = join(import.meta.dirname, '..');
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 7);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 3000);

await buildServer(); // what prestart does: a no-op when dist/server is fresh

const variants = {
  'tsx (node --import tsx server/src/main.ts)': ['--import', 'tsx', join(repoRoot, 'server', 'src', 'main.ts')],
  'compiled (node dist/server/main.mjs)': [join(repoRoot, 'dist', 'server', 'main.mjs')],
} as const;
type Variant = keyof typeof variants;

const rssMb = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
/** User + system CPU time of a process (all its threads) from /proc, in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function healthz(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    }).on('error', () => resolve(false));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
}

/** Spawn → first 200 on /healthz (ms), then the RSS after IDLE_MS of idleness (MB). */
async function startOnce(args: readonly string[]): Promise<Sample> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-bench-start-'));
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
      if (await healthz(port)) break;
      await sleep(2);
    }
    const ms = performance.now() - t0;
    const cpu = cpuMs(child.pid!);
    await sleep(IDLE_MS);
    return { ms, cpu, rss: rssMb(child.pid!) };
  } finally {
    child.kill('SIGKILL');
    await exited(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The floors: `node -e 0` from spawn to exit, and the RSS of a node process doing nothing. */
async function floorOnce(): Promise<Sample> {
  const t0 = performance.now();
  const bare = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await exited(bare);
  const ms = performance.now() - t0;
  // A child's CPU time is gone with it, so the floor's comes from one that waits to be read, then exits.
  const held = spawn(process.execPath, ['-e', 'process.stdin.once("data", () => process.exit(0))'], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  await sleep(300);
  const cpu = cpuMs(held.pid!);
  held.stdin!.end('x');
  await exited(held);
  const idle = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e6)'], { stdio: 'ignore' });
  await sleep(Math.min(IDLE_MS, 1000));
  const rss = rssMb(idle.pid!);
  idle.kill('SIGKILL');
  await exited(idle);
  return { ms, cpu, rss };
}

interface Sample {
  ms: number;
  cpu: number;
  rss: number;
}
const results: Record<Variant | 'floor', Sample[]> = {
  'tsx (node --import tsx server/src/main.ts)': [],
  'compiled (node dist/server/main.mjs)': [],
  floor: [],
};
// One warm-up of each (page cache), not counted; then interleaved, so drift hits every variant alike.
for (const args of Object.values(variants)) await startOnce(args);
for (let i = 0; i < RUNS; i++) {
  results.floor.push(await floorOnce());
  for (const [name, args] of Object.entries(variants) as [Variant, readonly string[]][]) {
    results[name].push(await startOnce(args));
  }
}

const of = (name: Variant | 'floor', k: keyof Sample) => median(results[name].map((r) => r[k]));
const [floorMs, floorCpu, floorRss] = [of('floor', 'ms'), of('floor', 'cpu'), of('floor', 'rss')];
console.log(`medians of ${RUNS} runs; idle RSS read ${IDLE_MS} ms after the first 200`);
console.log(
  `${'floor: node -e 0 / an idle node'.padEnd(44)} start ${floorMs.toFixed(0).padStart(5)} ms, CPU ${floorCpu.toFixed(0).padStart(4)} ms` +
    `   idle RSS ${floorRss.toFixed(0).padStart(4)} MB`,
);
for (const name of Object.keys(variants) as Variant[]) {
  const [ms, cpu, rss] = [of(name, 'ms'), of(name, 'cpu'), of(name, 'rss')];
  const times = results[name].map((r) => r.ms);
  console.log(
    `${name.padEnd(44)} start ${ms.toFixed(0).padStart(5)} ms (${(ms / floorMs).toFixed(1)}x floor; ` +
      `${Math.min(...times).toFixed(0)}-${Math.max(...times).toFixed(0)}), CPU ${cpu.toFixed(0).padStart(4)} ms` +
      `   idle RSS ${rss.toFixed(0).padStart(4)} MB (+${(rss - floorRss).toFixed(0)} over floor)`,
  );
}
const compiled = 'compiled (node dist/server/main.mjs)';
const ok = of(compiled, 'ms') <= 500 && of(compiled, 'rss') <= 120;
console.log(`targets (compiled): cold start ≤ 500 ms, idle RSS ≤ 120 MB: ${ok ? 'met' : 'NOT met'} in this run`);
