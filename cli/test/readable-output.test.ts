/**
 * The compiled svcenv against the real server, from an empty HOME: output a person can read (ADR 0028).
 * `diff`'s legend on a terminal only; `run --scrub secrets` leaves plain values readable and still scrubs
 * secrets, their D50 encodings and plain values that reach a secret; and getting the CLI: the build says
 * where it put the executables, and the server hands them out as the README says.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
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
import { hostTarget } from '../build.js';
import { hostBinary, runCli, runInTerminal, tempDir } from './helpers.js';

const SECRET = 'hunter2-correct-horse';
const HOST = 'db.internal.example';

let server: ServerProcess;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startServer();
  const { jwt } = await signupUser(server);
  const project = await createProject(server, jwt, { name: 'Readable' });
  // A read token: --scrub secrets needs no more than run does.
  const { token } = await createToken(server, jwt, { scope: 'read', projectId: project.id });
  /* biome-ignore-start lint/suspicious/noTemplateCurlyInString: literal reference syntax */
  await upsert(
    server,
    jwt,
    project.id,
    ['dev'],
    [
      { key: 'DB_HOST', value: HOST, type: 'plain' },
      { key: 'DB_PASSWORD', value: SECRET, type: 'secret' },
      // Plain, but its resolved value holds the password.
      { key: 'DATABASE_URL', value: 'postgres://app:${DB_PASSWORD}@db:5432/app', type: 'plain' },
    ],
  );
  /* biome-ignore-end lint/suspicious/noTemplateCurlyInString: literal reference syntax */
  env = {
    HOME: tempDir('svcenv-home-'),
    SVCENV_API_URL: server.url,
    SVCENV_TOKEN: token,
    SVCENV_PROJECT: project.id,
    SVCENV_ENV: 'dev',
  };
});

afterAll(async () => {
  await server?.stop();
});

describe('diff', () => {
  it('keeps the spec’s symbols and exit code, with a legend under them only on a terminal', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, '.env'), `DB_HOST=${HOST}\nDB_PASSWORD=other\nNEW_FEATURE=on\n`);
    const piped = await runCli(['diff'], { env, cwd });
    expect([piped.code, piped.stdout]).toEqual([1, '+ DATABASE_URL\n~ DB_PASSWORD\n- NEW_FEATURE\n']);
    const t = runInTerminal(['diff'], { env, cwd });
    const { code, screen } = await t.done;
    expect(code).toBe(1);
    expect(screen).toBe(
      '+ DATABASE_URL\r\n~ DB_PASSWORD\r\n- NEW_FEATURE\r\n+ only on the server, - only in .env, ~ differ\r\n',
    );
    writeFileSync(join(cwd, 'other.env'), '');
    const other = runInTerminal(['diff', '-f', 'other.env'], { env, cwd });
    expect((await other.done).screen).toContain('- only in other.env');
  });
});

describe('run --scrub', () => {
  // The child prints each value, its base64, and the URL that holds the password.
  const script =
    'printf "%s\\n" "connecting to $DB_HOST:5432" "$DB_PASSWORD" "$(printf %s "$DB_PASSWORD" | base64)" "$DATABASE_URL"';
  const b64 = Buffer.from(SECRET).toString('base64');

  it('all (the default) scrubs every exposed value; secrets leaves plain values readable', async () => {
    const all = await runCli(['run', '--all', '--', 'sh', '-c', script], { env });
    expect([all.code, all.stdout]).toEqual([0, 'connecting to ***:5432\n***\n***\n***\n']);
    const explicit = await runCli(['run', '--all', '--scrub', 'all', '--', 'sh', '-c', script], { env });
    expect(explicit.stdout).toBe(all.stdout);

    const secrets = await runCli(['run', '--all', '--scrub', 'secrets', '--', 'sh', '-c', script], { env });
    expect([secrets.code, secrets.stderr]).toEqual([0, '']);
    // DB_HOST is shown; the password, its base64 (D50) and the plain URL that holds it are not.
    expect(secrets.stdout).toBe(`connecting to ${HOST}:5432\n***\n***\n***\n`);
    expect(secrets.stdout).not.toContain(SECRET);
    expect(secrets.stdout).not.toContain(b64);
    // --only too: the URL is scrubbed although the password itself is not in scope.
    const only = await runCli(
      [
        'run',
        '--only',
        'DB_HOST,DATABASE_URL',
        '--scrub',
        'secrets',
        '--',
        'sh',
        '-c',
        'echo "$DB_HOST $DATABASE_URL"',
      ],
      {
        env,
      },
    );
    expect(only.stdout).toBe(`${HOST} ***\n`);
  });

  it('secrets without the types (offline) scrubs every value and says so; a bad value is refused', async () => {
    const cache = tempDir('svcenv-cache-');
    const e = { ...env, SVCENV_CACHE_DIR: cache };
    expect((await runCli(['run', '--all', '--', 'true'], { env: e })).code).toBe(0);
    const offline = await runCli(['run', '--all', '--offline', '--scrub', 'secrets', '--', 'sh', '-c', script], {
      env: e,
    });
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stdout).toBe('connecting to ***:5432\n***\n***\n***\n');
    expect(offline.stderr).toContain(
      "warning: --scrub secrets: the variables' types could not be read (--offline); every value is scrubbed\n",
    );
    const bad = await runCli(['run', '--all', '--scrub', 'plain', '--', 'true'], { env });
    expect([bad.code, bad.stderr]).toEqual([
      1,
      'error: --scrub takes all or secrets\nhint: svcenv run --scrub secrets --all -- <command>\n',
    ]);
    const help = (await runCli(['run', '--help'])).stdout;
    expect(help).toMatch(
      /--scrub <value> +all: every exposed value is replaced by \*\*\* in the output \(default\); secrets: only secret ones/,
    );
    expect(help).toContain('--scrub secrets scrubs only the values of secret variables');
  });
});

describe('getting the CLI', () => {
  it('the build names the executable for this machine and how to install it', () => {
    const outdir = tempDir('svcenv-build-');
    const out = execFileSync(
      'npx',
      ['tsx', join(import.meta.dirname, '..', 'build.ts'), '--targets', 'host', '--outdir', outdir],
      {
        encoding: 'utf8',
      },
    );
    const file = join(outdir, `svcenv-${hostTarget}`);
    expect(out).toContain(`built 1 svcenv executable:\n  ${file}\n`);
    expect(out).toContain(`this machine's (${hostTarget}): ${file}\n`);
    expect(out).toContain(`  mkdir -p ~/.local/bin && install -m 0755 ${file} ~/.local/bin/svcenv\n`);
    // The line works as printed (in a HOME of its own).
    const home = tempDir('svcenv-home-');
    const line = out
      .split('\n')
      .find((l) => l.includes('install -m 0755'))!
      .trim();
    execFileSync('sh', ['-c', line], { env: { PATH: process.env.PATH ?? '', HOME: home } });
    expect(spawnSync(join(home, '.local', 'bin', 'svcenv'), ['version'], { encoding: 'utf8' }).stdout).toMatch(
      /^svcenv \d/,
    );
  });

  it('the server serves it at the README’s URL: curl -fsSL <server>/v1/cli/download/<os>/<arch>', async () => {
    // The server serves dist/cli, where the tests' global setup built this machine's executable.
    expect(existsSync(hostBinary)).toBe(true);
    const [os, arch] = hostTarget.split('-');
    const dir = tempDir();
    const curl = spawnSync(
      'sh',
      ['-c', `curl -fsSL ${server.url}/v1/cli/download/${os}/${arch} -o svcenv && chmod +x svcenv`],
      {
        cwd: dir,
        encoding: 'utf8',
      },
    );
    expect(curl.status, curl.stderr).toBe(0);
    expect((await runCli(['version'], { binary: join(dir, 'svcenv') })).stdout).toMatch(/^svcenv \d/);
  });
});
