/**
 * D42 offline fallback: how soon a command runs once the server is gone. `npx tsx bench/offline.bench.ts`
 * (or `npm run bench -- offline`). Needs dist/cli/svcenv-<host> (built here when missing).
 *   floor: `svcenv run --all -- true` against the live server (1,000 variables; the cache is warm, so
 *          the pull is a conditional one answered 304 and the body comes from the cache)
 *   1. the same with the server stopped: the connection is refused and the cached copy is used
 *   2. the same with a server that accepts and never answers, SVCENV_TIMEOUT=1: bounded by the timeout
 *   3. the same with --offline: no request at all
 * Each figure is the median wall time from spawning svcenv to its exit (the child is `true`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, hostTarget } from '../cli/build.js';
import { createProject, createToken, signupUser, startServer, upsert } from '../server/test/harness.js';

const repoRoot = join(import.meta.dirname, '..');
const svcenv = join(repoRoot, 'dist', 'cli', `svcenv-${hostTarget}`);
if (!existsSync(svcenv)) build({ targets: [hostTarget] });

const RUNS = Number(process.env.BENCH_RUNS ?? 30);

function timeRuns(args: string[], env: NodeJS.ProcessEnv, runs = RUNS): { median: number; stderr: string } {
  const times: number[] = [];
  let stderr = '';
  for (let i = 0; i < runs + 2; i++) {
    const t = process.hrtime.bigint();
    const r = spawnSync(svcenv, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (r.status !== 0) throw new Error(`svcenv ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    stderr = r.stderr.toString();
    if (i >= 2) times.push(ms); // the first two warm the page cache
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)]!, stderr };
}

const row = (name: string, value: number, floor: number, note = '') =>
  console.log(
    `${name.padEnd(52)} ${`${value.toFixed(1)} ms`.padStart(10)}   floor ${`${floor.toFixed(1)} ms`.padStart(10)}   ratio ${(value / floor).toFixed(2)}x${note ? `  ${note}` : ''}`,
  );

const work = mkdtempSync(join(tmpdir(), 'svcenv-bench-offline-'));
let server = await startServer();
try {
  const { jwt } = await signupUser(server, 'Bench');
  const project = await createProject(server, jwt, { name: 'offline-bench' });
  const { token } = await createToken(server, jwt, { projectId: project.id, scope: 'read' });
  await upsert(
    server,
    jwt,
    project.id,
    ['dev'],
    Array.from({ length: 1000 }, (_, i) => ({ key: `SECRET_${i}`, value: `s${i}-${'x'.repeat(28)}`, type: 'secret' })),
  );
  const env = {
    PATH: process.env.PATH,
    HOME: work,
    SVCENV_CACHE_DIR: join(work, 'cache'),
    SVCENV_API_URL: server.url,
    SVCENV_TOKEN: token,
    SVCENV_PROJECT: project.id,
    SVCENV_ENV: 'dev',
  };
  const run = ['run', '--all', '--', 'true'];

  const live = timeRuns(run, env);
  if (live.stderr) throw new Error(`the live run warned: ${live.stderr}`);
  console.log('svcenv run --all -- true, 1,000 variables, median of', RUNS);
  row('live server (floor; conditional pull, 304)', live.median, live.median);

  await server.stop();
  const gone = timeRuns(run, env);
  if (!/ECONNREFUSED/.test(gone.stderr)) throw new Error(`no fallback warning: ${gone.stderr}`);
  row('server stopped: refused -> cached copy', gone.median, live.median, '(server gone -> child started)');

  // Accepts connections and never answers: only the timeout ends the wait.
  const silent = createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
  // The cache is per API URL: warm it under the silent server's URL through the live one, restarted there.
  silent.close();
  server = await startServer({ dataDir: server.dataDir, env: { PORT: new URL(silentUrl).port } });
  timeRuns(run, { ...env, SVCENV_API_URL: silentUrl }, 1);
  await server.stop();
  const hang = createServer(() => {});
  await new Promise<void>((r) => hang.listen(Number(new URL(silentUrl).port), '127.0.0.1', r));
  const noAnswer = timeRuns(run, { ...env, SVCENV_API_URL: silentUrl, SVCENV_TIMEOUT: '1' }, 5);
  hang.close();
  row('no answer, SVCENV_TIMEOUT=1 -> cached copy', noAnswer.median, live.median, '(bounded by the timeout)');

  const offline = timeRuns([...run.slice(0, 2), '--offline', ...run.slice(2)], env);
  row('--offline (no request)', offline.median, live.median);
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
