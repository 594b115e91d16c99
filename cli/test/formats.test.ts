/**
 * D55 through the compiled svcenv: `pull --format json|shell|docker` against the real server, the shell file
 * sourced by real shells, and the docker refusal of a multi-line value printed with its API code (D37a).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
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

/** Values that break naive writers; the line-break ones only in dev, so staging can be pulled for docker. */
const SINGLE_LINE: Record<string, string> = {
  QUOTE: `it's "quoted"`,
  DOLLAR: '$HOME $(touch pwned) `touch pwned` ~ *',
  BACKSLASH: 'C:\\new\\\\path\\',
  SPACES: '  two  spaces  ',
  EQUALS: 'a=b==c',
  UNICODE: 'héllo ☃ 🚀',
  EMPTY: '',
  BREAKOUT: "'; touch pwned; '",
};
const MULTI_LINE: Record<string, string> = {
  CERT: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
  CRLF: "first\r\nsecond 'x'",
};

let server: ServerProcess;
let project: { id: string };
let env: Record<string, string>;

beforeAll(async () => {
  server = await startServer();
  const { jwt } = await signupUser(server);
  project = await createProject(server, jwt, { name: 'Fmt CLI' });
  const items = (vars: Record<string, string>) =>
    Object.entries(vars).map(([key, value]) => ({ key, value, type: 'secret' }));
  await upsert(server, jwt, project.id, ['dev'], items({ ...SINGLE_LINE, ...MULTI_LINE }));
  await upsert(server, jwt, project.id, ['staging'], items(SINGLE_LINE));
  const { token } = await createToken(server, jwt, { scope: 'read', projectId: project.id });
  env = {
    SVCENV_API_URL: server.url,
    SVCENV_TOKEN: token,
    SVCENV_PROJECT: project.id,
    SVCENV_ENV: 'dev',
    HOME: tempDir('svcenv-home-'),
  };
});

afterAll(async () => {
  await server?.stop();
});

const shells = ['sh', 'bash', 'dash'].filter((s) => existsSync(`/bin/${s}`) || existsSync(`/usr/bin/${s}`));

describe('pull --format (D55)', () => {
  it.each(shells)('shell: the file %s sources gives back every exact value, running nothing', async (shell) => {
    const cwd = tempDir();
    const r = await runCli(['pull', '--format', 'shell', '--file', 'vars.sh'], { env, cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('wrote shell exports to vars.sh (mode 0600)\n');
    expect(statSync(join(cwd, 'vars.sh')).mode & 0o777).toBe(0o600);
    const expected = { ...SINGLE_LINE, ...MULTI_LINE, SVCENV_PROJECT: project.id, SVCENV_ENV: 'dev' };
    for (const [key, value] of Object.entries(expected)) {
      const out = execFileSync(shell, ['-c', `. ./vars.sh; printf %s "$${key}"`], {
        cwd,
        encoding: 'utf8',
        env: { PATH: process.env.PATH },
      });
      expect(out, key).toBe(value);
    }
    expect(existsSync(join(cwd, 'pwned'))).toBe(false);
  });

  it('json: --stdout parses to the values, context variables included unless --no-metadata', async () => {
    const r = await runCli(['pull', '--format', 'json', '--stdout'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      ...SINGLE_LINE,
      ...MULTI_LINE,
      SVCENV_PROJECT: project.id,
      SVCENV_ENV: 'dev',
      SVCENV_PROJECT_NAME: 'Fmt CLI',
    });
    const cwd = tempDir();
    const bare = await runCli(['pull', '--format', 'json', '--no-metadata', '--file', 'vars.json'], { env, cwd });
    expect(bare.code, bare.stderr).toBe(0);
    expect(bare.stdout).toBe('wrote 10 variables as JSON to vars.json (mode 0600)\n');
    expect(JSON.parse(readFileSync(join(cwd, 'vars.json'), 'utf8'))).toEqual({ ...SINGLE_LINE, ...MULTI_LINE });
  });

  it('docker: raw KEY=value lines for single-line values', async () => {
    const r = await runCli(['pull', '--format', 'docker', '--stdout', '--no-metadata', '--env', 'staging'], { env });
    expect(r.code, r.stderr).toBe(0);
    const sorted = Object.entries(SINGLE_LINE).sort(([a], [b]) => (a < b ? -1 : 1));
    expect(r.stdout).toBe(sorted.map(([k, v]) => `${k}=${v}\n`).join(''));
    const cwd = tempDir();
    const file = await runCli(['pull', '--format', 'docker', '--env', 'staging'], { env, cwd });
    expect(file.stdout).toBe('wrote 8 variables as a docker env-file (+3 context variables) to .env (mode 0600)\n');
  });

  it('docker: a multi-line value exits 1 with FORMAT_UNSUPPORTED, the key, a hint, no value, no file', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, '.env'), 'KEEP=1\n');
    const r = await runCli(['pull', '--format', 'docker'], { env, cwd });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^FORMAT_UNSUPPORTED: CERT: .*\(field: CERT\)\nhint: .*--format shell/);
    expect(r.stderr).not.toContain('BEGIN');
    expect(r.stderr).not.toContain(env.SVCENV_TOKEN);
    // The file a failed pull would have replaced is left as it was.
    expect(readFileSync(join(cwd, '.env'), 'utf8')).toBe('KEEP=1\n');
  });

  it('refuses an unknown --format before any request, naming the formats; --help lists them', async () => {
    const r = await runCli(['pull', '--format', 'yaml', '--stdout'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('unknown --format yaml');
    expect(r.stderr).toContain('dotenv, k8s, json, shell, docker');
    const help = await runCli(['pull', '--help']);
    expect(help.stdout).toContain('--format dotenv|k8s|json|shell|docker');
    expect(help.stdout).toContain('docker run --env-file');
  });
});
