/**
 * Where a pull's time goes: the compiled server (dist/server/main.mjs, what `npm start` runs) under
 * `node --cpu-prof`, driven by autocannon with a conditional pull (304) or a pull (200) for PROFILE_SECONDS,
 * or (`lease`) with D71 leases on the machine's PostgreSQL, BENCH_CONNECTIONS in flight,
 * then the profile's top functions by self time and its time by package. Not a benchmark (the profiler
 * slows everything down); it answers "which functions", the benchmark answers "how fast".
 *   npx tsx bench/profile.ts [304|200|lease] [top N]      (BENCH_DATABASE_URL: on PostgreSQL; BENCH_CONNECTIONS,
 *   default 10; PROFILE_CALLERS=writev,read: those functions' self time split by the chain of their callers,
 *   e.g. a socket write under `pg`'s query submit apart from one under the HTTP answer)
 * The raw .cpuprofile is kept (its path is printed) for Chromium's DevTools.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { SourceMapConsumer } from 'source-map-js';
import {
  createProject,
  createToken,
  freshPgSchema,
  repoRoot,
  signupUser,
  startServer,
  upsert,
} from '../server/test/harness.js';
import { machinePgConnection } from '../server/test/managed-dbs.js';

const mode = process.argv[2] === '200' || process.argv[2] === 'lease' ? process.argv[2] : '304';
const TOP = Number(process.argv[3] ?? 30);
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const CALLERS = (process.env.PROFILE_CALLERS ?? '').split(',').filter(Boolean);
/** Callers shown above each function of PROFILE_CALLERS, and chains shown per function. */
const CALLER_DEPTH = 9;
const CALLER_CHAINS = 6;

execFileSync(process.execPath, [join(repoRoot, 'server', 'scripts', 'build.mjs')], { stdio: 'inherit' });
const profDir = mkdtempSync(join(tmpdir(), 'svcenv-prof-'));
// BENCH_DATABASE_URL: on PostgreSQL, in a fresh schema, as the pull benchmark does.
const pg = process.env.BENCH_DATABASE_URL ? await freshPgSchema(process.env.BENCH_DATABASE_URL) : null;
const srv = await startServer({
  env: {
    DEFAULT_PLAN: 'enterprise',
    ...(pg ? { DATABASE_URL: pg.url, MASTER_KEY: randomBytes(32).toString('base64') } : {}),
  },
  command: { args: ['--cpu-prof', '--cpu-prof-dir', profDir, join(repoRoot, 'dist', 'server', 'main.mjs')] },
});
try {
  const { jwt } = await signupUser(srv, 'Profile');
  const p = await createProject(srv, jwt, { name: 'profile' });
  await upsert(
    srv,
    jwt,
    p.id,
    ['dev'],
    Array.from({ length: 100 }, (_, i) => ({
      key: `VAR_${i}`,
      value: i < 10 ? `prefix-\${VAR_${i + 10}}-suffix` : `value-${i}-${'x'.repeat(20)}`,
      type: i % 2 ? 'plain' : 'secret',
    })),
  );
  const { token } = await createToken(srv, jwt, { scope: 'read' });
  if (mode === 'lease') {
    await profileLeases(p.id, jwt, token);
  } else {
    await profilePulls(p.id, token);
  }
} finally {
  await srv.stop();
  await pg?.drop();
}

/**
 * `lease`: D71 leases of a dynamic secret on the machine's PostgreSQL (as bench/leases.bench.ts makes them),
 * BENCH_CONNECTIONS in flight; every lease is revoked afterwards (its role dropped).
 */
async function profileLeases(projectId: string, jwt: string, token: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await srv.request(method, `/v1/projects/${projectId}${path}`, { token: jwt, body });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res;
  };
  await call('POST', '/connections', machinePgConnection());
  await call('PUT', '/envs/dev/dynamic/profile', {
    connection: 'pg',
    create: [
      `CREATE ROLE "{{username}}" LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`,
      `GRANT pg_monitor TO "{{username}}"`,
    ],
    maxLeases: 10_000,
  });
  try {
    const r = await autocannon({
      url: `${srv.url}/v1/projects/${projectId}/envs/dev/dynamic/profile/leases`,
      method: 'POST',
      connections: CONNECTIONS,
      duration: SECONDS,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    console.log(
      `lease load: ${r.requests.total} requests (${r.non2xx} not 2xx), ${r.requests.average.toFixed(0)}/s under the profiler`,
    );
  } finally {
    // Every lease's role, revoked through svcenv (which drops it), one at a time; the listing answers at most
    // 200 open leases, so it is read again until none is left.
    for (;;) {
      const listed = (await call('GET', '/envs/dev/dynamic/profile/leases')).body as { leases: { id: string }[] };
      if (listed.leases.length === 0) break;
      for (const l of listed.leases) await call('DELETE', `/envs/dev/dynamic/profile/leases/${l.id}`);
    }
  }
}

async function profilePulls(projectId: string, token: string) {
  const path = `/v1/projects/${projectId}/envs/dev/pull`;
  const first = await srv.request('GET', path, { token });
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (mode === '304') headers['if-none-match'] = first.headers.get('etag')!;
  const r = await autocannon({ url: `${srv.url}${path}`, connections: CONNECTIONS, duration: SECONDS, headers });
  console.log(`${mode} load: ${r.requests.total} requests, ${r.requests.average.toFixed(0)} req/s under the profiler`);
}

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
// The bundle inlines our code and the packages: its source map names the file each function came from.
const bundleMap = new SourceMapConsumer(
  JSON.parse(readFileSync(join(repoRoot, 'dist', 'server', 'main.mjs.map'), 'utf8')),
);
const sourceOf = ({ url, lineNumber, columnNumber }: Node['callFrame']) => {
  if (!url) return { file: '(native / V8)', line: 0 };
  if (!url.endsWith('dist/server/main.mjs'))
    return { file: url.replace(/^file:\/\/.*node_modules\//, ''), line: lineNumber + 1 };
  const o = bundleMap.originalPositionFor({ line: lineNumber + 1, column: columnNumber });
  return { file: (o.source ?? '?').replace(/^.*node_modules\//, '').replace(/^(\.\.\/)+/, ''), line: o.line ?? 0 };
};
/** A function as the summaries name it: its name and where its source is. */
const frameName = (n: Node) => {
  const { file: f, line } = sourceOf(n.callFrame);
  return `${n.callFrame.functionName || '(anonymous)'} ${f}${line ? `:${line}` : ''}`;
};
/** Our files by path; a package by its name; Node's own modules as one. */
const areaOf = (f: string) => {
  if (f.startsWith('(') || /^(server|contract)\//.test(f)) return f;
  if (f.startsWith('node:') || !f.includes('/')) return 'node: internals';
  return f.startsWith('@') ? f.split('/').slice(0, 2).join('/') : f.split('/')[0]!;
};
/** One thread's profile (Node writes one per thread: the main thread, then the audit writer). */
function summarize(file: string, top: number) {
  const profile = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as {
    nodes: Node[];
    samples: number[];
    timeDeltas: number[];
  };
  // Self time per node: the sum of the deltas of the samples that landed in it.
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, t: number) => m.set(k, (m.get(k) ?? 0) + t);
  for (const n of profile.nodes) {
    const t = self.get(n.id) ?? 0;
    if (!t) continue;
    add(byFunction, frameName(n), t);
    add(byArea, areaOf(sourceOf(n.callFrame).file), t);
  }
  const pct = (t: number) => `${((t / total) * 100).toFixed(1).padStart(5)}%`;
  console.log(`\n== ${join(profDir, file)} (${(total / 1e6).toFixed(1)} s sampled)`);
  console.log(`\ntop ${top} functions by self time:`);
  for (const [name, t] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(t)}  ${name}`);
  console.log('\nby where the code lives (our files one by one, packages by name):');
  for (const [name, t] of [...byArea].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${pct(t)}  ${name}`);
  if (CALLERS.length) callers(profile.nodes, self, pct);
}

/** PROFILE_CALLERS: each named function's self time by the chain of its callers (nearest first). */
function callers(nodes: Node[], self: Map<number, number>, pct: (t: number) => string) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  for (const fn of CALLERS) {
    const chains = new Map<string, number>();
    for (const n of nodes) {
      const t = self.get(n.id) ?? 0;
      if (n.callFrame.functionName !== fn || !t) continue;
      const chain: string[] = [];
      for (let id = parentOf.get(n.id); id !== undefined && chain.length < CALLER_DEPTH; id = parentOf.get(id))
        chain.push(frameName(byId.get(id)!));
      const key = chain.join('\n          < ');
      chains.set(key, (chains.get(key) ?? 0) + t);
    }
    console.log(`\n${fn}, by its callers:`);
    if (!chains.size) console.log('  (no samples)');
    for (const [chain, t] of [...chains].sort((a, b) => b[1] - a[1]).slice(0, CALLER_CHAINS))
      console.log(`${pct(t)}  < ${chain}`);
  }
}

const files = readdirSync(profDir)
  .filter((f) => f.endsWith('.cpuprofile'))
  .sort();
if (!files.length) throw new Error(`no profile written in ${profDir}`);
for (const [i, f] of files.entries()) summarize(f, i === 0 ? TOP : 12);
