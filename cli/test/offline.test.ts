/**
 * D42 offline fallback of the compiled svcenv against the real server, which the tests stop and start
 * again on the same DATA_DIR and port; and the arguments given in the wrong place.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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
import { runCli, tempDir } from './helpers.js';

const SECRET = 'offline-secret-value-42';

let server: ServerProcess;
let jwt: string;
let project: { id: string };
let token: string;

async function restart(): Promise<void> {
  const port = new URL(server.url).port;
  server = await startServer({ dataDir: server.dataDir, env: { PORT: port } });
}

beforeAll(async () => {
  server = await startServer();
  ({ jwt } = await signupUser(server));
  project = await createProject(server, jwt, { name: 'Offline' });
  token = (await createToken(server, jwt, { scope: 'read', projectId: project.id })).token;
  await upsert(
    server,
    jwt,
    project.id,
    ['dev'],
    [
      { key: 'DB_PASSWORD', value: SECRET, type: 'secret' },
      { key: 'PORT', value: '8080', type: 'plain' },
    ],
  );
});

afterAll(async () => {
  await server?.stop();
});

/** An empty HOME and cache directory per test; SVCENV_* for the server (or `url`). */
function user(url = server.url, t = token) {
  const home = tempDir('svcenv-home-');
  const cache = join(home, 'cache');
  return {
    home,
    cache,
    env: {
      HOME: home,
      SVCENV_CACHE_DIR: cache,
      SVCENV_API_URL: url,
      SVCENV_TOKEN: t,
      SVCENV_PROJECT: project.id,
      SVCENV_ENV: 'dev',
    },
  };
}

/**
 * A loopback proxy in front of the server that records each request and can answer in its place: an
 * error status, or nothing at all (the connection held open).
 */
async function proxy() {
  const seen: { url: string; status: number; ifNoneMatch: string | undefined }[] = [];
  const state = { answer: 0 as number | 'hang' };
  const held: Set<import('node:http').ServerResponse> = new Set();
  const http: Server = createHttpServer(async (req, res) => {
    if (state.answer === 'hang') {
      held.add(res);
      return;
    }
    if (state.answer) {
      seen.push({ url: req.url!, status: state.answer, ifNoneMatch: req.headers['if-none-match'] });
      res.writeHead(state.answer, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: state.answer === 429 ? 'RATE_LIMIT' : 'INTERNAL', message: 'no' } }));
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'connection') as [string, string][],
    );
    const answer = await fetch(server.url + req.url, { headers });
    seen.push({ url: req.url!, status: answer.status, ifNoneMatch: req.headers['if-none-match'] });
    const out = Object.fromEntries(
      [...answer.headers].filter(([k]) => k !== 'content-length' && k !== 'content-encoding'),
    ) as Record<string, string>;
    res.writeHead(answer.status, out);
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    seen,
    state,
    close: () => {
      for (const res of held) res.destroy();
      http.close();
    },
  };
}

const cacheFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);

describe('D42 offline fallback', () => {
  it('pull and run use the cache while the server is stopped, with one warning; a fresh pull after it is back', async () => {
    const u = user();
    const cwd = tempDir();
    const first = await runCli(['pull', '--stdout'], { env: u.env, cwd });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toBe('');
    expect(cacheFiles(u.cache)).toHaveLength(1);

    await server.stop();
    try {
      const pull = await runCli(['pull'], { env: u.env, cwd });
      expect(pull.code, pull.stderr).toBe(0);
      expect(pull.stdout).toBe('wrote 5 variables to .env (mode 0600)\n');
      expect(pull.stderr).toMatch(
        /^warning: using the cached copy the server confirmed \d+s ago: cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)\n$/,
      );
      expect(readFileSync(join(cwd, '.env'), 'utf8')).toBe(first.stdout);

      // run: the child sees the values, its output is scrubbed, its exit status passes through.
      const run = await runCli(['run', '--all', '--', 'sh', '-c', 'echo "$PORT $DB_PASSWORD"; exit 3'], {
        env: u.env,
      });
      expect(run.code).toBe(3);
      expect(run.stdout).toBe('8080 ***\n');
      expect(run.stderr).toMatch(/^warning: using the cached copy .* ago: cannot reach .*\(ECONNREFUSED\)\n$/);

      // A cache of another token (another credential, another entry) does not stand in.
      const other = await runCli(['pull', '--stdout'], { env: { ...u.env, SVCENV_TOKEN: `${token}x` } });
      expect(other.code).toBe(1);
      expect(other.stderr).toMatch(/^NETWORK: cannot reach/);

      // --max-stale 0 turns the fallback off.
      const off = await runCli(['pull', '--stdout', '--max-stale', '0'], { env: u.env });
      expect(off.code).toBe(1);
      expect(off.stderr).toMatch(/^NETWORK: cannot reach .*\(ECONNREFUSED\)\n/);
    } finally {
      await restart();
    }
    const back = await runCli(['pull', '--stdout'], { env: u.env });
    expect([back.code, back.stderr]).toEqual([0, '']);
  });

  it('refuses a copy older than --max-stale (flag or SVCENV_MAX_STALE) and says why in the hint', async () => {
    const u = user();
    expect((await runCli(['pull', '--stdout'], { env: u.env })).code).toBe(0);
    await server.stop();
    try {
      await new Promise((r) => setTimeout(r, 1200));
      for (const args of [['--max-stale', '1s'], []]) {
        const env = args.length ? u.env : { ...u.env, SVCENV_MAX_STALE: '1s' };
        const r = await runCli(['pull', '--stdout', ...args], { env });
        expect(r.code, args.join(' ')).toBe(1);
        expect(r.stdout).toBe('');
        expect(r.stderr).toMatch(
          /^NETWORK: cannot reach .*\(ECONNREFUSED\)\nhint: .*the cached copy is \d+s old, beyond --max-stale\n$/,
        );
      }
      const within = await runCli(['pull', '--stdout', '--max-stale', '30m'], { env: u.env });
      expect(within.code).toBe(0);
      const bad = await runCli(['pull', '--stdout', '--max-stale', '10 years'], { env: u.env });
      expect([bad.code, bad.stderr]).toEqual([
        1,
        'error: --max-stale must be a duration such as 90s, 30m, 24h or 7d (or 0)\n',
      ]);
    } finally {
      await restart();
    }
  });

  it('sends the cached ETag (304 uses the cached body); falls back on 503, 429 and on no answer within SVCENV_TIMEOUT', async () => {
    const p = await proxy();
    try {
      const u = user(p.url);
      const first = await runCli(['pull', '--stdout'], { env: u.env });
      expect(first.code, first.stderr).toBe(0);
      const again = await runCli(['pull', '--stdout'], { env: u.env });
      expect([again.code, again.stdout]).toEqual([0, first.stdout]);
      expect(p.seen.map((s) => s.status)).toEqual([200, 304]);
      expect(p.seen[0]!.ifNoneMatch).toBeUndefined();
      expect(p.seen[1]!.ifNoneMatch).toMatch(/^"/);

      for (const status of [503, 429] as const) {
        p.state.answer = status;
        const r = await runCli(['pull', '--stdout'], { env: u.env });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toBe(first.stdout);
        expect(r.stderr).toMatch(
          new RegExp(`^warning: using the cached copy .* ago: the server answered ${status} \\(`),
        );
      }
      p.state.answer = 'hang';
      const t = Date.now();
      const slow = await runCli(['pull', '--stdout'], { env: { ...u.env, SVCENV_TIMEOUT: '0.5' } });
      expect(slow.code, slow.stderr).toBe(0);
      expect(slow.stderr).toMatch(/: cannot reach http:\/\/127\.0\.0\.1:\d+ \(no answer within 0\.5 s\)\n$/);
      expect(Date.now() - t).toBeLessThan(5000);
      // 400-class answers other than 401/403/404 neither fall back nor evict.
      p.state.answer = 400;
      const bad = await runCli(['pull', '--stdout'], { env: u.env });
      expect(bad.code).toBe(1);
      expect(cacheFiles(u.cache)).toHaveLength(1);
    } finally {
      p.close();
    }
  });

  it('a revoked token loses its cache: the 401 deletes the entry, and then nothing falls back', async () => {
    const created = await createToken(server, jwt, { scope: 'read', projectId: project.id });
    const u = user(server.url, created.token);
    expect((await runCli(['pull', '--stdout'], { env: u.env })).code).toBe(0);
    expect(cacheFiles(u.cache)).toHaveLength(1);
    const revoked = await server.request('DELETE', `/v1/tokens/${created.id}`, { token: jwt });
    expect(revoked.status).toBe(204);
    const r = await runCli(['pull', '--stdout'], { env: u.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^UNAUTHORIZED: /);
    expect(cacheFiles(u.cache)).toEqual([]);
    // A 404 (a project gone) deletes its entry as well; another project's entry stays.
    const wide = (await createToken(server, jwt, { scope: 'read' })).token;
    const doomed = await createProject(server, jwt, { name: 'Doomed', envs: ['dev'] });
    const w = { ...u.env, SVCENV_TOKEN: wide };
    expect((await runCli(['pull', '--stdout'], { env: w })).code).toBe(0);
    expect((await runCli(['pull', '--stdout'], { env: { ...w, SVCENV_PROJECT: doomed.id } })).code).toBe(0);
    expect(cacheFiles(u.cache)).toHaveLength(2);
    expect((await server.request('DELETE', `/v1/projects/${doomed.id}`, { token: jwt })).status).toBe(204);
    const gone = await runCli(['pull', '--stdout'], { env: { ...w, SVCENV_PROJECT: doomed.id } });
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^NOT_FOUND: /);
    expect(cacheFiles(u.cache)).toHaveLength(1);
    // With the server stopped, the revoked token has nothing to fall back on.
    await server.stop();
    try {
      const after = await runCli(['pull', '--stdout'], { env: u.env });
      expect(after.code).toBe(1);
      expect(after.stderr).toMatch(/^NETWORK: /);
    } finally {
      await restart();
    }
  });

  it('cache files are 0600 in a 0700 directory (~/.cache/svcenv by default) and reveal neither value, token nor target', async () => {
    const u = user();
    const { SVCENV_CACHE_DIR: _, ...env } = u.env;
    for (const format of ['dotenv', 'json', 'k8s']) {
      const r = await runCli(['pull', '--stdout', '--format', format], { env });
      expect(r.code, r.stderr).toBe(0);
    }
    expect(existsSync(u.cache)).toBe(false);
    const dir = join(u.home, '.cache', 'svcenv');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    // One file for the (API URL, project, environment, credential), whatever the format.
    const files = cacheFiles(dir);
    expect(files).toHaveLength(1);
    // (Not 'dev' or the port: three to five bytes turn up in random bytes now and then.)
    const secretShapes = [SECRET, token, token.slice(0, 12), project.id, server.url];
    for (const name of files) {
      const file = join(dir, name);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(name).toMatch(/^[0-9a-f]{40}$/);
      const bytes = readFileSync(file);
      for (const s of secretShapes) {
        expect(name).not.toContain(s);
        expect(bytes.includes(Buffer.from(s)), s).toBe(false);
        expect(bytes.includes(Buffer.from(Buffer.from(s).toString('base64'))), `${s} in base64`).toBe(false);
      }
    }
    // XDG_CACHE_HOME comes before ~/.cache.
    const xdg = join(u.home, 'xdg');
    expect((await runCli(['pull', '--stdout'], { env: { ...env, XDG_CACHE_HOME: xdg } })).code).toBe(0);
    expect(cacheFiles(join(xdg, 'svcenv'))).toHaveLength(1);
  });

  it('--offline makes no request: the cache within --max-stale, or exit 1 without one', async () => {
    const p = await proxy();
    try {
      const u = user(p.url);
      const none = await runCli(['pull', '--stdout', '--offline'], { env: u.env });
      expect(none.code).toBe(1);
      expect(none.stderr).toMatch(/^OFFLINE: no cached copy of this environment/);
      const noneRun = await runCli(['run', '--all', '--offline', '--', 'echo', 'started'], { env: u.env });
      expect([noneRun.code, noneRun.stdout]).toEqual([1, '']);
      expect(p.seen).toEqual([]);
      expect((await runCli(['pull', '--stdout'], { env: u.env })).code).toBe(0);
      expect(p.seen).toHaveLength(1);
      const cwd = tempDir();
      const off = await runCli(['pull', '--offline'], { env: u.env, cwd });
      expect(off.code, off.stderr).toBe(0);
      expect(off.stderr).toMatch(/^warning: using the cached copy the server confirmed \d+s ago: --offline\n$/);
      expect(readFileSync(join(cwd, '.env'), 'utf8')).toContain(`DB_PASSWORD=${SECRET}\n`);
      const run = await runCli(['run', '--only', 'DB_PASSWORD', '--offline', '--', 'sh', '-c', 'echo $DB_PASSWORD'], {
        env: u.env,
      });
      expect([run.code, run.stdout]).toEqual([0, '***\n']);
      expect(p.seen).toHaveLength(1);
      const stale = await runCli(['pull', '--stdout', '--offline', '--max-stale', '0'], { env: u.env });
      expect(stale.code).toBe(1);
      expect(stale.stderr).toMatch(/^OFFLINE: the cached copy of this environment is \d+s old, beyond --max-stale/);
    } finally {
      p.close();
    }
  });
});

describe('arguments in the wrong place are named, never repeated', () => {
  it('--env is checked against the environment-name rule before any request', async () => {
    const p = await proxy();
    try {
      const u = user(p.url);
      for (const [cmd, value] of [
        ['pull', token],
        ['pull', SECRET.toUpperCase()],
        ['run', 'a secret with spaces'],
        ['pull', 'x'.repeat(65)],
      ] as const) {
        const args =
          cmd === 'run' ? ['run', '--env', value, '--all', '--', 'true'] : ['pull', '--stdout', '--env', value];
        const r = await runCli(args, { env: u.env });
        expect(r.code, value).toBe(1);
        expect(r.stderr).toMatch(
          /^error: the environment \(--env, SVCENV_ENV, .svcenv.json or the config file\) is not an environment name/,
        );
        expect(r.stderr).toContain('it is not repeated');
        expect(r.stderr).not.toContain(value);
        expect(r.stderr.toLowerCase()).not.toContain(value.toLowerCase().slice(0, 10));
      }
      const viaEnv = await runCli(['pull', '--stdout'], { env: { ...u.env, SVCENV_ENV: token } });
      expect(viaEnv.code).toBe(1);
      expect(viaEnv.stderr).toContain('but an access token');
      expect(viaEnv.stderr).not.toContain(token);
      expect(p.seen).toEqual([]);
    } finally {
      p.close();
    }
  });

  it('--only and --except: a token or a value is counted, not repeated; positionals before -- are not repeated', async () => {
    const u = user();
    const cases: string[][] = [
      ['run', '--only', `PORT,${token}`, '--', 'true'],
      ['run', '--only', 'PORT,value with spaces', '--', 'true'],
      ['run', '--all', '--except', token, '--', 'true'],
      ['run', '--all', token, '--', 'true'],
    ];
    for (const args of cases) {
      const r = await runCli(args, { env: u.env });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).not.toContain(token);
      expect(r.stderr).not.toContain('with spaces');
    }
    // A key-shaped entry equal to one of the environment's values: known only after the pull, counted.
    await upsert(
      server,
      jwt,
      project.id,
      ['staging'],
      [{ key: 'API_KEY', value: 'sk_live_AbCdEf123456', type: 'secret' }],
    );
    const r = await runCli(['run', '--only', 'PORT,NOPE,sk_live_AbCdEf123456', '--', 'true'], {
      env: { ...u.env, SVCENV_ENV: 'staging' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'NOT_FOUND: --only names keys that do not exist: PORT, NOPE, one entry equal to a value (not repeated)\n',
    );
  });
});
