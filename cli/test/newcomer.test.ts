/**
 * The compiled svcenv against the real server: what a newcomer needs (D51 completion, D58 short flags,
 * "did you mean", setup/.svcenv.json, whoami, logout, D59 vars).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { listVarsResponse } from '@svcenv/contract';
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

const SECRET = 'hunter2-correct-horse';

let server: ServerProcess;
let jwt: string;
let project: { id: string; name: string; slug: string };
let writeToken: { id: string; token: string };
let readToken: string;
/** SVCENV_* for the write token; each test adds HOME and what it checks. */
let env: Record<string, string>;

beforeAll(async () => {
  server = await startServer();
  ({ jwt } = await signupUser(server));
  project = await createProject(server, jwt, { name: 'Shop API' }); // dev, staging, prod
  writeToken = await createToken(server, jwt, { name: 'laptop', scope: 'write', projectId: project.id });
  readToken = (await createToken(server, jwt, { scope: 'read', projectId: project.id })).token;
  await upsert(
    server,
    jwt,
    project.id,
    ['dev'],
    [
      { key: 'DB_PASSWORD', value: SECRET, type: 'secret' },
      { key: 'PORT', value: '8080', type: 'plain' },
      { key: 'URL', value: 'http://localhost:${PORT}', type: 'plain' },
      { key: 'MULTI', value: 'one\ntwo', type: 'plain' },
    ],
  );
  await upsert(server, jwt, project.id, ['staging'], [{ key: 'ONLY_STAGING', value: 'staging-value', type: 'plain' }]);
  env = { SVCENV_API_URL: server.url, SVCENV_TOKEN: writeToken.token, SVCENV_PROJECT: project.id, SVCENV_ENV: 'dev' };
});

afterAll(async () => {
  await server?.stop();
});

const home = () => ({ HOME: tempDir('svcenv-home-') });

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

/** Every command of the top help, and every flag spelling of its own help: what the scripts must cover. */
async function helpTable(): Promise<Map<string, string[]>> {
  const top = (await runCli(['--help'])).stdout;
  const names = [
    ...top
      .split('Commands:\n')[1]!
      .split('\n\n')[0]!
      .matchAll(/^ {2}(\S+)/gm),
  ].map((m) => m[1]!);
  const table = new Map<string, string[]>();
  for (const name of names) {
    const help = (await runCli([name, '--help'])).stdout;
    // The rows of the Flags block: `  -p, --project <value>  description`.
    const rows = help.split('Flags:\n')[1]!.split('\n\n')[0]!.split('\n');
    table.set(
      name,
      rows.flatMap((r) =>
        [
          ...r
            .trim()
            .split(/ {2,}/)[0]!
            .matchAll(/--?[a-z][a-z-]*/g),
        ].map((m) => m[0]),
      ),
    );
  }
  return table;
}

describe('D51: svcenv completion', () => {
  it('bash: sourced, it registers svcenv and completes commands, flags and subcommands from the help table', async () => {
    const r = await runCli(['completion', 'bash']);
    expect(r.code, r.stderr).toBe(0);
    const dir = tempDir();
    const script = join(dir, 'svcenv.bash');
    writeFileSync(script, r.stdout);
    writeFileSync(join(dir, 'local.env'), '');
    const complete = (words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _svcenv; printf '%s\\n' "\${COMPREPLY[@]}"`,
          'bash',
          script,
          ...words,
        ],
        { cwd: dir, encoding: 'utf8' },
      )
        .split('\n')
        .filter(Boolean);
    expect(execFileSync('bash', ['-c', 'source "$1"; complete -p svcenv', 'bash', script], { encoding: 'utf8' })).toBe(
      'complete -F _svcenv svcenv\n',
    );
    expect(complete(['svcenv', 'pu'])).toEqual(['pull', 'push']);
    const table = await helpTable();
    const pullFlags = complete(['svcenv', 'pull', '--']);
    expect(pullFlags.sort()).toEqual(
      table
        .get('pull')!
        .filter((f) => f.startsWith('--'))
        .sort(),
    );
    expect(pullFlags).toContain('--format');
    expect(complete(['svcenv', 'pull', '-'])).toEqual(expect.arrayContaining(['-p', '-e', '-f', '--project']));
    expect(complete(['svcenv', 'vars', ''])).toEqual(['get', 'set', 'unset']);
    expect(complete(['svcenv', 'completion', ''])).toEqual(['bash', 'zsh', 'fish']);
    expect(complete(['svcenv', 'pull', '--file', 'loc'])).toEqual(['local.env']);
    expect(complete(['svcenv', 'help', 'wh'])).toEqual(['whoami']);
    // Every command and every flag of every command's help is in the script.
    for (const [name, flags] of table) {
      expect(complete(['svcenv', name.slice(0, -1)]), name).toContain(name);
      for (const flag of flags) expect(complete(['svcenv', name, flag]), `${name} ${flag}`).toContain(flag);
    }
  });

  it('zsh and fish: the scripts parse (zsh -n, fish -n) and name every command and flag', async () => {
    const table = await helpTable();
    for (const shell of ['zsh', 'fish'] as const) {
      const r = await runCli(['completion', shell]);
      expect(r.code, r.stderr).toBe(0);
      const file = join(tempDir(), `svcenv.${shell}`);
      writeFileSync(file, r.stdout);
      // Installed from Debian (apt-get install zsh fish) where the suite runs; without them, the content checks below.
      if (has(shell)) execFileSync(shell, ['-n', file]);
      for (const [name, flags] of table) {
        expect(r.stdout, `${shell} ${name}`).toMatch(shell === 'zsh' ? `'${name}:` : `-a ${name} `);
        for (const flag of flags) {
          const spelled =
            shell === 'zsh' ? flag : flag.startsWith('--') ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`;
          expect(r.stdout, `${shell} ${name} ${flag}`).toContain(spelled);
        }
      }
    }
    if (has('fish')) {
      // fish can also be asked what it would complete (`complete -C`), so the script is checked in use.
      const file = join(tempDir(), 'svcenv.fish');
      writeFileSync(file, (await runCli(['completion', 'fish'])).stdout);
      const out = execFileSync(
        'fish',
        ['-c', 'source $argv[1]; complete -C "svcenv pu"; complete -C "svcenv pull -"', file],
        {
          encoding: 'utf8',
        },
      );
      expect(out).toMatch(/^pull\t/m);
      expect(out).toMatch(/^push\t/m);
      expect(out).toMatch(/^-p\tproject id or slug$/m);
    }
    const bad = await runCli(['completion', 'tcsh']);
    expect([bad.code, bad.stderr]).toEqual([
      1,
      'error: name one shell: bash, zsh or fish\nhint: svcenv completion bash\n',
    ]);
  });
});

describe('D58: short flags, "did you mean", run without --', () => {
  it('-p, -e and -f mean --project, --env and --file, and the help shows them', async () => {
    const cwd = tempDir();
    const e = { ...env, ...home(), SVCENV_PROJECT: '', SVCENV_ENV: '' };
    const r = await runCli(['pull', '-p', project.id, '-e=staging', '-f', 'short.env'], { env: e, cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(cwd, 'short.env'), 'utf8')).toContain('ONLY_STAGING=staging-value');
    const help = (await runCli(['pull', '--help'])).stdout;
    expect(help).toMatch(/^ {2}-p, --project <value> /m);
    expect(help).toMatch(/^ {2}-e, --env <value> /m);
    expect(help).toMatch(/^ {2}-f, --file, --output <value> /m);
    // A short flag is one letter: `-project` is a typo of the long one.
    const typo = await runCli(['pull', '-project', project.id], { env: e, cwd });
    expect([typo.code, typo.stderr]).toEqual([
      1,
      'error: unknown flag -project\nhint: did you mean --project? (see: svcenv pull --help)\n',
    ]);
  });

  it('unknown commands and flags get "did you mean" when one is close, and a token is never repeated', async () => {
    const cmd = await runCli(['pul']);
    expect([cmd.code, cmd.stderr]).toEqual([
      1,
      'error: unknown command "pul"\nhint: did you mean `svcenv pull`? (`svcenv --help` lists the commands)\n',
    ]);
    expect((await runCli(['wohami'])).stderr).toContain('did you mean `svcenv whoami`?');
    const far = await runCli(['frobnicate']);
    expect(far.stderr).toBe(
      'error: unknown command "frobnicate"\nhint: run `svcenv --help` for the list of commands\n',
    );
    const flag = await runCli(['push', '--dryrun']);
    expect([flag.code, flag.stderr]).toEqual([
      1,
      'error: unknown flag --dryrun\nhint: did you mean --dry-run? (see: svcenv push --help)\n',
    ]);
    // A file named as other tools take it: where it goes, and nothing sent or written.
    const positional = await runCli(['push', 'prod.env'], { env: { ...env, ...home() } });
    expect([positional.code, positional.stdout, positional.stderr]).toEqual([
      1,
      '',
      'error: unexpected argument "prod.env"\nhint: a file goes after --file: svcenv push --file "prod.env"\n',
    ]);
    expect((await runCli(['push', 'PORT=8080'], { env: { ...env, ...home() } })).stderr).toBe(
      'error: unexpected argument "PORT=8080"\nhint: see: svcenv push --help\n',
    );
    expect((await runCli(['whoami', 'extra'], { env: { ...env, ...home() } })).stderr).toBe(
      'error: unexpected argument "extra"\nhint: see: svcenv whoami --help\n',
    );
    const sub = await runCli(['vars', 'gte', 'PORT'], { env: { ...env, ...home() } });
    expect(sub.stderr).toContain('did you mean `svcenv vars get`?');
    for (const args of [[writeToken.token], ['pull', writeToken.token], ['run', '--all', writeToken.token]]) {
      const r = await runCli(args, { env: { ...env, ...home() } });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stdout + r.stderr).not.toContain(writeToken.token);
    }
  });

  it('-e prdo names the environments with "did you mean"; -e PROD says names are lower-case and suggests prod', async () => {
    const typo = await runCli(['pull', '--stdout', '-e', 'prdo'], { env: { ...env, ...home() } });
    expect([typo.code, typo.stdout, typo.stderr]).toEqual([
      1,
      '',
      'NOT_FOUND: the project has no environment "prdo": choose one with --env: dev, staging, prod\nhint: did you mean --env prod?\n',
    ]);
    // A project with environments of its own: the suggestion comes from them, not from the defaults.
    const own = await createProject(server, jwt, { name: `Own Envs ${Date.now()}`, envs: ['qa', 'live'] });
    const ownToken = (await createToken(server, jwt, { scope: 'read', projectId: own.id })).token;
    const ownEnv = { ...env, ...home(), SVCENV_TOKEN: ownToken, SVCENV_PROJECT: own.id };
    for (const [args, guess] of [
      [['-e', 'PROD'], 'prod'],
      [['-e', 'Staging'], 'staging'],
    ] as const) {
      const r = await runCli(['pull', '--stdout', ...args], { env: { ...env, ...home() } });
      expect([r.code, r.stdout, r.stderr]).toEqual([
        1,
        '',
        'error: the environment (--env, SVCENV_ENV, .svcenv.json or the config file) is not an environment name: environment names are lower-case; it is not repeated\n' +
          `hint: did you mean --env ${guess}?\n`,
      ]);
    }
    const live = await runCli(['run', '-e', 'LIVE', '--all', '--', 'true'], { env: ownEnv });
    expect(live.stderr).toContain('environment names are lower-case');
    expect(live.stderr).toContain('hint: did you mean --env live?\n');
    // An upper-case value that is no environment of the project is not repeated, lower-cased or not.
    const other = await runCli(['pull', '--stdout', '-e', 'SOME-VALUE-42'], { env: ownEnv });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('environment names are lower-case; it is not repeated');
    expect(other.stderr.toLowerCase()).not.toContain('some-value');
    const ownTypo = await runCli(['pull', '--stdout', '-e', 'lvie'], { env: ownEnv });
    expect(ownTypo.stderr).toBe(
      'NOT_FOUND: the project has no environment "lvie": choose one with --env: qa, live\nhint: did you mean --env live?\n',
    );
  });

  it('run without `--` before the command says to put it there, with the corrected line, and starts nothing', async () => {
    const cwd = tempDir();
    const marker = join(cwd, 'started');
    const r = await runCli(['run', '-e', 'dev', '--all', 'sh', '-c', `touch ${marker}; echo hi`, '--watch'], {
      env: { ...env, ...home() },
      cwd,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `error: missing \`--\`: put \`--\` before the command\nhint: svcenv run -e dev --all -- sh -c 'touch ${marker}; echo hi' --watch\n`,
    );
    expect(existsSync(marker)).toBe(false);
  });
});

describe('D58: setup and .svcenv.json', () => {
  it('setup without flags lists the projects and environments and what to pass; it writes nothing', async () => {
    const cwd = tempDir();
    const r = await runCli(['setup'], {
      env: { SVCENV_API_URL: server.url, SVCENV_TOKEN: writeToken.token, ...home() },
      cwd,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${project.id} .*Shop API +dev, staging, prod$`, 'm'));
    expect(r.stdout).toContain(`svcenv setup --project ${project.slug} --env dev`);
    expect(existsSync(join(cwd, '.svcenv.json'))).toBe(false);
    const none = await runCli(['setup'], { env: { SVCENV_API_URL: server.url, ...home() }, cwd });
    expect([none.code, none.stderr]).toEqual([
      1,
      'error: no access token to list the projects with\nhint: run `svcenv login --token -` first, or pass --project <id|slug> --env <name>\n',
    ]);
  });

  it('setup writes {project, env} 0644; commands below it use it, between SVCENV_* and the user config', async () => {
    const root = tempDir();
    const h = home();
    // The user config names another env: .svcenv.json comes first.
    const configDir = join(h.HOME, '.config', 'svcenv');
    mkdirSync(configDir, { recursive: true });
    writeFileSync(
      join(configDir, 'config.json'),
      JSON.stringify({ apiUrl: server.url, token: writeToken.token, env: 'dev' }),
    );
    const e = { ...h };
    const bad = await runCli(['setup', '-p', project.id, '-e', 'stagign'], { env: e, cwd: root });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      'NOT_FOUND: project Shop API has no environment "stagign": choose one with --env: dev, staging, prod\nhint: did you mean --env staging?\n',
    );
    expect(existsSync(join(root, '.svcenv.json'))).toBe(false);
    // A token pasted as --env is neither repeated nor written into the file meant to be committed.
    const pasted = await runCli(['setup', '-p', project.id, '-e', readToken], { env: e, cwd: root });
    expect(pasted.code).toBe(1);
    expect(pasted.stderr).toContain('not an environment name but an access token; it is not repeated');
    expect(pasted.stderr + pasted.stdout).not.toContain(readToken);
    expect(existsSync(join(root, '.svcenv.json'))).toBe(false);

    // D48/D58: given the id, the file names the project by its slug, and says so.
    const r = await runCli(['setup', '-p', project.id, '-e', 'staging'], { env: e, cwd: root });
    expect(r.code, r.stderr).toBe(0);
    const file = join(root, '.svcenv.json');
    expect(r.stdout).toContain(
      `wrote ${file}: project shop-api, env staging\n(${project.id} is the project shop-api: the file names it by its slug)\n`,
    );
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ project: 'shop-api', env: 'staging' });
    // Again with only the id: the env written for that project stays.
    const again = await runCli(['setup', '-p', project.id], { env: e, cwd: root });
    expect(again.stdout).toContain(`wrote ${file}: project shop-api, env staging\n`);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ project: 'shop-api', env: 'staging' });
    expect(statSync(file).mode & 0o777).toBe(0o644);
    expect(readFileSync(file, 'utf8')).not.toContain('tok_');

    const deep = join(root, 'src', 'app');
    mkdirSync(deep, { recursive: true });
    const pulled = await runCli(['pull', '--stdout'], { env: e, cwd: deep });
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(pulled.stdout).toContain('ONLY_STAGING=staging-value');
    // SVCENV_ENV beats the file; a flag beats SVCENV_ENV.
    const viaEnv = await runCli(['pull', '--stdout'], { env: { ...e, SVCENV_ENV: 'dev' }, cwd: deep });
    expect(viaEnv.stdout).toContain('PORT=8080');
    const viaFlag = await runCli(['pull', '--stdout', '-e', 'staging'], {
      env: { ...e, SVCENV_ENV: 'dev' },
      cwd: deep,
    });
    expect(viaFlag.stdout).toContain('ONLY_STAGING=');
    // Outside the tree the user config's env applies again.
    const outside = await runCli(['pull', '--stdout', '-p', project.id], { env: e, cwd: tempDir() });
    expect(outside.stdout).toContain('PORT=8080');
    // A token in .svcenv.json (a file meant to be committed) is refused, not used.
    writeFileSync(file, JSON.stringify({ project: project.id, env: 'dev', token: writeToken.token }));
    const leaked = await runCli(['pull', '--stdout'], { env: e, cwd: deep });
    expect(leaked.code).toBe(1);
    expect(leaked.stderr).toContain('must never hold a token');
    expect(leaked.stderr).not.toContain(writeToken.token);
  });

  it('a command without an environment lists the project’s environments in the error', async () => {
    const e = { ...env, ...home(), SVCENV_ENV: '' };
    const r = await runCli(['pull', '--stdout'], { env: e, cwd: tempDir() });
    expect([r.code, r.stderr]).toEqual([
      1,
      'error: no environment: choose one with --env: dev, staging, prod\nhint: pass --env <name>, set SVCENV_ENV or run `svcenv setup`\n',
    ]);
    const vars = await runCli(['vars'], { env: e, cwd: tempDir() });
    expect(vars.stderr).toContain('choose one with --env: dev, staging, prod');
    const noProject = await runCli(['pull', '--stdout'], { env: { ...e, SVCENV_PROJECT: '' }, cwd: tempDir() });
    expect(noProject.stderr).toContain(`error: no project: choose one with --project: ${project.id} (Shop API)\n`);
  });
});

describe('D58: whoami and logout', () => {
  it('whoami shows the API URL and the token’s name, prefix, scope, environments and project, never the token', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, '.svcenv.json'), JSON.stringify({ project: project.id, env: 'staging' }));
    const r = await runCli(['whoami'], { env: { ...env, ...home(), SVCENV_PROJECT: '', SVCENV_ENV: '' }, cwd });
    expect(r.code, r.stderr).toBe(0);
    const row = (key: string, value: string) => `${`${key}:`.padEnd(14)} ${value}\n`;
    expect(r.stdout).toContain(row('API', `${server.url}`));
    expect(r.stdout).toContain(row('token', `laptop (${writeToken.token.slice(0, 16)}…), from SVCENV_TOKEN`));
    expect(r.stdout).toContain(row('scope', 'write'));
    expect(r.stdout).toContain(row('environments', 'all'));
    expect(r.stdout).toContain(row('project', `Shop API (${project.id})`));
    expect(r.stdout).toContain(row('expires', 'never'));
    expect(r.stdout).toContain(row('using env', 'staging'));
    expect(r.stdout).toContain(row('project file', join(cwd, '.svcenv.json')));
    expect(r.stdout + r.stderr).not.toContain(writeToken.token);
    const none = await runCli(['whoami'], { env: { SVCENV_API_URL: server.url, ...home() } });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^error: no access token\n/);
  });

  it('logout removes the stored token, keeps the rest, and says so; a second logout says there was none', async () => {
    const h = home();
    const login = await runCli(['login', '--token', '-', '--api-url', server.url], {
      env: h,
      input: `${writeToken.token}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    const file = join(h.HOME, '.config', 'svcenv', 'config.json');
    const out = await runCli(['logout'], { env: h });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe(`removed the access token from ${file} (kept: apiUrl, project)\n`);
    expect(out.stderr).toContain('stays valid until it is revoked');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ apiUrl: server.url, project: project.id });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const pull = await runCli(['pull', '--stdout', '-e', 'dev'], { env: h });
    expect(pull.stderr).toMatch(/^error: no access token\n/);
    const again = await runCli(['logout'], { env: h });
    expect([again.code, again.stdout]).toEqual([0, `no access token was stored in ${file}; nothing to remove\n`]);
  });
});

describe('D59: svcenv vars', () => {
  /** A project of its own, so that writes do not disturb the other tests. */
  async function fresh() {
    // Its own workspace too: the free plan allows three projects per workspace.
    const { jwt } = await signupUser(server, 'Vars');
    const p = await createProject(server, jwt, { name: `vars-${Math.random().toString(36).slice(2, 8)}` });
    await upsert(
      server,
      jwt,
      p.id,
      ['dev'],
      [
        { key: 'DB_PASSWORD', value: SECRET, type: 'secret' },
        { key: 'PORT', value: '8080', type: 'plain' },
      ],
    );
    const write = (await createToken(server, jwt, { scope: 'write', projectId: p.id })).token;
    const read = (await createToken(server, jwt, { scope: 'read', projectId: p.id })).token;
    const e = (token: string) => ({
      SVCENV_API_URL: server.url,
      SVCENV_TOKEN: token,
      SVCENV_PROJECT: p.id,
      SVCENV_ENV: 'dev',
      ...home(),
    });
    const listed = async () =>
      (
        await server.request('GET', `/v1/projects/${p.id}/envs/dev/vars?reveal=true`, {
          token: write,
          schema: listVarsResponse,
        })
      ).body.vars;
    return { p, jwt, write, read, e, listed };
  }

  it('lists KEY, TYPE and VALUE masked; --reveal shows values with a write token and is FORBIDDEN with a read token', async () => {
    const masked = await runCli(['vars'], { env: { ...env, ...home() } });
    expect(masked.code, masked.stderr).toBe(0);
    const lines = masked.stdout.split('\n');
    expect(lines[0]).toMatch(/^KEY +TYPE +VALUE$/);
    expect(masked.stdout).toMatch(/^DB_PASSWORD +secret +\*+$/m);
    expect(masked.stdout).toMatch(/^PORT +plain +8080$/m);
    expect(masked.stdout).toMatch(/^MULTI +plain +one\\ntwo$/m);
    expect(masked.stdout).not.toContain(SECRET);
    const revealed = await runCli(['vars', '--reveal'], { env: { ...env, ...home() } });
    expect(revealed.stdout).toMatch(new RegExp(`^DB_PASSWORD +secret +${SECRET}$`, 'm'));
    const forbidden = await runCli(['vars', '--reveal'], { env: { ...env, ...home(), SVCENV_TOKEN: readToken } });
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toMatch(/^FORBIDDEN: /);
    expect(forbidden.stdout).toBe('');
    const wrongFlag = await runCli(['vars', 'get', 'PORT', '--reveal'], { env: { ...env, ...home() } });
    expect([wrongFlag.code, wrongFlag.stderr]).toEqual([
      1,
      'error: --reveal does not apply to `vars get`\nhint: see: svcenv vars --help\n',
    ]);
  });

  it('get prints exactly the resolved value and one newline, with a read token too; an absent key is NOT_FOUND', async () => {
    const e = { ...env, ...home(), SVCENV_TOKEN: readToken };
    expect(await runCli(['vars', 'get', 'URL'], { env: e })).toMatchObject({
      code: 0,
      stdout: 'http://localhost:8080\n',
    });
    expect(await runCli(['vars', 'get', 'DB_PASSWORD'], { env: e })).toMatchObject({ code: 0, stdout: `${SECRET}\n` });
    expect(await runCli(['vars', 'get', 'MULTI'], { env: e })).toMatchObject({ code: 0, stdout: 'one\ntwo\n' });
    const missing = await runCli(['vars', 'get', 'NOPE'], { env: e });
    expect([missing.code, missing.stdout, missing.stderr]).toEqual([
      1,
      '',
      'NOT_FOUND: no variable "NOPE" in dev\nhint: list the keys with `svcenv vars`\n',
    ]);
  });

  it('set creates (secret by default) and updates (keeping the type unless a flag says), KEY=- reads stdin; read token FORBIDDEN', async () => {
    const { e, write, read, listed } = await fresh();
    const r = await runCli(['vars', 'set', 'NEW_KEY=new-value', 'PORT=9090'], { env: e(write) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('created NEW_KEY (secret)\nupdated PORT (plain)\n');
    let vars = await listed();
    expect(vars.find((v) => v.key === 'NEW_KEY')).toMatchObject({ value: 'new-value', type: 'secret' });
    expect(vars.find((v) => v.key === 'PORT')).toMatchObject({ value: '9090', type: 'plain' });
    const plain = await runCli(['vars', 'set', '--plain', 'NEW_KEY=visible'], { env: e(write) });
    expect(plain.stdout).toBe('updated NEW_KEY (plain)\n');
    const stdin = await runCli(['vars', 'set', 'FROM_STDIN=-', 'OTHER=x'], {
      env: e(write),
      input: 'multi\nline value\n',
    });
    expect(stdin.code, stdin.stderr).toBe(0);
    vars = await listed();
    expect(vars.find((v) => v.key === 'NEW_KEY')).toMatchObject({ value: 'visible', type: 'plain' });
    expect(vars.find((v) => v.key === 'FROM_STDIN')).toMatchObject({ value: 'multi\nline value', type: 'secret' });
    const forbidden = await runCli(['vars', 'set', 'PORT=1'], { env: e(read) });
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toMatch(/^FORBIDDEN: /);
    expect((await listed()).find((v) => v.key === 'PORT')?.value).toBe('9090');
    // A value typed without its key is not repeated in the error.
    const noKey = await runCli(['vars', 'set', 'just-a-secret-value'], { env: e(write) });
    expect([noKey.code, noKey.stderr]).toEqual([
      1,
      'error: argument 1 after `set` is not KEY=VALUE\nhint: svcenv vars set KEY=VALUE\n',
    ]);
    expect((await runCli(['vars', 'set', '--secret', '--plain', 'A=1'], { env: e(write) })).stderr).toContain(
      'mutually exclusive',
    );
    expect((await runCli(['vars', 'set', '--help'], { env: e(write) })).stdout).toContain(
      '`svcenv vars set KEY=-` reads the value',
    );
  });

  it('unset deletes through vars:bulkDelete; absent keys are named; a read token is FORBIDDEN', async () => {
    const { e, write, read, listed } = await fresh();
    const forbidden = await runCli(['vars', 'unset', 'PORT'], { env: e(read) });
    expect([forbidden.code, forbidden.stderr.split(':')[0]]).toEqual([1, 'FORBIDDEN']);
    const r = await runCli(['vars', 'unset', 'PORT', 'NOPE'], { env: e(write) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('deleted PORT\n');
    expect(r.stderr).toBe('not set in dev, nothing to delete: NOPE\n');
    expect((await listed()).map((v) => v.key)).toEqual(['DB_PASSWORD']);
  });

  it('D46: set and unset send If-Match with the revision they read; a change in between is PRECONDITION_FAILED', async () => {
    const { p, jwt, e, write, listed } = await fresh();
    const seen: (string | undefined)[] = [];
    // A proxy in front of the server: just before it forwards a write, a colleague changes the environment.
    const proxy = createHttpServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      if (req.method === 'POST') {
        seen.push(req.headers['if-match']);
        await server.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/PORT`, {
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
      const before = await server.request('GET', `/v1/projects/${p.id}/envs/dev/vars`, { token: write });
      const revision = before.headers.get('x-svcenv-revision');
      expect(revision).toMatch(/^\d+$/);
      const viaProxy = { ...e(write), SVCENV_API_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` };
      const set = await runCli(['vars', 'set', 'PORT=mine'], { env: viaProxy });
      expect(set.code).toBe(1);
      expect(set.stderr).toMatch(/^PRECONDITION_FAILED: /);
      expect(seen).toEqual([`"rev:${revision}"`]);
      expect((await listed()).find((v) => v.key === 'PORT')?.value).toBe('colleague');
      const unset = await runCli(['vars', 'unset', 'DB_PASSWORD'], { env: viaProxy });
      expect(unset.code).toBe(1);
      expect(unset.stderr).toMatch(/^PRECONDITION_FAILED: /);
      expect(seen[1]).toBe(`"rev:${Number(revision) + 1}"`);
      expect((await listed()).map((v) => v.key)).toContain('DB_PASSWORD');
    } finally {
      proxy.close();
    }
  });
});
