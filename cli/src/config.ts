/**
 * Settings resolution: flags > environment variables > config file > default (spec "Configuration").
 * The file is `~/.config/svcenv/config.json`, mode 0600 in a 0700 directory, written only by `login`.
 */
import { fs, os, path } from './builtins.js';
import { CliError } from './errors.js';

/**
 * No hosted service exists for a self-hosted product, so the default is where `npm start` puts the
 * server (D1: 127.0.0.1:8080). ADR 0001-cli.
 */
export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

export interface ConfigFile {
  apiUrl?: string;
  token?: string;
  project?: string;
  env?: string;
}

export interface Settings {
  apiUrl: string;
  token: string | undefined;
  project: string | undefined;
  env: string | undefined;
}

export type Env = Readonly<Record<string, string | undefined>>;

export function configPath(env: Env): string {
  return path().join(env.HOME || os().homedir(), '.config', 'svcenv', 'config.json');
}

export function readConfigFile(file: string): ConfigFile {
  let text: string;
  try {
    text = fs().readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError('CONFIG', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new CliError('CONFIG', `${file} is not valid JSON`, 'run `svcenv login` again to rewrite it');
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new CliError('CONFIG', `${file} must hold a JSON object`, 'run `svcenv login` again to rewrite it');
  }
  const out: ConfigFile = {};
  for (const field of ['apiUrl', 'token', 'project', 'env'] as const) {
    const v = (data as Record<string, unknown>)[field];
    if (typeof v === 'string' && v !== '') out[field] = v;
  }
  return out;
}

/** Written to a temporary file created 0600 and renamed, so the token is never readable by others. */
export function writeConfigFile(file: string, config: ConfigFile): void {
  const { chmodSync, mkdirSync, renameSync, writeFileSync } = fs();
  mkdirSync(path().dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

const nonEmpty = (v: string | boolean | undefined): string | undefined =>
  typeof v === 'string' && v !== '' ? v : undefined;

export interface FlagValues {
  apiUrl?: string | boolean | undefined;
  token?: string | boolean | undefined;
  project?: string | boolean | undefined;
  env?: string | boolean | undefined;
}

/**
 * The config file is read only when some setting is still missing after flags and environment, so
 * that CI with SVCENV_TOKEN, SVCENV_PROJECT and SVCENV_ENV never depends on a home directory.
 */
export function resolveSettings(flags: FlagValues, env: Env): Settings {
  const fromEnv: ConfigFile = {
    apiUrl: nonEmpty(env.SVCENV_API_URL),
    token: nonEmpty(env.SVCENV_TOKEN),
    project: nonEmpty(env.SVCENV_PROJECT),
    env: nonEmpty(env.SVCENV_ENV),
  };
  const pick = (field: keyof ConfigFile, flag: string | boolean | undefined) => nonEmpty(flag) ?? fromEnv[field];
  const partial = {
    apiUrl: pick('apiUrl', flags.apiUrl),
    token: pick('token', flags.token),
    project: pick('project', flags.project),
    env: pick('env', flags.env),
  };
  const complete = partial.apiUrl && partial.token && partial.project && partial.env;
  const file = complete ? {} : readConfigFile(configPath(env));
  return {
    apiUrl: partial.apiUrl ?? file.apiUrl ?? DEFAULT_API_URL,
    token: partial.token ?? file.token,
    project: partial.project ?? file.project,
    env: partial.env ?? file.env,
  };
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** D4: credentials never travel over plain HTTP except to this machine. Returns the normalized base. */
export function checkApiUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError('CONFIG', `invalid API URL "${raw}"`, 'use a URL such as https://svcenv.example.com');
  }
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname)) {
    throw new CliError(
      'CONFIG',
      `refusing plain http:// for non-loopback host ${url.hostname}: credentials would travel unencrypted`,
      'use https:// (http:// is allowed only for localhost, 127.0.0.0/8 and [::1])',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError('CONFIG', `unsupported API URL scheme ${url.protocol}`, 'use https://');
  }
  if (url.username || url.password) throw new CliError('CONFIG', 'the API URL must not contain credentials');
  return url.href.replace(/\/+$/, '');
}

export function requireToken(s: Settings): string {
  if (!s.token) {
    throw new CliError('CONFIG', 'no access token', 'run `svcenv login --token <ACCESS_TOKEN>` or set SVCENV_TOKEN');
  }
  return s.token;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function requireTarget(s: Settings): { project: string; env: string } {
  if (!s.project) {
    throw new CliError('CONFIG', 'no project', 'pass --project <uuid> or set SVCENV_PROJECT (see `svcenv projects`)');
  }
  if (!UUID.test(s.project)) {
    throw new CliError(
      'CONFIG',
      // An access token pasted into the wrong place is not repeated on the screen (or into a CI log).
      s.project.startsWith('tok_')
        ? 'the project is an access token, not a project id (uuid)'
        : `project "${s.project}" is not a project id (uuid)`,
      'list ids with `svcenv projects`',
    );
  }
  if (!s.env) throw new CliError('CONFIG', 'no environment', 'pass --env <name> or set SVCENV_ENV');
  return { project: s.project, env: s.env };
}
