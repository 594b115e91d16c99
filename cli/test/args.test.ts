import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../src/args.js';
import { dispatch } from '../src/cli.js';
import { pullCommand } from '../src/commands/pull.js';
import { parseScope, runCommand, substitutePlaceholders } from '../src/commands/run.js';
import { compareVersions } from '../src/commands/upgrade.js';
import { checkApiUrl, configPath, DEFAULT_API_URL, resolveSettings, writeConfigFile } from '../src/config.js';

describe('flag parsing', () => {
  it('reads values, booleans, aliases and the -- separator', () => {
    const p = parseArgs(['--env=dev', '--output', 'x.env', '--no-metadata', '--stdout'], pullCommand.flags, 'pull');
    expect(p.flags).toEqual({ env: 'dev', file: 'x.env', 'no-metadata': true, stdout: true });
    const r = parseArgs(['--all', '--', 'echo', '--all', '--', '--help'], runCommand.flags, 'run');
    expect(r.rest).toEqual(['echo', '--all', '--', '--help']);
  });

  it('refuses unknown, repeated, valueless and valued-boolean flags', () => {
    expect(() => parseArgs(['--nope'], pullCommand.flags, 'pull')).toThrow(/unknown flag --nope/);
    expect(() => parseArgs(['-x'], pullCommand.flags, 'pull')).toThrow(/unknown flag -x/);
    expect(() => parseArgs(['--env', 'a', '--env', 'b'], pullCommand.flags, 'pull')).toThrow(/twice/);
    expect(() => parseArgs(['--env'], pullCommand.flags, 'pull')).toThrow(/needs a value/);
    expect(() => parseArgs(['--env', '--stdout'], pullCommand.flags, 'pull')).toThrow(/needs a value/);
    expect(() => parseArgs(['--stdout=yes'], pullCommand.flags, 'pull')).toThrow(/takes no value/);
  });

  it('run scope rules', () => {
    expect(() => parseScope({})).toThrow(/choose a scope/);
    expect(() => parseScope({ only: 'A', all: true })).toThrow(/mutually exclusive/);
    expect(() => parseScope({ only: 'A', except: 'B' })).toThrow(/only with --all/);
    expect(() => parseScope({ except: 'B' })).toThrow(/only with --all/);
    expect(parseScope({ only: 'A, B' })).toEqual({ kind: 'only', keys: ['A', 'B'] });
    expect(parseScope({ all: true, except: 'X' })).toEqual({ kind: 'all', except: new Set(['X']) });
  });

  it('placeholders are substituted only for keys in scope', () => {
    const exposed = new Map([['A', 'value-a']]);
    expect(substitutePlaceholders(['echo', 'x={{A}}', '{{ A }}'], exposed)).toEqual(['echo', 'x=value-a', '{{ A }}']);
    expect(() => substitutePlaceholders(['echo', '{{B}}'], exposed)).toThrow(/outside the scope/);
  });

  it('--help before -- shows help; after it belongs to the command', async () => {
    const ctx = { env: {}, cwd: '/', version: '1.0.0', stdout: process.stdout, stderr: process.stderr };
    expect((await dispatch(['pull', '--help'], ctx)).stdout).toContain('--no-metadata');
    await expect(dispatch(['run', '--', 'x', '--help'], ctx)).rejects.toThrow(/choose a scope/);
    await expect(dispatch(['pul'], ctx)).rejects.toThrow(/unknown command/);
    expect((await dispatch(['version'], ctx)).stdout).toBe('svcenv 1.0.0\n');
  });
});

describe('settings', () => {
  it('flags > environment > config file > default', () => {
    const home = mkdtempSync(join(tmpdir(), 'svcenv-home-'));
    const env = { HOME: home };
    writeConfigFile(configPath(env), { apiUrl: 'https://file.test', token: 'tok_file', project: 'p-file', env: 'dev' });
    expect(statSync(configPath(env)).mode & 0o777).toBe(0o600);
    expect(resolveSettings({}, env)).toEqual({
      apiUrl: 'https://file.test',
      token: 'tok_file',
      project: 'p-file',
      env: 'dev',
    });
    const withEnv = { ...env, SVCENV_TOKEN: 'tok_env', SVCENV_ENV: 'staging', SVCENV_API_URL: '' };
    expect(resolveSettings({}, withEnv)).toMatchObject({
      apiUrl: 'https://file.test',
      token: 'tok_env',
      env: 'staging',
    });
    expect(resolveSettings({ env: 'prod' }, withEnv)).toMatchObject({
      token: 'tok_env',
      env: 'prod',
      project: 'p-file',
    });
    expect(resolveSettings({}, { HOME: join(home, 'none') }).apiUrl).toBe(DEFAULT_API_URL);
  });

  it('D4: plain http only to loopback', () => {
    expect(checkApiUrl('http://localhost:8080/')).toBe('http://localhost:8080');
    expect(checkApiUrl('http://127.0.0.5:1')).toBe('http://127.0.0.5:1');
    expect(checkApiUrl('http://[::1]:8080')).toBe('http://[::1]:8080');
    expect(checkApiUrl('https://svcenv.example.com/base/')).toBe('https://svcenv.example.com/base');
    expect(() => checkApiUrl('http://svcenv.example.com')).toThrow(/refusing plain http/);
    expect(() => checkApiUrl('http://10.0.0.1')).toThrow(/refusing plain http/);
    expect(() => checkApiUrl('http://localhost.evil.test')).toThrow(/refusing plain http/);
    expect(() => checkApiUrl('ftp://x')).toThrow(/scheme/);
  });

  it('compares versions', () => {
    expect(compareVersions('0.2.0', '0.1.9')).toBe(1);
    expect(compareVersions('1.0.0', '1.0.0')).toBe(0);
    expect(compareVersions('1.0.0-rc.1', '1.0.0')).toBe(-1);
    expect(compareVersions('0.10.0', '0.9.0')).toBe(1);
  });
});
