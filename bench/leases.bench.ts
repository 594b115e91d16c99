/**
 * D71 leases (ADR 0030), each figure beside its floor measured in the same run (bench/run.ts, or directly:
 * `npx tsx bench/leases.bench.ts`). Needs the machine's PostgreSQL (127.0.0.1:5432, user postgres, db test)
 * and dist/cli/svcenv-<host> (built here when missing).
 *   a. leases per second through the API (POST .../dynamic/:name/leases, one in flight, then BENCH_LEASE_CONCURRENCY
 *      in flight), against PostgreSQL. Floor: the same create statements sent by a bare `pg` client over one
 *      pooled connection (BEGIN; CREATE ROLE ... LOGIN PASSWORD ... VALID UNTIL ...; GRANT ...; COMMIT), and a
 *      pool of as many connections for the concurrent load. Goal: a lease within 2x of the bare statements.
 *      Beside it, at 1 in flight, the bare statements with the password's SCRAM verifier made before the clock
 *      starts, as the server makes its own ahead (ADR 0029): PostgreSQL then hashes nothing.
 *   b. time from spawning `svcenv run --all -- date +%s%N` to the child's start, with one dynamic secret in
 *      scope, beside the same run in an environment without one (the floor) and with --no-dynamic. Goal:
 *      within 15 ms of the floor.
 * Interleaved rounds (BENCH_ROUNDS, default 3); figures are medians. BENCH_LEASES (default 200) per round.
 *
 * The server is the compiled one, as `npm start` runs it (pull-setup.ts `serve`, as the pull benchmarks do): the
 * tsx loader the tests use cost it about 0.8 ms of CPU more per lease. The leases are asked for over node:http
 * with a keep-alive agent, a driver as light as the floor's `pg` client: `fetch` spent about 1.4 ms of CPU per
 * request against `pg`'s 0.4 ms, and on a machine of two cores that time is taken from the server measured
 * (BENCH_FETCH=1 drives the API with `fetch` instead, for a comparison).
 */

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import { build, hostTarget } from '../cli/build.js';
import { scramVerifier } from '../server/src/managed/postgres.js';
import { createProject, createToken, signupUser, upsert } from '../server/test/harness.js';
import { machinePgConnection } from '../server/test/managed-dbs.js';
import { serve } from './pull-setup.js';

const repoRoot = join(import.meta.dirname, '..');
const svcenv = join(repoRoot, 'dist', 'cli', `svcenv-${hostTarget}`);
if (!existsSync(svcenv)) build({ targets: [hostTarget] });

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LEASES = Number(process.env.BENCH_LEASES ?? 200);
const CONCURRENCY = Number(process.env.BENCH_LEASE_CONCURRENCY ?? 4);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const PG = { host: '127.0.0.1', port: 5432, database: 'test', user: 'postgres' };

const CREATE = [
  `CREATE ROLE "{{username}}" LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`,
  // A role membership, not GRANT CONNECT ON DATABASE: that one rewrites the database's catalog row, and two at
  // once fail with "tuple concurrently updated" (bare or not), which would stop the concurrent load.
  `GRANT pg_monitor TO "{{username}}"`,
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const row = (name: string, value: string, floor: string, ratio: string) =>
  console.log(`${name.padEnd(52)} ${value.padStart(12)}   floor ${floor.padStart(12)}   ${ratio}`);

/** `total` calls of `one`, `inFlight` at a time; calls per second. */
async function rate(total: number, inFlight: number, one: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) await one(next++);
    }),
  );
  return total / ((performance.now() - t) / 1000);
}

const served = await serve(undefined, { DEFAULT_PLAN: 'enterprise' });
const server = served.srv;
const bareRoles: string[] = [];
const pool = new pg.Pool({ ...PG, max: CONCURRENCY });
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
try {
  const { jwt } = await signupUser(server, 'Bench');
  const project = await createProject(server, jwt, { name: 'lease-bench' });
  const { token } = await createToken(server, jwt, { projectId: project.id });
  const call = async (method: string, path: string, body?: unknown, auth = jwt) => {
    const res = await server.request(method, `/v1/projects/${project.id}${path}`, { token: auth, body });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res;
  };
  await call('POST', '/connections', machinePgConnection());
  await call('PUT', '/envs/dev/dynamic/bench', { connection: 'pg', create: CREATE, maxLeases: 10_000 });
  await upsert(server, jwt, project.id, ['dev', 'staging'], [{ key: 'PORT', value: '8080', type: 'plain' }]);

  const leaseUrl = `${server.url}/v1/projects/${project.id}/envs/dev/dynamic/bench/leases`;
  const leaseIds: string[] = [];
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const leaseByFetch = async () => {
    const res = await fetch(leaseUrl, { method: 'POST', headers, body: '{}' });
    if (res.status !== 201) throw new Error(`lease: ${res.status} ${await res.text()}`);
    leaseIds.push(((await res.json()) as { id: string }).id);
  };
  const leaseByHttp = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(leaseUrl, { method: 'POST', agent, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          if (res.statusCode !== 201) return reject(new Error(`lease: ${res.statusCode} ${text}`));
          leaseIds.push((JSON.parse(text) as { id: string }).id);
          resolve();
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end('{}');
    });
  const lease = process.env.BENCH_FETCH === '1' ? leaseByFetch : leaseByHttp;
  const newPassword = () => randomBytes(24).toString('base64url').slice(0, 32);
  /**
   * The same statements, filled in as the server fills them, over one pooled connection per in-flight call;
   * `secret` is what goes in the password's quotes (the password itself, or its SCRAM verifier).
   */
  const bareWith = async (secret: string) => {
    const username = `v_dev_bench_${randomBytes(6).toString('hex')}`;
    const expiration = new Date(Date.now() + 3_600_000).toISOString();
    bareRoles.push(username);
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      for (const s of CREATE) {
        await c.query(
          s
            .replaceAll('{{username}}', username)
            .replaceAll("'{{password}}'", pg.escapeLiteral(secret))
            .replaceAll('{{expiration}}', expiration),
        );
      }
      await c.query('COMMIT');
    } finally {
      c.release();
    }
  };
  const bare = () => bareWith(newPassword());
  /**
   * A reference beside the floor: the same statements with the password's SCRAM verifier in its place, made
   * before the clock starts (as the server makes its verifiers ahead, ADR 0029). PostgreSQL then hashes no
   * password, but checks the verifier against the empty one, which costs as much.
   */
  let prepared: string[] = [];
  const prepare = async (n: number) => {
    prepared = await Promise.all(Array.from({ length: n }, () => scramVerifier(newPassword())));
  };
  const bareVerifier = () => bareWith(prepared.pop()!);
  const revokeAll = async () => {
    for (const id of leaseIds.splice(0)) await call('DELETE', `/envs/dev/dynamic/bench/leases/${id}`, undefined, token);
    const c = await pool.connect();
    try {
      for (const r of bareRoles.splice(0)) await c.query(`DROP OWNED BY "${r}"; DROP ROLE IF EXISTS "${r}"`);
    } finally {
      c.release();
    }
  };

  // Warm both paths (JIT, pooled connections) before the first round.
  await rate(20, 1, lease);
  await rate(20, 1, bare);
  await revokeAll();

  const figures = {
    api1: [] as number[],
    bare1: [] as number[],
    verifier1: [] as number[],
    apiN: [] as number[],
    bareN: [] as number[],
  };
  for (let r = 0; r < ROUNDS; r++) {
    figures.bare1.push(await rate(LEASES, 1, bare));
    await prepare(LEASES);
    figures.verifier1.push(await rate(LEASES, 1, bareVerifier));
    figures.api1.push(await rate(LEASES, 1, lease));
    figures.bareN.push(await rate(LEASES, CONCURRENCY, bare));
    figures.apiN.push(await rate(LEASES, CONCURRENCY, lease));
    await revokeAll();
  }
  const perS = (v: number) => `${v.toFixed(0)}/s`;
  const show = (name: string, api: number[], floor: number[]) => {
    const [a, f] = [median(api), median(floor)];
    row(name, perS(a), perS(f), `${(f / a).toFixed(2)}x the bare time per lease (goal <= 2x)`);
  };
  show('a. leases through the API, 1 in flight', figures.api1, figures.bare1);
  const [a1, v1] = [median(figures.api1), median(figures.verifier1)];
  row(
    '   reference: bare, the SCRAM verifier made ahead',
    perS(a1),
    perS(v1),
    `${(v1 / a1).toFixed(2)}x that reference's time per lease`,
  );
  show(`a. leases through the API, ${CONCURRENCY} in flight`, figures.apiN, figures.bareN);

  // b. spawn to the child's start: the child prints the time it started (date +%s%N). Spawned without
  // blocking: a spawnSync loop held this process's event loop for minutes, while the server closed this
  // process's idle keep-alive connections (5 s); the fetch after it then took one of those from undici's pool,
  // which had not yet seen the close, and failed with "other side closed".
  const env = { ...process.env, SVCENV_API_URL: server.url, SVCENV_TOKEN: token, SVCENV_PROJECT: project.id };
  const toStart = async (envName: string, extra: string[]) => {
    const t = performance.timeOrigin + performance.now();
    const child = spawn(svcenv, ['run', '--all', ...extra, '--', 'date', '+%s%N'], {
      env: { ...env, SVCENV_ENV: envName, HOME: process.env.HOME },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const status = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    if (status !== 0) throw new Error(`run exited ${status}: ${err}`);
    return Number(BigInt(out.trim()) / 1000n) / 1000 - t;
  };
  // BENCH_RUNS=0 skips b (a quick look at a. alone).
  if (RUNS > 0) {
    const b = { leased: [] as number[], floor: [] as number[], off: [] as number[] };
    for (let i = 0; i < 3; i++) {
      await toStart('dev', []);
      await toStart('staging', []);
    }
    for (let i = 0; i < RUNS * ROUNDS; i++) {
      b.floor.push(await toStart('staging', []));
      b.leased.push(await toStart('dev', []));
      b.off.push(await toStart('dev', ['--no-dynamic']));
    }
    const ms = (v: number) => `${v.toFixed(1)} ms`;
    const [leased, floor, off] = [median(b.leased), median(b.floor), median(b.off)];
    row(
      'b. svcenv run to the child, one dynamic secret',
      ms(leased),
      ms(floor),
      `+${(leased - floor).toFixed(1)} ms (goal <= 15 ms; floor: run in an env without one)`,
    );
    row('b. same env, --no-dynamic', ms(off), ms(floor), `${(off - floor).toFixed(1)} ms`);
  }
  const open = await call('GET', '/envs/dev/dynamic/bench/leases');
  const left = (open.body as { leases: unknown[] }).leases.length;
  if (left) console.log(`(!) ${left} leases of the runs are still open`);
} finally {
  agent.destroy();
  await pool.end().catch(() => undefined);
  await served.stop();
  // Bare roles a failed round may have left.
  const c = new pg.Client(PG);
  await c.connect();
  for (const r of bareRoles) await c.query(`DROP OWNED BY "${r}"; DROP ROLE IF EXISTS "${r}"`).catch(() => undefined);
  await c.end();
}
