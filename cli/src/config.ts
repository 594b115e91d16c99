/**
 * Settings resolution: flags > environment variables > the nearest `.svcenv.json` (project and env, D58)
 * > config file > default (spec "Configuration"). The config file is `~/.config/svcenv/config.json`,
 * mode 0600 in a 0700 directory, written by `login` (and `logout`); `.svcenv.json` by `setup`.
 */
import { fs, os, path } from './builtins.js';
import { CliError, looksLikeToken } from './errors.js';

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
  /** The `.svcenv.json` that was read, when one was (whoami and setup name it). */
  projectFile?: string;
}

/** D58: the per-directory settings file `svcenv setup` writes; it names a project and env, never a token. */
export const PROJECT_FILE = '.svcenv.json';

export interface ProjectFile {
  project?: string;
  env?: string;
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

/** The nearest `.svcenv.json` from `cwd` up to the root, or undefined when there is none. */
export function findProjectFile(cwd: string): string | undefined {
  const { dirname, join, resolve } = path();
  const { statSync } = fs();
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const file = join(dir, PROJECT_FILE);
    try {
      if (statSync(file).isFile()) return file;
    } catch {
      // absent or unreadable directory: keep going up
    }
    if (dirname(dir) === dir) return undefined;
  }
}

export function readProjectFile(file: string): ProjectFile {
  let data: unknown;
  try {
    data = JSON.parse(fs().readFileSync(file, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(
      'CONFIG',
      code ? `cannot read ${file}: ${code}` : `${file} is not valid JSON`,
      'rewrite it with `svcenv setup --project <id|slug> --env <name>`',
    );
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new CliError('CONFIG', `${file} must hold a JSON object`, 'rewrite it with `svcenv setup`');
  }
  // The file is meant to be committed with the code: a token in it would be published with it. Refused
  // (without reading it further) rather than used, so the mistake is noticed before the push.
  if ('token' in data) {
    throw new CliError(
      'CONFIG',
      `${file} holds a "token" field; it is meant to be committed and must never hold a token`,
      'remove the field (and revoke that token if the file was shared); use `svcenv login` or SVCENV_TOKEN',
    );
  }
  const out: ProjectFile = {};
  for (const field of ['project', 'env'] as const) {
    const v = (data as Record<string, unknown>)[field];
    if (typeof v === 'string' && v !== '') out[field] = v;
  }
  return out;
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
 * The files are read only when some setting is still missing after flags and environment, so that CI
 * with SVCENV_TOKEN, SVCENV_PROJECT and SVCENV_ENV never depends on a home or working directory (and
 * `run` starts without touching the file system, ADR 0001-cli). `.svcenv.json` is looked for from `cwd`
 * upwards only when the project or the env is still missing.
 */
export function resolveSettings(flags: FlagValues, env: Env, cwd: string = process.cwd()): Settings {
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
  const projectFile = partial.project && partial.env ? undefined : findProjectFile(cwd);
  const local = projectFile ? readProjectFile(projectFile) : {};
  const project = partial.project ?? local.project;
  const targetEnv = partial.env ?? local.env;
  const complete = partial.apiUrl && partial.token && project && targetEnv;
  const file = complete ? {} : readConfigFile(configPath(env));
  return {
    apiUrl: partial.apiUrl ?? file.apiUrl ?? DEFAULT_API_URL,
    token: partial.token ?? file.token,
    project: project ?? file.project,
    env: targetEnv ?? file.env,
    ...(projectFile ? { projectFile } : {}),
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

/**
 * A project or environment is missing. `dispatch` (cli.ts) asks the server which ones the token can
 * choose from and names them in the message (D58); `settings` is what that lookup needs and is never
 * printed.
 */
export class MissingTargetError extends CliError {
  constructor(
    readonly missing: 'project' | 'env',
    readonly settings: Settings,
  ) {
    super(
      'CONFIG',
      missing === 'project' ? 'no project' : 'no environment',
      missing === 'project'
        ? 'pass --project <id|slug>, set SVCENV_PROJECT or run `svcenv setup` (see `svcenv projects`)'
        : 'pass --env <name>, set SVCENV_ENV or run `svcenv setup`',
    );
  }
}

/**
 * The project is passed to the server as given, an id or a slug (D58): the server decides what names a
 * project. Only an access token pasted into the wrong place is refused here, so that it is neither sent
 * in a URL nor repeated on the screen (or into a CI log).
 */
export function requireTarget(s: Settings): { project: string; env: string } {
  if (!s.project) throw new MissingTargetError('project', s);
  if (looksLikeToken(s.project)) {
    throw new CliError(
      'CONFIG',
      'the project is an access token, not a project id or slug',
      'list projects with `svcenv projects`',
    );
  }
  if (!s.env) throw new MissingTargetError('env', s);
  checkEnvName(s.env, s);
  return { project: s.project, env: s.env };
}

/** The environments a project has unless it chose others (D20): safe to name, they are nobody's secret. */
const DEFAULT_ENVS = ['dev', 'staging', 'prod'];

/**
 * An environment that is not an environment name. `lowered` is its lower-case form when that one would be
 * a name (`PROD`): cli.ts then looks it up among the project's environments and suggests it only if it is
 * one, as it is never repeated otherwise.
 */
export class EnvNameError extends CliError {
  constructor(
    message: string,
    hint: string,
    readonly lowered: string | undefined,
    readonly settings: Settings | undefined,
  ) {
    super('CONFIG', message, hint);
  }
}

/**
 * D20's rule for environment names, checked before any request or file write: a token or a value pasted
 * into --env would otherwise travel in the URL into the server's log (or into `.svcenv.json`), and it is
 * not repeated here either.
 */
export function checkEnvName(env: string, settings?: Settings): void {
  if (ENV_NAME.test(env)) return;
  const what = 'the environment (--env, SVCENV_ENV, .svcenv.json or the config file) is not an environment name';
  const rule = 'environment names are 1 to 64 characters of a-z, 0-9, "-" and "_", such as dev, staging or prod';
  const lowered = env.toLowerCase();
  if (!looksLikeToken(env) && ENV_NAME.test(lowered)) {
    throw new EnvNameError(
      `${what}: environment names are lower-case; it is not repeated`,
      DEFAULT_ENVS.includes(lowered) ? `did you mean --env ${lowered}?` : rule,
      lowered,
      settings,
    );
  }
  throw new EnvNameError(
    `${what}${looksLikeToken(env) ? ' but an access token' : ''}; it is not repeated`,
    rule,
    undefined,
    settings,
  );
}

/** D20: an environment name is 1 to 64 characters of lower-case letters, digits, `-` and `_`. */
export const ENV_NAME = /^[a-z0-9_-]{1,64}$/;

/** D42's offline fallback settings, for pull and run. */
export interface OfflineSettings {
  /** `$SVCENV_CACHE_DIR`, else `$XDG_CACHE_HOME/svcenv`, else `~/.cache/svcenv`. */
  cacheDir: string;
  /** `--max-stale` or `SVCENV_MAX_STALE` (default 24h); 0 turns the fallback off. */
  maxStaleMs: number;
  /** `SVCENV_TIMEOUT` seconds (default 10): no answer by then counts as unreachable. */
  timeoutMs: number;
  /** `--offline`: no request at all, the cache or nothing. */
  offline: boolean;
}

const DURATION = /^(\d+(?:\.\d+)?)(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `90s`, `30m`, `24h`, `7d` (D42), or `0`; milliseconds. The value itself is never repeated in the error. */
export function parseDuration(raw: string, what: string): number {
  const t = raw.trim();
  if (t === '0') return 0;
  const m = DURATION.exec(t);
  if (!m) throw new CliError('USAGE', `${what} must be a duration such as 90s, 30m, 24h or 7d (or 0)`);
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

export function resolveOfflineSettings(
  flags: { maxStale?: string | boolean | undefined; offline?: string | boolean | undefined },
  env: Env,
): OfflineSettings {
  const maxStale = nonEmpty(flags.maxStale);
  const maxStaleMs = maxStale
    ? parseDuration(maxStale, '--max-stale')
    : env.SVCENV_MAX_STALE
      ? parseDuration(env.SVCENV_MAX_STALE, 'SVCENV_MAX_STALE')
      : UNIT_MS.h * 24;
  let timeoutMs = 10_000;
  if (env.SVCENV_TIMEOUT) {
    const seconds = Number(env.SVCENV_TIMEOUT);
    if (!(seconds > 0) || !Number.isFinite(seconds)) {
      throw new CliError('USAGE', 'SVCENV_TIMEOUT must be a number of seconds greater than 0');
    }
    timeoutMs = seconds * 1000;
  }
  const cacheDir =
    nonEmpty(env.SVCENV_CACHE_DIR) ??
    (env.XDG_CACHE_HOME ? `${env.XDG_CACHE_HOME}/svcenv` : `${env.HOME || os().homedir()}/.cache/svcenv`);
  return { cacheDir, maxStaleMs, timeoutMs, offline: flags.offline === true };
}
