/**
 * The compiled svcenv against the real server (server/test/harness.ts startServer), as a user runs it.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { historyResponse, listVarsResponse } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  createToken,
  freePort,
  type ServerProcess,
  signupUser,
  startServer,
  upsert,
} from '../../server/test/harness.js';
import { runCli, spawnCli, tempDir, waitFor } from './helpers.js';

const SECRET = 'hunter2-correct-horse';
const SHORT = 'abcde';

let server: ServerProcess;
let project: { id: string; name: string };
let writeToken: string;
let readToken: string;
/** SVCENV_* for the write token; each test adds HOME and whatever it checks. */
let env: Record<string, string>;

beforeAll(async () => {
  server = await startServer();
  const { jwt } = await signupUser(server);
  project = await createProject(server, jwt, { name: 'Shop API' });
  writeToken = (await createToken(server, jwt, { scope: 'write', projectId: project.id })).token;
  readToken = (await createToken(server, jwt, { scope: 'read', projectId: project.id })).token;
  await upsert(
    server,
    jwt,
    project.id,
    ['dev'],
    [
      { key: 'DB_PASSWORD', value: SECRET, type: 'secret' },
      { key: 'SHORT', value: SHORT, type: 'secret' },
      { key: 'MULTI', value: 'line one\nline "two"', type: 'plain' },
      { key: 'PORT', value: '8080', type: 'plain' },
    ],
  );
  await upsert(server, jwt, project.id, ['staging'], [{ key: 'ONLY_STAGING', value: 'staging-value', type: 'plain' }]);
  env = { SVCENV_API_URL: server.url, SVCENV_TOKEN: writeToken, SVCENV_PROJECT: project.id, SVCENV_ENV: 'dev' };
});

afterAll(async () => {
  await server?.stop();
});

const home = () => ({ HOME: tempDir('svcenv-home-') });

describe('version and help', () => {
  it('prints the version and a help for every command', async () => {
    const version = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')).version;
    expect((await runCli(['version'])).stdout).toBe(`svcenv ${version}\n`);
    for (const cmd of ['login', 'pull', 'run', 'push', 'diff', 'projects', 'upgrade', 'version']) {
      const r = await runCli([cmd, '--help']);
      expect(r.code, cmd).toBe(0);
      expect(r.stdout).toContain(`Usage: svcenv ${cmd}`);
    }
    const bad = await runCli(['pull', '--bogus']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('unknown flag --bogus');
  });
});

describe('login and configuration', () => {
  it('login reads the token from stdin and writes a 0600 config that pull then uses alone', async () => {
    const h = home();
    const cwd = tempDir();
    const login = await runCli(['login', '--token', '-', '--api-url', server.url], {
      env: h,
      input: `${writeToken}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).not.toContain(writeToken);
    const path = join(h.HOME, '.config', 'svcenv', 'config.json');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const config = JSON.parse(readFileSync(path, 'utf8'));
    expect(config).toEqual({ apiUrl: server.url, token: writeToken, project: project.id });
    // The env comes from the file too once it is there.
    writeFileSync(path, JSON.stringify({ ...config, env: 'staging' }));
    const pull = await runCli(['pull', '--stdout'], { env: h, cwd });
    expect(pull.code, pull.stderr).toBe(0);
    expect(pull.stdout).toContain('ONLY_STAGING=staging-value');
    // Environment variables beat the file, flags beat environment variables.
    const viaEnv = await runCli(['pull', '--stdout'], { env: { ...h, SVCENV_ENV: 'dev' }, cwd });
    expect(viaEnv.stdout).toContain('PORT=8080');
    const viaFlag = await runCli(['pull', '--stdout', '--env', 'staging'], { env: { ...h, SVCENV_ENV: 'dev' }, cwd });
    expect(viaFlag.stdout).toContain('ONLY_STAGING=');
  });

  it('login refuses a bad token without writing anything', async () => {
    const h = home();
    const r = await runCli(['login', '--token', 'tok_live_wrong', '--api-url', server.url], { env: h });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^UNAUTHORIZED: /);
    expect(r.stderr).not.toContain('tok_live_wrong');
    expect(existsSync(join(h.HOME, '.config', 'svcenv', 'config.json'))).toBe(false);
  });

  it('D4: refuses http:// to a non-loopback host before sending anything', async () => {
    const r = await runCli(['pull', '--stdout'], {
      env: { ...env, ...home(), SVCENV_API_URL: 'http://svcenv.example.com' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('refusing plain http://');
    expect(r.stderr).not.toContain(writeToken);
  });

  it('a server that is not there: NETWORK with the system error code, exit 1', async () => {
    const port = await freePort(); // handed out and released: nothing listens on it
    const url = `http://127.0.0.1:${port}`;
    const r = await runCli(['pull', '--stdout'], { env: { ...env, ...home(), SVCENV_API_URL: url } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`NETWORK: cannot reach ${url} (ECONNREFUSED)`);
    expect(r.stderr).toContain('hint: check SVCENV_API_URL');
    expect(r.stdout + r.stderr).not.toContain(writeToken);
  });
});

describe('pull', () => {
  it('login rewrites a config file it cannot read (its own hint says to run login)', async () => {
    const h = home();
    const dir = join(h.HOME, '.config', 'svcenv');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'config.json'), '{bad');
    const broken = await runCli(['pull', '--stdout'], { env: { ...h, SVCENV_ENV: 'dev' } });
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('run `svcenv login` again');
    const r = await runCli(['login', '--token', '-', '--api-url', server.url], { env: h, input: `${readToken}\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('not valid JSON; it is replaced');
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))).toMatchObject({ apiUrl: server.url });
  });

  it('names the file the user gave when it cannot be written, and never repeats a token given as a project', async () => {
    const cwd = tempDir();
    const r = await runCli(['pull', '--file', 'missing/dir/.env'], { env: { ...env, ...home() }, cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^error: cannot write \S*missing\/dir\/\.env \(ENOENT\)\nhint: create the directory \S*missing\/dir first\n$/,
    );
    const p = await runCli(['pull', '--stdout', '--project', writeToken], { env: { ...env, ...home() } });
    expect(p.code).toBe(1);
    expect(p.stderr).not.toContain(writeToken);
  });

  it('warns when git would not ignore the written file, and says how to ignore it', async () => {
    const repo = tempDir();
    execFileSync('git', ['init', '-q', repo]);
    mkdirSync(join(repo, 'app'));
    const cwd = join(repo, 'app');
    const pull = (args: string[] = [], extra: Record<string, string> = {}) =>
      runCli(['pull', ...args], { env: { ...env, ...home(), ...extra }, cwd });
    const r = await pull();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(
      'warning: .env is in a git work tree that does not ignore it (`git status` lists it, `git add .` would commit its values)\n' +
        'hint: ignore it: echo .env >> .gitignore\n',
    );
    expect(execFileSync('git', ['status', '--porcelain', '-uall'], { cwd, encoding: 'utf8' })).toContain(
      '?? app/.env\n',
    );
    // Another file elsewhere in the tree: the hint names the .gitignore beside it.
    mkdirSync(join(cwd, 'conf'));
    const nested = await pull(['--file', 'conf/app.env']);
    expect(nested.stderr).toContain('warning: conf/app.env is in a git work tree that does not ignore it');
    expect(nested.stderr).toContain('hint: ignore it: echo app.env >> conf/.gitignore\n');
    // Followed, the hint silences the warning.
    execFileSync('sh', ['-c', 'echo .env >> .gitignore'], { cwd });
    const ignored = await pull();
    expect([ignored.code, ignored.stderr]).toEqual([0, '']);
    expect(execFileSync('git', ['status', '--porcelain', '-uall'], { cwd, encoding: 'utf8' })).not.toContain(
      'app/.env\n',
    );
    // --stdout writes no file; outside a work tree and without git there is nothing to say.
    expect((await pull(['--stdout', '--file', 'other.env'])).stderr).toBe('');
    const outside = await runCli(['pull'], { env: { ...env, ...home() }, cwd: tempDir() });
    expect([outside.code, outside.stderr]).toEqual([0, '']);
    const noGit = await pull(['--file', 'conf/app.env'], { PATH: tempDir('no-git-') });
    expect([noGit.code, noGit.stderr]).toEqual([0, '']);
  });

  it('non-interactive with SVCENV_* only: writes .env 0600, fixing the mode of an existing file', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, '.env'), 'OLD=1\n', { mode: 0o644 });
    chmodSync(join(cwd, '.env'), 0o644);
    const r = await runCli(['pull'], { env: { ...env, HOME: join(cwd, 'no-home') }, cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('wrote 4 variables (+3 context variables) to .env');
    expect(statSync(join(cwd, '.env')).mode & 0o777).toBe(0o600);
    const text = readFileSync(join(cwd, '.env'), 'utf8');
    expect(text).toContain(`DB_PASSWORD=${SECRET}\n`);
    expect(text).toContain('MULTI="line one\\nline \\"two\\""\n');
    expect(text).toContain(`SVCENV_PROJECT=${project.id}\n`);
    expect(text).not.toContain('OLD=1');
  });

  it('--file/--output/SVCENV_OUTPUT, --no-metadata, --format k8s, --stdout', async () => {
    const cwd = tempDir();
    expect(
      (await runCli(['pull', '--output', 'a.env', '--no-metadata'], { env: { ...env, ...home() }, cwd })).code,
    ).toBe(0);
    const a = readFileSync(join(cwd, 'a.env'), 'utf8');
    expect(a).toContain('PORT=8080');
    expect(a).not.toContain('SVCENV_');
    expect((await runCli(['pull', '--file', 'b.env'], { env: { ...env, ...home() }, cwd })).code).toBe(0);
    expect(existsSync(join(cwd, 'b.env'))).toBe(true);
    expect((await runCli(['pull'], { env: { ...env, ...home(), SVCENV_OUTPUT: 'c.env' }, cwd })).code).toBe(0);
    expect(statSync(join(cwd, 'c.env')).mode & 0o777).toBe(0o600);
    const k8s = await runCli(['pull', '--stdout', '--format', 'k8s'], { env: { ...env, ...home() }, cwd });
    expect(k8s.stdout).toContain('kind: Secret');
    expect(k8s.stdout).toContain(`DB_PASSWORD: ${Buffer.from(SECRET).toString('base64')}`);
    expect(existsSync(join(cwd, '.env'))).toBe(false);
    const bad = await runCli(['pull', '--format', 'yaml'], { env: { ...env, ...home() }, cwd });
    expect(bad.code).toBe(1);
  });

  it('D40: appends every variable to $GITHUB_ENV in the KEY<<DELIMITER form', async () => {
    const cwd = tempDir();
    const ghEnv = join(cwd, 'github_env');
    writeFileSync(ghEnv, 'EXISTING=1\n');
    const r = await runCli(['pull', '--stdout', '--no-metadata'], {
      env: { ...env, ...home(), GITHUB_ACTIONS: 'true', GITHUB_ENV: ghEnv },
      cwd,
    });
    expect(r.code, r.stderr).toBe(0);
    const text = readFileSync(ghEnv, 'utf8');
    expect(text.startsWith('EXISTING=1\n')).toBe(true);
    // Parse it the way the runner does.
    const parsed = new Map<string, string>();
    const lines = text.split('\n').slice(1);
    for (let i = 0; i < lines.length && lines[i]; i++) {
      const [, key, delim] = /^([A-Za-z_][A-Za-z0-9_]*)<<(.+)$/.exec(lines[i]!)!;
      const value: string[] = [];
      while (lines[++i] !== delim) value.push(lines[i]!);
      parsed.set(key!, value.join('\n'));
    }
    expect(Object.fromEntries(parsed)).toEqual({
      DB_PASSWORD: SECRET,
      MULTI: 'line one\nline "two"',
      PORT: '8080',
      SHORT,
    });
    // Without GITHUB_ACTIONS=true nothing is appended.
    await runCli(['pull', '--stdout'], { env: { ...env, ...home(), GITHUB_ENV: ghEnv }, cwd });
    expect(readFileSync(ghEnv, 'utf8')).toBe(text);
  });

  it('API errors print their code, exit 1, never the token', async () => {
    const r = await runCli(['pull', '--stdout'], {
      env: { ...env, ...home(), SVCENV_TOKEN: 'tok_live_doesnotexist1234' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^UNAUTHORIZED: .*\nhint: /);
    expect(r.stderr).not.toContain('doesnotexist');
    const missing = await runCli(['pull', '--stdout'], { env: { ...env, ...home(), SVCENV_ENV: 'nope' } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^(NOT_FOUND|FORBIDDEN): /);
  });
});

describe('push and diff', () => {
  it('push --dry-run lists keys and makes no API call; push upserts; a read token is FORBIDDEN', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, '.env'), `# local\nexport NEW_KEY='new value'\nPORT=9090\nSVCENV_ENV=dev\n`);
    // No server at this address: a dry run must not need one.
    const dry = await runCli(['push', '--dry-run'], {
      env: { ...env, ...home(), SVCENV_API_URL: 'http://127.0.0.1:9' },
      cwd,
    });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe('NEW_KEY\nPORT\n2 keys would be sent (dry run)\n');
    const forbidden = await runCli(['push', '--env', 'staging'], {
      env: { ...env, ...home(), SVCENV_TOKEN: readToken },
      cwd,
    });
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toMatch(/^FORBIDDEN: /);
    const push = await runCli(['push', '--env', 'staging'], { env: { ...env, ...home() }, cwd });
    expect(push.code, push.stderr).toBe(0);
    // The specification's line, then the keys (ADR 0028).
    expect(push.stdout).toBe('2 created, 0 updated\ncreated: NEW_KEY, PORT\n');
    writeFileSync(join(cwd, '.env'), 'PORT=9091\nONLY_STAGING=changed\n');
    const again = await runCli(['push', '--env', 'staging'], { env: { ...env, ...home() }, cwd });
    expect(again.stdout).toBe('0 created, 2 updated\nupdated: PORT, ONLY_STAGING\n');
    // Keys absent from the file are left alone, and types are kept.
    const vars = await server.request('GET', `/v1/projects/${project.id}/envs/staging/vars?reveal=true`, {
      token: writeToken,
      schema: listVarsResponse,
    });
    const byKey = Object.fromEntries(vars.body.vars.map((v) => [v.key, v]));
    expect(byKey.NEW_KEY).toMatchObject({ value: 'new value', type: 'secret' });
    expect(byKey.ONLY_STAGING).toMatchObject({ value: 'changed', type: 'plain' });
    expect(byKey.SVCENV_ENV).toBeUndefined();
  });

  it('D56: push of a pulled file changes nothing; references stay references; only real edits are sent', async () => {
    const cwd = tempDir();
    const e = { ...env, ...home(), SVCENV_ENV: 'prod' };
    /* biome-ignore-start lint/suspicious/noTemplateCurlyInString: literal reference syntax */
    const stored = {
      PASSWORD: { value: SECRET, type: 'secret' },
      DATABASE_URL: { value: 'postgres://app:${PASSWORD}@db:5432/app', type: 'plain' },
      ESCAPED: { value: 'cost $${AMOUNT}', type: 'plain' },
      HOST_ALIAS: { value: '${DATABASE_URL}', type: 'secret' },
      PLAIN: { value: 'one', type: 'plain' },
    };
    /* biome-ignore-end lint/suspicious/noTemplateCurlyInString: literal reference syntax */
    const { jwt } = await signupUser(server, 'Grace');
    const p = await createProject(server, jwt, { name: 'Push Back' });
    const token = (await createToken(server, jwt, { scope: 'write', projectId: p.id })).token;
    await upsert(
      server,
      jwt,
      p.id,
      ['prod'],
      Object.entries(stored).map(([key, v]) => ({ key, ...v })),
    );
    const pe = { ...e, SVCENV_PROJECT: p.id, SVCENV_TOKEN: token };
    const listing = async () => {
      const r = await server.request('GET', `/v1/projects/${p.id}/envs/prod/vars?reveal=true`, {
        token,
        schema: listVarsResponse,
      });
      return Object.fromEntries(r.body.vars.map((v) => [v.key, v]));
    };
    const history = async (key: string) =>
      (
        await server.request('GET', `/v1/projects/${p.id}/envs/prod/vars/${key}/history`, {
          token,
          schema: historyResponse,
        })
      ).body.history;

    expect((await runCli(['pull'], { env: pe, cwd })).code).toBe(0);
    const pushed = await runCli(['push'], { env: pe, cwd });
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(pushed.stdout).toBe('0 created, 0 updated\n');
    const after = await listing();
    for (const [key, v] of Object.entries(stored)) {
      expect(after[key], key).toMatchObject(v);
      expect(await history(key), key).toHaveLength(1);
    }

    // A local value equal to the stored reference text is no change either; a real edit and a new key are.
    const text = readFileSync(join(cwd, '.env'), 'utf8');
    const edited = `${text.replace(/^PLAIN=.*$/m, 'PLAIN=two').replace(/^HOST_ALIAS=.*$/m, "HOST_ALIAS='${DATABASE_URL}'")}NEW=1\n`;
    writeFileSync(join(cwd, '.env'), edited);
    // prod is protected: a push that changes it is confirmed (--yes here, ADR 0028); the one above changed nothing.
    const second = await runCli(['push', '--yes'], { env: pe, cwd });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe('1 created, 1 updated\ncreated: NEW\nupdated: PLAIN\n');
    const last = await listing();
    expect(last.PLAIN).toMatchObject({ value: 'two', type: 'plain' });
    expect(last.NEW).toMatchObject({ value: '1', type: 'secret' });
    expect(last.DATABASE_URL?.value).toBe(stored.DATABASE_URL.value);
    expect(await history('HOST_ALIAS')).toHaveLength(1);
    expect(second.stdout + second.stderr + pushed.stdout + pushed.stderr).not.toContain(SECRET);
  });

  it('D46: push sends the revision it compared against; a change made on the server in between is a 412, exit 1', async () => {
    const cwd = tempDir();
    const { jwt } = await signupUser(server, 'Hopper');
    const p = await createProject(server, jwt, { name: 'Race' });
    const token = (await createToken(server, jwt, { scope: 'write', projectId: p.id })).token;
    await upsert(server, jwt, p.id, ['dev'], [{ key: 'SHARED', value: 'original', type: 'plain' }]);
    // A loopback proxy in front of the server: just before it forwards push's write, someone else changes
    // the environment, as a colleague's edit landing between push's comparison and its write would.
    const proxy = createHttpServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      // push's write carries `?validate=true` (D67).
      if (req.method === 'POST' && req.url?.split('?')[0] === `/v1/projects/${p.id}/vars`) {
        await server.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/SHARED`, {
          token: jwt,
          body: { value: 'colleague' },
        });
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length') as [string, string][],
      );
      const answer = await fetch(server.url + req.url, {
        method: req.method,
        headers,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      res.writeHead(answer.status, Object.fromEntries(answer.headers));
      res.end(Buffer.from(await answer.arrayBuffer()));
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const port = (proxy.address() as AddressInfo).port;
      writeFileSync(join(cwd, '.env'), 'SHARED=mine\n');
      const e = {
        ...env,
        ...home(),
        SVCENV_API_URL: `http://127.0.0.1:${port}`,
        SVCENV_PROJECT: p.id,
        SVCENV_TOKEN: token,
      };
      const pushed = await runCli(['push'], { env: e, cwd });
      expect(pushed.code).toBe(1);
      expect(pushed.stderr).toMatch(/^PRECONDITION_FAILED: /);
      expect(pushed.stderr).toContain('svcenv diff');
      // The colleague's value stands; nothing of the file was written.
      const vars = await server.request('GET', `/v1/projects/${p.id}/envs/dev/vars`, {
        token,
        schema: listVarsResponse,
      });
      expect(vars.body.vars.find((v) => v.key === 'SHARED')?.value).toBe('colleague');
      // Straight to the server (no change in between), the same push goes through.
      const direct = await runCli(['push'], { env: { ...e, SVCENV_API_URL: server.url }, cwd });
      expect([direct.code, direct.stdout]).toEqual([0, '0 created, 1 updated\nupdated: SHARED\n']);
    } finally {
      proxy.close();
    }
  });

  it('diff: ~ differ, + remote only, - local only, --keys, context variables suppressed, exit 0/1', async () => {
    const cwd = tempDir();
    const e = { ...env, ...home() };
    expect((await runCli(['pull'], { env: e, cwd })).code).toBe(0);
    const same = await runCli(['diff'], { env: e, cwd });
    expect(same.code, same.stdout + same.stderr).toBe(0);
    expect(same.stdout).toBe('');
    writeFileSync(join(cwd, 'local.env'), `DB_PASSWORD=other\nLOCAL_ONLY=1\nPORT=8080\nSVCENV_ENV=dev\n`);
    const d = await runCli(['diff', '--file', 'local.env'], { env: e, cwd });
    expect(d.code).toBe(1);
    expect(d.stdout).toBe('~ DB_PASSWORD\n- LOCAL_ONLY\n+ MULTI\n+ SHORT\n');
    expect(d.stdout + d.stderr).not.toContain(SECRET);
    const k = await runCli(['diff', '--file', 'local.env', '--keys', 'PORT,SHORT'], { env: e, cwd });
    expect([k.code, k.stdout]).toEqual([1, '+ SHORT\n']);
    const none = await runCli(['diff', '--file', 'local.env', '--keys', 'PORT'], { env: e, cwd });
    expect(none.code).toBe(0);
    const err = await runCli(['diff', '--file', 'missing.env'], { env: e, cwd });
    expect(err.code).toBe(1);
  });

  it('projects lists id, slug, name and envs', async () => {
    const r = await runCli(['projects'], { env: { ...env, ...home() } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`^ID +SLUG +NAME +ENVS\\n${project.id} +shop-api +Shop API +dev,staging,prod\\n$`),
    );
  });
});

describe('run', () => {
  const e = () => ({ ...env, ...home() });

  it('flag errors exit 1 before the command starts', async () => {
    const cwd = tempDir();
    const marker = join(cwd, 'started');
    const cases: [string[], RegExp][] = [
      [['run', '--all', 'touch', marker], /missing `--`/],
      [['run', '--', 'touch', marker], /choose a scope/],
      [['run', '--all', '--only', 'PORT', '--', 'touch', marker], /mutually exclusive/],
      [['run', '--only', 'PORT', '--except', 'SHORT', '--', 'touch', marker], /only with --all/],
      [['run', '--only', 'PORT', '--', 'touch', `${marker}{{DB_PASSWORD}}`], /outside the scope/],
      [['run', '--all', '--except', 'DB_PASSWORD', '--', 'touch', '{{DB_PASSWORD}}'], /outside the scope/],
      [['run', '--all', '--'], /no command/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args, { env: e(), cwd });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toMatch(message);
    }
    expect(existsSync(marker)).toBe(false);
    // Without `--`, the hint shows where it goes; a value pasted into --only is not repeated in it.
    const pasted = await runCli(['run', '--only', 'PORT,hunter2 secret value', 'touch', marker], { env: e(), cwd });
    expect(pasted.code).toBe(1);
    expect(pasted.stderr).toContain(`svcenv run <options> -- touch ${marker}`);
    expect(pasted.stderr).not.toContain('hunter2');
  });

  it('exposes the scope as environment variables and passes exit codes through', async () => {
    const script =
      'echo "port=$PORT short=$SHORT has_pw=${DB_PASSWORD:+yes} has_token=${SVCENV_TOKEN:+yes}"; exit "$1"';
    for (const code of [0, 1, 42]) {
      const r = await runCli(
        ['run', '--all', '--except', 'DB_PASSWORD', '--', 'sh', '-c', script, 'sh', String(code)],
        {
          env: e(),
        },
      );
      expect(r.code).toBe(code);
      expect(r.stdout).toBe('port=8080 short=abcde has_pw= has_token=\n');
    }
    const only = await runCli(['run', '--only', 'PORT', '--', 'sh', '-c', 'echo "$PORT-${SHORT:-unset}"'], {
      env: e(),
    });
    expect(only.stdout).toBe('8080-unset\n');
    const missing = await runCli(['run', '--only', 'NOPE', '--', 'true'], { env: e() });
    expect(missing.code).toBe(1);
  });

  it('scrubs exposed values from stdout and stderr, also split across writes 10 ms apart; 5 chars stay', async () => {
    const half = SECRET.length / 2;
    const script = [
      `printf '%s' "a=${SECRET.slice(0, half)}"`,
      'sleep 0.01',
      `printf '%s\\n' "${SECRET.slice(half)}"`,
      'echo "env=$DB_PASSWORD short=$SHORT" >&2',
      'printf "%s\\n" "$MULTI"',
    ].join('; ');
    const r = await runCli(['run', '--all', '--', 'sh', '-c', script], { env: e() });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('a=***\n***\n');
    expect(r.stderr).toBe(`env=*** short=${SHORT}\n`);
  });

  it('scrubs a user variable that overrides a context variable; the server’s own context values stay readable', async () => {
    await upsert(
      server,
      writeToken,
      project.id,
      ['staging'],
      [{ key: 'SVCENV_PROJECT_NAME', value: 'TopSecretOverride', type: 'secret' }],
    );
    const script = 'echo "$SVCENV_PROJECT_NAME $SVCENV_ENV $SVCENV_PROJECT"';
    const r = await runCli(['run', '--all', '--', 'sh', '-c', script], { env: { ...e(), SVCENV_ENV: 'staging' } });
    // "staging" (7 characters) is the server's context value: left readable.
    expect(r.stdout).toBe(`*** staging ${project.id}\n`);
  });

  it('substitutes {{KEY}} just before exec', async () => {
    const r = await runCli(['run', '--only', 'PORT', '--', 'echo', 'listen={{PORT}}'], { env: e() });
    expect(r.stdout).toBe('listen=8080\n');
  });

  it('keeps values out of argv: ps shows none, the child has them in its environment', async () => {
    const run = spawnCli(['run', '--all', '--', 'sh', '-c', 'echo $$; exec sleep 5'], { env: e() });
    await waitFor(() => /\d+\n/.test(run.out().stdout), 'the child pid');
    const pid = run.out().stdout.trim();
    const ps = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
    expect(ps).toContain('sleep 5');
    expect(ps).not.toContain(SECRET);
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toContain(SECRET);
    expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain(`DB_PASSWORD=${SECRET}`);
    run.child.kill('SIGTERM');
    const done = await run.done;
    expect(done.code).toBe(128 + 15);
  });

  it('forwards SIGINT and SIGTERM to the child and passes its exit code', async () => {
    for (const [signal, code] of [
      ['SIGTERM', 7],
      ['SIGINT', 8],
    ] as const) {
      const script = `trap 'echo got-${signal}; exit ${code}' ${signal.slice(3)}; echo ready; while :; do sleep 0.05; done`;
      const run = spawnCli(['run', '--all', '--', 'sh', '-c', script], { env: e() });
      await waitFor(() => run.out().stdout.includes('ready'), 'ready');
      run.child.kill(signal);
      const done = await run.done;
      expect(done.stdout).toBe(`ready\ngot-${signal}\n`);
      expect(done.code).toBe(code);
    }
  });
});
