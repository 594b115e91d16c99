/**
 * Pull throughput. The real server as `npm start` runs it (dist/server/main.mjs, plain Node, default
 * settings and logging) in its own process on loopback, driven by autocannon, beside the floor: a bare
 * `node:http` server in another process of its own, answering the same bytes as the pull (what a client sees
 * of the fastest possible server on this machine):
 *   1. floor; 2. pull of 100 variables (10 with references) by an access token; 3. conditional pull (304);
 *   4. GET /bench/floor of the svcenv server itself (a constant 2 KB text: the framework's own cost);
 *   the bare server making each answer's entry durable first, as D66 asks of a 200 pull (the ceiling of any
 *   build that keeps D66); on PostgreSQL also the bare server making one database read per request (the
 *   ceiling of one read);
 *   5. the same pull after seeding BENCH_SEED (default 1,000) other projects of 100 variables each.
 * Settings: BENCH_CONNECTIONS (default 10), BENCH_DATABASE_URL (PostgreSQL: each server gets a fresh schema;
 * unset: SQLite), BENCH_BASELINE (a checkout of another build, e.g. `git worktree add ../base 8e6a448` and
 * `npm ci` in it: its server runs beside this one, same data, same rounds, its pull and 304 printed too).
 * The floor used to be (4), a route of the same server: every cost the server adds to each request (hooks,
 * logging, metrics) then lowered the floor as much as the pull, and the ratio hid it.
 * The machine is shared and its disk's fsync latency drifts (every pull waits for one), so the loads run
 * in interleaved rounds (floor, pull, 304, floor, 304, pull, ...: the floor first, the others in turn in
 * each place) and each figure is the median of its rounds; a ratio is the median of the per-round ratios,
 * each against the floor of its own round.
 * Beside req/s each load reports the server process's CPU time per request (all its threads, from
 * /proc, and the request thread's part): the neighbours' load moves throughput from round to round far more
 * than it moves that; on PostgreSQL the database's CPU per request too (its processes, from /proc); and the
 * share of the machine's cores that were busy, which tells a load bound by the CPU (near the floor's share)
 * from one that waits.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, fdatasyncSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freshPgSchema, repoRoot } from '../server/test/harness.js';
import { seedPullSetup, serve, vars } from './pull-setup.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const DATABASE_URL = process.env.BENCH_DATABASE_URL;
const BASELINE = process.env.BENCH_BASELINE;

/**
 * A process's CPU time (user + system) in µs, all its threads or (`thread`) only the one that serves requests,
 * whose id is the process's; NaN where /proc is missing.
 */
function cpuMicros(pid: number, thread = false): number {
  const stat = thread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`;
  if (!existsSync(stat)) return Number.NaN;
  const fields = readFileSync(stat, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/**
 * PostgreSQL's CPU time in µs by process: every process named `postgres` (the backends serving the servers
 * under load, and its own background workers); empty where /proc is missing.
 */
function postgresMicros(): Map<number, number> {
  const byPid = new Map<number, number>();
  if (!existsSync('/proc')) return byPid;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres')
        byPid.set(Number(pid), cpuMicros(Number(pid)));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return byPid;
}

/** PostgreSQL's CPU between two snapshots: processes alive at the end (one that exited meanwhile is not counted). */
function postgresSpent(before: Map<number, number>, after: Map<number, number>): number {
  let spent = 0;
  for (const [pid, t] of after) spent += t - (before.get(pid) ?? 0);
  return spent;
}

/**
 * The whole machine's CPU time so far (all cores, from /proc/stat, in clock ticks): busy (user, nice, system,
 * irq, softirq, steal) and idle (idle, iowait). Undefined where /proc is missing.
 */
function machineTicks(): { busy: number; idle: number } | undefined {
  if (!existsSync('/proc/stat')) return undefined;
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = cpu;
  return { busy: user + nice + system + irq + softirq + steal, idle: idle + iowait };
}

/**
 * The share of the machine's cores busy between two `machineTicks` (server, load generator, database,
 * neighbours): a load well below the floor's share waits on something (a commit, a thread, a round trip)
 * rather than on the CPU, so a cheaper request alone would not make it faster (ADR 0007, tenth round).
 */
function busyShare(before: ReturnType<typeof machineTicks>, after: ReturnType<typeof machineTicks>): number {
  if (!before || !after) return Number.NaN;
  const busy = after.busy - before.busy;
  return busy / (busy + after.idle - before.idle);
}

async function load(url: string, headers: Record<string, string>, pid: number) {
  const cpu0 = cpuMicros(pid);
  const main0 = cpuMicros(pid, true);
  const db0 = DATABASE_URL ? postgresMicros() : null;
  const machine0 = machineTicks();
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers });
  const machineBusy = busyShare(machine0, machineTicks());
  const dbPerRequest = db0 ? postgresSpent(db0, postgresMicros()) / r.requests.total : Number.NaN;
  const cpuPerRequest = (cpuMicros(pid) - cpu0) / r.requests.total;
  // The request thread's part: a closed loop of connections is bound by it when it is near a whole core.
  const mainPerRequest = (cpuMicros(pid, true) - main0) / r.requests.total;
  if (r.non2xx > 0 && !headers['if-none-match']) throw new Error(`${url}: ${r.non2xx} non-2xx responses`);
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    cpuPerRequest,
    mainPerRequest,
    machineBusy,
    dbPerRequest,
    statuses: { '2xx': r['2xx'], '3xx': r['3xx'], non2xx: r.non2xx },
  };
}

type Load = Awaited<ReturnType<typeof load>>;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** ROUNDS interleaved rounds of the given loads; per load: median req/s, median p99, median ratio to floor. */
async function rounds(loads: Record<string, () => Promise<Load>>) {
  const runs: Record<string, Load[]> = {};
  // The floor opens every round; the other loads take turns in each place after it (round r starts at the
  // r-th), so no load is always the one measured furthest from its floor, or always right after the same
  // neighbour: a drift within a round (the audit log and its WAL grow with every 200) then spreads over all of
  // them instead of biasing a comparison such as this build's pull against the baseline's.
  const [floorEntry, ...rest] = Object.entries(loads);
  for (let r = 0; r < ROUNDS; r++) {
    const turn = rest.length ? r % rest.length : 0;
    for (const [name, run] of [floorEntry!, ...rest.slice(turn), ...rest.slice(0, turn)]) {
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
        main: median(rs.map((x) => x.mainPerRequest)),
        busy: median(rs.map((x) => x.machineBusy)),
        db: median(rs.map((x) => x.dbPerRequest)),
        ratio: median(rs.map((x, i) => x.rps / floor[i]!.rps)),
        ratios: rs.map((x, i) => x.rps / floor[i]!.rps),
      },
    ]),
  );
}
type Figure = Awaited<ReturnType<typeof rounds>>[string];

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
const pct1 = (x: number) => `${(x * 100).toFixed(1)}%`;
const row = (name: string, f: Figure) =>
  `${name.padEnd(34)} ${f.rps.toFixed(0).padStart(8)} req/s   p99 ${String(f.p99).padStart(4)} ms   ${pct(f.ratio).padStart(4)} of floor   server CPU ${f.cpu.toFixed(0).padStart(4)} µs/req (request thread ${f.main.toFixed(0).padStart(3)})${Number.isNaN(f.db) ? '' : `   PostgreSQL ${f.db.toFixed(0).padStart(3)} µs/req`}   machine busy ${pct(f.busy).padStart(4)}   (rounds: ${f.ratios.map(pct).join(', ')})`;

/**
 * The disk's part of every pull: the fdatasync latency of a small append in the server's data directory,
 * as the audit writer's commit pays it, measured on an idle disk (under load each one takes longer: the
 * durable-entry ceiling, measured under load, is the bound to read the pull against).
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
 * with the pull's content type; nothing of svcenv runs in it. Two variants give ceilings on this machine's
 * cores and disk:
 * - `read` (a PostgreSQL URL): the same server first makes one read per request (a prepared `select` of one
 *   row, through the `pg` pool the server uses): the ceiling of any design that sends one query per request.
 *   The server's pulls share their one authorization read (sent after each of them arrived, so that a
 *   revocation is seen by the next request on every instance) with the pulls that arrive with them (ADR 0007,
 *   fifth round), so they can pass it.
 * - `entry` (a file, or a PostgreSQL URL): before each answer the request's line is made durable, as D66
 *   makes a 200 pull's audit entry durable before it is answered, and by a group commit. With a file the lines
 *   of one event-loop turn are appended and `fdatasync`ed on the event loop at the turn's end (the server
 *   keeps its fsyncs off the event loop, which costs it the hops to its writer thread; on the event loop this
 *   ceiling is higher). On PostgreSQL the lines waiting are inserted in one statement into a table with no
 *   index and committed, at most two groups in flight (the designs measured best, ADR 0007, fourteenth
 *   round). Nothing else is done: no read, no index, no rendering. So no build that keeps D66 can serve pulls
 *   much faster than this on this machine's cores and disk.
 */
async function bareFloor(
  body: string,
  opts: { read?: string; entry?: { file: string } | { pg: string } } = {},
): Promise<{ url: string; pid: number; stop: () => void }> {
  const script = `
    const { Pool } = require('pg');
    const fs = require('node:fs');
    const body = Buffer.from(process.env.FLOOR_BODY, 'base64');
    const headers = { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.length) };
    const pool = process.env.FLOOR_PG ? new Pool({ connectionString: process.env.FLOOR_PG, max: 10 }) : null;
    const read = { name: 'floor', text: 'select $1::text as path, now() as at' };
    const file = process.env.FLOOR_ENTRY_FILE ? fs.openSync(process.env.FLOOR_ENTRY_FILE, 'a') : null;
    const entries = process.env.FLOOR_ENTRY_PG ? new Pool({ connectionString: process.env.FLOOR_ENTRY_PG, max: 4 }) : null;
    let waiting = [];
    let inFlight = 0;
    // A file: the lines of one event-loop turn, appended and fdatasynced on this thread at its end.
    function syncTurn() {
      const group = waiting;
      waiting = [];
      fs.writeSync(file, group.map((w) => w.path + ' ' + 'x'.repeat(180) + '\\n').join(''));
      fs.fdatasyncSync(file);
      for (const w of group) w.resolve();
    }
    // PostgreSQL: a group's lines in one insert; at most two groups in flight, the next waits for one.
    function insertGroup() {
      if (inFlight >= 2 || waiting.length === 0) return;
      const group = waiting;
      waiting = [];
      inFlight++;
      const done = (err) => {
        inFlight--;
        for (const w of group) err ? w.reject(err) : w.resolve();
        insertGroup();
      };
      entries
        .query({ name: 'entry', text: 'insert into floor_entries (at, path) select now(), unnest($1::text[])', values: [group.map((w) => w.path)] })
        .then(() => done(), done);
    }
    const durable = (path) =>
      new Promise((resolve, reject) => {
        waiting.push({ path, resolve, reject });
        if (entries) insertGroup();
        else if (waiting.length === 1) setImmediate(syncTurn);
      });
    async function main() {
      if (entries) await entries.query('create table if not exists floor_entries (at timestamptz not null, path text not null)');
      const server = require('node:http').createServer(async (req, res) => {
        if (pool) await pool.query({ ...read, values: [req.url] });
        if (file !== null || entries) await durable(req.url);
        res.writeHead(200, headers);
        res.end(body);
      });
      server.keepAliveTimeout = 60000;
      server.listen(0, '127.0.0.1', () => console.log(server.address().port));
    }
    main();`;
  const entry = opts.entry;
  const child = spawn(process.execPath, ['-e', script], {
    // server/: where `pg` is a dependency.
    cwd: join(repoRoot, 'server'),
    env: {
      ...process.env,
      FLOOR_BODY: Buffer.from(body).toString('base64'),
      FLOOR_PG: opts.read ?? '',
      FLOOR_ENTRY_FILE: entry && 'file' in entry ? entry.file : '',
      FLOOR_ENTRY_PG: entry && 'pg' in entry ? entry.pg : '',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`the floor process ended (${code}) before it listened`);
  });
  const [line] = (await Promise.race([once(child.stdout!, 'data'), exited])) as [Buffer];
  exited.catch(() => {}); // it ends when stopped
  return { url: `http://127.0.0.1:${line.toString().trim()}/`, pid: child.pid!, stop: () => child.kill() };
}

const SEED = Number(process.env.BENCH_SEED ?? 1000);
const ENV = { DEFAULT_PLAN: 'enterprise', BENCH_FLOOR_ROUTE: 'true' };
const current = await serve(undefined, ENV);
const baseline = BASELINE ? await serve(BASELINE, ENV) : null;
const srv = current.srv;
let bare: Awaited<ReturnType<typeof bareFloor>> | undefined;
let bareWithRead: Awaited<ReturnType<typeof bareFloor>> | undefined;
let bareWithEntry: Awaited<ReturnType<typeof bareFloor>> | undefined;
const entrySchema = DATABASE_URL ? await freshPgSchema(DATABASE_URL) : null;
try {
  const setup = await seedPullSetup(srv);
  const { pullUrl, auth, etag } = setup;
  bare = await bareFloor(setup.body);
  const floorProcess = bare;
  const floor = () => load(floorProcess.url, {}, floorProcess.pid);
  bareWithRead = DATABASE_URL ? await bareFloor(setup.body, { read: DATABASE_URL }) : undefined;
  // The entries' file beside the server's database, on the disk its audit commits use.
  bareWithEntry = await bareFloor(setup.body, {
    entry: entrySchema ? { pg: entrySchema.url } : { file: join(srv.dataDir, 'bench-floor-entries.log') },
  });
  const readProcess = bareWithRead;
  const entryProcess = bareWithEntry;
  const ceilingLoads: Record<string, () => Promise<Load>> = {
    ...(readProcess ? { oneRead: () => load(readProcess.url, {}, readProcess.pid) } : {}),
    durableEntry: () => load(entryProcess.url, {}, entryProcess.pid),
  };
  const serverPid = srv.child.pid!;
  const pull = () => load(pullUrl, auth, serverPid);
  const notModified = () => load(pullUrl, { ...auth, 'if-none-match': etag }, serverPid);

  // D73: the same pull by tokens of two Members, one whose access rests on a temporary grant, one without.
  const permanent = await setup.memberToken(false);
  const temporary = await setup.memberToken(true);
  const grantLoads: Record<string, () => Promise<Load>> = {
    permanentPull: () => load(pullUrl, permanent.auth, serverPid),
    permanentNotModified: () => load(pullUrl, { ...permanent.auth, 'if-none-match': permanent.etag }, serverPid),
    temporaryPull: () => load(pullUrl, temporary.auth, serverPid),
    temporaryNotModified: () => load(pullUrl, { ...temporary.auth, 'if-none-match': temporary.etag }, serverPid),
  };

  const base = baseline ? await seedPullSetup(baseline.srv) : null;
  // The two builds may render the same variables a little differently (a header line, quoting); each is
  // measured against the same floor, so a large difference in size is reported.
  if (base && Math.abs(base.body.length - setup.body.length) > setup.body.length / 20)
    console.warn(`the baseline answers the pull with ${base.body.length} B, this build with ${setup.body.length} B`);
  const basePid = baseline?.srv.child.pid ?? 0;
  const baseLoads: Record<string, () => Promise<Load>> = base
    ? {
        basePull: () => load(base.pullUrl, base.auth, basePid),
        baseNotModified: () => load(base.pullUrl, { ...base.auth, 'if-none-match': base.etag }, basePid),
      }
    : {};
  // Warm-up before each phase, the same in both: the floor, then pulls (JIT, caches, and after the
  // seeding the checkpoints of its writes, which are the seeding's cost, not the pulls').
  const warmUp = async () => {
    await floor();
    await pull();
    if (base) await baseLoads.basePull!();
  };
  await warmUp();
  const before = await rounds({
    floor,
    pull,
    notModified,
    ...baseLoads,
    ...grantLoads,
    ...ceilingLoads,
    serverRoute: () => load(`${srv.url}/bench/floor`, {}, serverPid),
  });

  const started = Date.now();
  for (let i = 0; i < SEED; i++) await setup.addProject(`other-${i}`, vars(100, 0));
  const seedS = ((Date.now() - started) / 1000).toFixed(0);
  await warmUp();
  const after = SEED > 0 ? await rounds({ floor, pull }) : null;

  const database = DATABASE_URL ? 'PostgreSQL' : 'SQLite (WAL, synchronous=FULL)';
  console.log(
    `pull benchmark: ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${DURATION} s, ${database}, the compiled server`,
  );
  if (!DATABASE_URL) {
    const sync = fdatasyncMicros(srv.dataDir);
    console.log(
      `disk: fdatasync of a small append in DATA_DIR, median ${sync.median.toFixed(0)} µs, p99 ${sync.p99.toFixed(0)} µs (each pull's audit commit waits for one)`,
    );
  }
  const floorName = `floor: bare node:http, same ${setup.body.length} B`;
  console.log(row(floorName, before.floor!));
  if (before.oneRead) console.log(row('ceiling: bare + one PostgreSQL read', before.oneRead));
  console.log(row('ceiling: bare + a durable entry (D66)', before.durableEntry!));
  console.log(row('pull, 100 vars (10 references)', before.pull!));
  console.log(row('conditional pull (304)', before.notModified!));
  if (base) {
    console.log(row(`baseline pull (${BASELINE}, ${base.body.length} B)`, before.basePull!));
    console.log(row('baseline conditional pull (304)', before.baseNotModified!));
    console.log(
      `this build vs the baseline: pull ${pct(before.pull!.ratio / before.basePull!.ratio)}, 304 ${pct(before.notModified!.ratio / before.baseNotModified!.ratio)} (ratio of ratios)`,
    );
  }
  console.log(row('pull, Member, permanent grants', before.permanentPull!));
  console.log(row('304, Member, permanent grants', before.permanentNotModified!));
  console.log(row('pull, Member, temporary grant (D73)', before.temporaryPull!));
  console.log(row('304, Member, temporary grant (D73)', before.temporaryNotModified!));
  console.log(
    `temporary grant vs permanent grants (D73, target within 3%): pull ${pct1(before.temporaryPull!.ratio / before.permanentPull!.ratio)}, 304 ${pct1(before.temporaryNotModified!.ratio / before.permanentNotModified!.ratio)} (ratio of ratios)`,
  );
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
  bareWithRead?.stop();
  bareWithEntry?.stop();
  await entrySchema?.drop();
  await current.stop();
  await baseline?.stop();
}
