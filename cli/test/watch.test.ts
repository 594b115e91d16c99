/**
 * D43 `run --watch` and `pull --watch` of the compiled svcenv against the real server (long-poll), which
 * the tests stop and start again on the same DATA_DIR and port.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  createToken,
  type ServerProcess,
  signupUser,
  startServer,
  upsert,
} from '../../server/test/harness.js';
import { killTree, type Spawned, spawnCli, tempDir, waitFor } from './helpers.js';

const OLD_SECRET = 'old-secret-value-1';
const NEW_SECRET = 'new-secret-value-2';

let server: ServerProcess;
let jwt: string;
let env: Record<string, string>;
let projectId: string;

beforeAll(async () => {
  server = await startServer();
  ({ jwt } = await signupUser(server));
  projectId = (await createProject(server, jwt, { name: 'Watched' })).id;
  const { token } = await createToken(server, jwt, { scope: 'read', projectId });
  env = { SVCENV_API_URL: server.url, SVCENV_TOKEN: token, SVCENV_PROJECT: projectId };
});

afterAll(async () => {
  await server?.stop();
});

/** A fresh environment of its own per test (the project's three, then their variables). */
async function setEnv(name: string, vars: Record<string, string>): Promise<void> {
  await upsert(
    server,
    jwt,
    projectId,
    [name],
    Object.entries(vars).map(([key, value]) => ({ key, value, type: 'secret' })),
  );
}

const put = async (envName: string, key: string, value: string) => {
  const r = await server.request('PUT', `/v1/projects/${projectId}/envs/${envName}/vars/${key}`, {
    token: jwt,
    body: { value },
  });
  expect(r.status, r.text).toBe(200);
};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const userEnv = (envName: string) => {
  const home = tempDir('svcenv-home-');
  return { ...env, SVCENV_ENV: envName, HOME: home, SVCENV_CACHE_DIR: join(home, 'cache') };
};

const lines = (s: Spawned) => s.out().stdout.split('\n');

describe('run --watch (D43)', () => {
  it('restarts the command with the new values after a change (SIGTERM), scrubbing them; exits with its status', async () => {
    await setEnv('dev', { A: 'v1', B: OLD_SECRET });
    const run = spawnCli(
      [
        'run',
        '--watch',
        '--only',
        'A,B',
        '--',
        'sh',
        '-c',
        'echo "pid=$$ A=$A B=$B"; sleep 60 & echo "sleep=$!"; wait; exit 9',
      ],
      { env: userEnv('dev') },
    );
    const sleeps = () => [...run.out().stdout.matchAll(/sleep=(\d+)/g)].map((m) => Number(m[1]));
    try {
      await waitFor(() => run.out().stdout.includes('A=v1'), 'the first start');
      const firstPid = Number(/pid=(\d+)/.exec(run.out().stdout)![1]);
      expect(lines(run)[0]).toBe(`pid=${firstPid} A=v1 B=***`);
      expect(run.out().stdout).not.toContain(OLD_SECRET);
      // One revision changing both (two PUTs may land as one restart or two).
      await setEnv('dev', { A: 'v2', B: NEW_SECRET });
      await waitFor(() => sleeps().length === 2, 'the restart with the new values');
      // The first command got SIGTERM and is gone; the one running now has the new values.
      expect(alive(firstPid)).toBe(false);
      const { stdout, stderr } = run.out();
      expect(stdout).not.toContain(NEW_SECRET);
      expect(stdout + stderr).not.toContain(OLD_SECRET);
      expect(stderr).toBe('svcenv: A, B changed; restarting the command\n');
      // Nothing of a restart reaches stdout but the command's own output.
      expect(stdout).toMatch(/^pid=\d+ A=v1 B=\*\*\*\nsleep=\d+\npid=\d+ A=v2 B=\*\*\*\nsleep=\d+\n$/);
      // A change outside --only restarts nothing.
      const starts = stdout.split('\n').length;
      await upsert(server, jwt, projectId, ['dev'], [{ key: 'OTHER', value: 'x', type: 'plain' }]);
      await new Promise((r) => setTimeout(r, 700));
      expect(run.out().stdout.split('\n').length).toBe(starts);
      // The command's own exit ends svcenv, with its status.
      process.kill(sleeps()[1]!, 'SIGKILL');
      expect((await run.done).code).toBe(9);
    } finally {
      killTree(run.child);
      for (const pid of sleeps()) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('--restart-signal is sent first; a command that ignores it gets SIGKILL after 10 s', async () => {
    await setEnv('staging', { A: 'v1' });
    const script = `trap 'echo "got-USR1 $A"; exit 0' USR1; trap '' TERM; echo "start $A"; while :; do sleep 0.05; done`;
    const run = spawnCli(['run', '--watch', '--restart-signal', 'usr1', '--all', '--', 'sh', '-c', script], {
      env: userEnv('staging'),
    });
    try {
      await waitFor(() => run.out().stdout.includes('start v1'), 'the first start');
      await put('staging', 'A', 'v2');
      await waitFor(() => run.out().stdout.includes('start v2'), 'the restart');
      expect(run.out().stdout).toBe('start v1\ngot-USR1 v1\nstart v2\n');
    } finally {
      killTree(run.child);
    }
    // SIGTERM ignored (the default restart signal): SIGKILL 10 s later, then the new start.
    const stubborn = `trap '' TERM; echo "start $A"; while :; do sleep 0.05; done`;
    const run2 = spawnCli(['run', '--watch', '--all', '--', 'sh', '-c', stubborn], { env: userEnv('staging') });
    try {
      await waitFor(() => run2.out().stdout.includes('start v2'), 'the first start');
      const t = Date.now();
      await put('staging', 'A', 'v3');
      await waitFor(() => run2.out().stdout.includes('start v3'), 'the restart after SIGKILL', 20_000);
      const took = Date.now() - t;
      expect(took).toBeGreaterThan(9_500);
      expect(took).toBeLessThan(13_000);
    } finally {
      killTree(run2.child);
    }
    const bad = spawnCli(['run', '--watch', '--restart-signal', 'NOPE', '--all', '--', 'true'], {
      env: userEnv('staging'),
    });
    expect((await bad.done).stderr).toBe(
      'error: --restart-signal must name a signal\nhint: for example SIGTERM, SIGINT, SIGHUP, SIGQUIT or SIGUSR1\n',
    );
  }, 60_000);

  it('keeps the command running while the server is away, retries, and restarts on a change once it is back', async () => {
    await setEnv('prod', { A: 'v1' });
    const run = spawnCli(['run', '--watch', '--all', '--', 'sh', '-c', 'echo "start $A"; exec sleep 60'], {
      env: userEnv('prod'),
    });
    try {
      await waitFor(() => run.out().stdout.includes('start v1'), 'the first start');
      const port = new URL(server.url).port;
      await server.stop();
      await waitFor(() => /retrying with backoff \(the command keeps running\)/.test(run.out().stderr), 'the note');
      await new Promise((r) => setTimeout(r, 1500));
      expect(run.child.exitCode).toBeNull();
      expect(run.out().stdout).toBe('start v1\n');
      server = await startServer({ dataDir: server.dataDir, env: { PORT: port } });
      await put('prod', 'A', 'v2');
      await waitFor(() => run.out().stdout.includes('start v2'), 'the restart', 30_000);
      expect(run.out().stderr).toContain('svcenv: the server answers again; watching for changes');
      // Told to stop, svcenv forwards the signal and exits with the command's status.
      run.child.kill('SIGTERM');
      expect((await run.done).code).toBe(128 + 15);
    } finally {
      killTree(run.child);
    }
  }, 60_000);
});

describe('pull --watch (D43)', () => {
  it('rewrites the file (0600, atomically) on every change until SIGINT or SIGTERM, then exits 0', async () => {
    const { jwt: otherJwt } = await signupUser(server, 'Pat');
    const p = await createProject(server, otherJwt, { name: 'Pulled' });
    const { token } = await createToken(server, otherJwt, { scope: 'read', projectId: p.id });
    await upsert(server, otherJwt, p.id, ['dev'], [{ key: 'A', value: 'one', type: 'plain' }]);
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const cwd = tempDir();
      const e = { ...userEnv('dev'), SVCENV_TOKEN: token, SVCENV_PROJECT: p.id };
      const pull = spawnCli(['pull', '--watch', '--no-metadata', '--file', 'app.env'], { env: e, cwd });
      try {
        const file = join(cwd, 'app.env');
        await waitFor(() => pull.out().stdout.includes('wrote 1 variable '), 'the first write');
        expect(readFileSync(file, 'utf8')).toMatch(/^A=(one|two|three)\n$/);
        const next = signal === 'SIGINT' ? 'two' : 'three';
        await server.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/A`, { token: otherJwt, body: { value: next } });
        await upsert(server, otherJwt, p.id, ['dev'], [{ key: 'B', value: 'b', type: 'plain' }]);
        await waitFor(() => readFileSync(file, 'utf8') === `A=${next}\nB=b\n`, 'the rewrite');
        expect(statSync(file).mode & 0o777).toBe(0o600);
        await waitFor(() => pull.out().stdout.includes('wrote 2 variables to app.env (mode 0600)'), 'the note');
        await server.request('DELETE', `/v1/projects/${p.id}/envs/dev/vars/B`, { token: otherJwt });
        await waitFor(() => readFileSync(file, 'utf8') === `A=${next}\n`, 'the rewrite after a delete');
        pull.child.kill(signal);
        const done = await pull.done;
        expect([done.code, done.signal, done.stderr]).toEqual([0, null, '']);
      } finally {
        pull.child.kill('SIGKILL');
      }
    }
    const both = spawnCli(['pull', '--watch', '--stdout'], { env: userEnv('dev') });
    expect((await both.done).stderr).toBe('error: --watch rewrites a file; it cannot be used with --stdout\n');
  });
});
