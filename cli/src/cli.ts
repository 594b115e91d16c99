/**
 * Dispatch: argv → command → result. Kept apart from main.ts so that tests can call it in-process.
 */
import { Api, ApiError } from './api.js';
import { type Parsed, parseArgs, renderFlagHelp } from './args.js';
import {
  type Command,
  type CommandResult,
  type Context,
  flagsOf,
  settingFlags,
  tokenSource,
  usesToken,
} from './command.js';
import { accessCommand } from './commands/access.js';
import { makeCompletionCommand } from './commands/completion.js';
import { diffCommand } from './commands/diff.js';
import { leaseCommand } from './commands/lease.js';
import { loginCommand } from './commands/login.js';
import { logoutCommand } from './commands/logout.js';
import { projectsCommand } from './commands/projects.js';
import { pullCommand } from './commands/pull.js';
import { pushCommand } from './commands/push.js';
import { requestsCommand } from './commands/requests.js';
import { runCommand } from './commands/run.js';
import { setupCommand } from './commands/setup.js';
import { upgradeCommand } from './commands/upgrade.js';
import { varsCommand } from './commands/vars.js';
import { versionCommand } from './commands/version.js';
import { whoamiCommand } from './commands/whoami.js';
import { EnvNameError, MissingTargetError, resolveSettings, type Settings } from './config.js';
import { CliError, closest, looksLikeToken, shown, usageError } from './errors.js';
import { forgetIdentityToken, identityToken } from './identity.js';

/** Every command, in the order of the help; `--help` and the completion scripts (D51) both read it. */
export const COMMANDS: readonly Command[] = [
  loginCommand,
  setupCommand,
  pullCommand,
  runCommand,
  leaseCommand,
  pushCommand,
  diffCommand,
  varsCommand,
  requestsCommand,
  accessCommand,
  projectsCommand,
  whoamiCommand,
  logoutCommand,
  makeCompletionCommand(() => COMMANDS),
  upgradeCommand,
  versionCommand,
];

export function topHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'svcenv: configuration variables and secrets from a svcenv server',
    '',
    'Usage: svcenv <command> [flags]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Getting started: `svcenv login --token -` (paste an access token from the dashboard), then',
    '`svcenv setup` in your project directory, then `svcenv pull` or `svcenv run --all -- <command>`.',
    '',
    'Settings come from flags (--token, --api-url, --project, --env), then SVCENV_TOKEN, SVCENV_PROJECT,',
    'SVCENV_ENV, SVCENV_OUTPUT, SVCENV_API_URL, then the nearest .svcenv.json (project and env, written by',
    '`svcenv setup`), then ~/.config/svcenv/config.json (written by `svcenv login`).',
    '-p, -e and -f are short for --project, --env and --file.',
    'Without a stored token (CI jobs, pods): SVCENV_IDENTITY=<identity id> (or --identity) exchanges the',
    "platform's identity token (SVCENV_OIDC_TOKEN, SVCENV_OIDC_TOKEN_FILE, GitHub Actions or Kubernetes) for a",
    'short-lived access token; --token and SVCENV_TOKEN take precedence over it, and it over the token of',
    '`svcenv login`. `--token -` reads the token from standard input (on a terminal: asked for, never echoed).',
    'Run `svcenv <command> --help` for the flags of a command; `svcenv completion bash|zsh|fish` for completion.',
    '',
  ].join('\n');
}

export function commandHelp(c: Command): string {
  const flags = renderFlagHelp({ ...flagsOf(c), help: { type: 'boolean', description: 'show this help' } });
  return `${c.summary}\n\nUsage: ${c.usage}\n\nFlags:\n${flags}\n${c.details ? `\n${c.details}\n` : ''}`;
}

/** `--help` counts only before `--`: after it, it belongs to the command that `run` starts. */
function wantsHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** The flags that may also come before the command: `svcenv --token - pull`, `svcenv --identity <id> run ...`. */
const GLOBAL_FLAGS = ['identity', 'token', 'api-url'] as const;

/** `svcenv --identity <id> <command> ...`: the global flags before the command, as after it. */
function leadingGlobals(argv: readonly string[]): { globals: Record<string, string>; argv: readonly string[] } {
  const globals: Record<string, string> = {};
  let i = 0;
  for (;;) {
    const arg = argv[i];
    const name = GLOBAL_FLAGS.find((f) => arg === `--${f}` || arg?.startsWith(`--${f}=`));
    if (!arg || !name) break;
    if (name in globals) throw usageError(`--${name} given twice`);
    if (arg.includes('=')) {
      globals[name] = arg.slice(arg.indexOf('=') + 1);
      i += 1;
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined || (value.startsWith('-') && value !== '-')) throw usageError(`--${name} needs a value`);
    globals[name] = value;
    i += 2;
  }
  return { globals, argv: argv.slice(i) };
}

export async function dispatch(args: readonly string[], ctx: Context): Promise<CommandResult> {
  const { globals, argv } = leadingGlobals(args);
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    const sub = name === 'help' ? COMMANDS.find((c) => c.name === rest[0]) : undefined;
    return { stdout: sub ? commandHelp(sub) : topHelp() };
  }
  if (name === '--version') return versionCommand.run({ flags: {}, positionals: [], rest: undefined }, ctx);
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    const guess = closest(
      name,
      COMMANDS.map((c) => c.name),
    );
    throw usageError(
      `unknown command ${shown(name)}`,
      guess
        ? `did you mean \`svcenv ${guess}\`? (\`svcenv --help\` lists the commands)`
        : 'run `svcenv --help` for the list of commands',
    );
  }
  if (wantsHelp(rest)) return { stdout: commandHelp(command) };
  const parsed: Parsed = parseArgs(rest, flagsOf(command), command.name, { commandAfterFlags: command.name === 'run' });
  for (const [flag, value] of Object.entries(globals)) {
    if (!(flag in flagsOf(command))) throw usageError(`${command.name} takes no --${flag}`);
    if (parsed.flags[flag] !== undefined) throw usageError(`--${flag} given twice`);
    parsed.flags[flag] = value;
  }
  if (command.name !== 'run' && parsed.rest !== undefined)
    throw usageError(`${command.name} takes no \`--\` arguments`);
  if (command.name !== 'run' && !command.positionals && parsed.positionals.length) {
    const arg = parsed.positionals[0]!;
    // `svcenv push .env`, as other tools take their file: the file goes after --file. Said plainly, because
    // a push that did not happen followed by a pull (which overwrites .env) loses the file's local values.
    // Not for KEY=VALUE (`vars set` takes those) nor a token: neither is a file name to repeat.
    const fileHint =
      'file' in flagsOf(command) && parsed.positionals.length === 1 && !arg.includes('=') && !looksLikeToken(arg)
        ? `a file goes after --file: svcenv ${command.name} --file ${shown(arg)}`
        : undefined;
    throw usageError(`unexpected argument ${shown(arg)}`, fileHint ?? `see: svcenv ${command.name} --help`);
  }
  // `--token -` (D61's flag, or login's): read once here, so that every command takes it the same way.
  let tokenCtx = ctx;
  if (parsed.flags.token === '-') {
    const { readToken } = await import('./prompt.js');
    const token = await readToken();
    if (!token) throw usageError('no token on standard input (--token -)', 'paste the access token, then Enter');
    parsed.flags.token = token;
    tokenCtx = Object.assign(Object.create(ctx) as Context, { tokenFromStdin: true });
  } else if (parsed.flags.token === '') throw usageError('--token is empty');
  let runCtx = await withIdentity(command, parsed, tokenCtx);
  try {
    try {
      return await command.run(parsed, runCtx);
    } catch (err) {
      const identity = runCtx.identity;
      if (!(identity && err instanceof ApiError && err.status === 401)) throw err;
      await forgetIdentityToken(ctx.env, apiUrlOf(parsed, ctx), identity.identity);
      // A cached token refused: the identity changed since it was issued. Once more with a new exchange,
      // unless the command already started a program (`run --watch` refused mid-way).
      if (!identity.cached || (command.name === 'run' && parsed.flags.watch)) throw err;
      runCtx = await withIdentity(command, parsed, tokenCtx);
      return await command.run(parsed, runCtx);
    }
  } catch (err) {
    if (err instanceof MissingTargetError) throw await withChoices(err);
    if (err instanceof EnvNameError) throw await withLowered(err);
    if (err instanceof ApiError && err.status === 404 && command.flags.env)
      throw await withEnvGuess(err, parsed, runCtx);
    if (err instanceof ApiError && err.status === 401 && err.code === 'UNAUTHORIZED' && sendsToken(command))
      throw notAccepted(err, parsed, runCtx);
    throw err;
  }
}

const sendsToken = (c: Command) => usesToken(c) || c.name === 'login';

/** The API URL of a command line: --api-url, then SVCENV_API_URL, the config file, the default. */
function apiUrlOf(parsed: Parsed, ctx: Context): string {
  return resolveSettings({ apiUrl: parsed.flags['api-url'] }, ctx.env, ctx.cwd).apiUrl;
}

/**
 * A 401 to a request made with an access token says so, and where to make one, instead of the server's words
 * for whichever credential it took the text for (a text without the `tok_live_` prefix is read as a dashboard
 * session: "invalid or expired session"). The server's reason stays when it is about the token (revoked,
 * expired, its creator gone). A refused identity exchange (D61) happens before the command and is not this.
 */
function notAccepted(err: ApiError, parsed: Parsed, ctx: Context): CliError {
  let settings: Settings;
  try {
    settings = resolveSettings(settingFlags(parsed), ctx.env, ctx.cwd);
  } catch {
    return err;
  }
  const token = settings.token ?? '';
  const from = tokenSource(parsed, ctx);
  let origin: string;
  try {
    origin = new URL(settings.apiUrl).origin;
  } catch {
    return err;
  }
  const where = `make an access token on the dashboard's Tokens page (${origin}/tokens), then \`svcenv login --token -\` and paste it (or pass --token, or set SVCENV_TOKEN)`;
  // D61: a refused exchange, or the token it issued refused, keeps the server's words.
  if (ctx.identity) return err;
  if (token.startsWith('eyJ')) {
    return new CliError(err.code, `the credential from ${from} is a dashboard session, not an access token`, where);
  }
  if (!token.startsWith('tok_')) {
    return new CliError(
      err.code,
      `the credential from ${from} is not an access token (access tokens begin with tok_live_)`,
      where,
    );
  }
  return new CliError(err.code, `the access token from ${from} was not accepted: ${err.message}`, where);
}

/**
 * D61: with `--identity` or SVCENV_IDENTITY, and no SVCENV_TOKEN (which takes precedence), the command runs
 * with the access token exchanged for the identity, in place of the stored one. The context keeps its
 * getters (`stdout`, `stderr` are created only when used): the override is an object on top of it.
 */
async function withIdentity(command: Command, parsed: Parsed, ctx: Context): Promise<Context> {
  if (!usesToken(command)) return ctx;
  const flag = parsed.flags.identity;
  const identity = (typeof flag === 'string' ? flag : ctx.env.SVCENV_IDENTITY)?.trim();
  // D61: --token and SVCENV_TOKEN take precedence over an identity.
  if (!identity || parsed.flags.token !== undefined || ctx.env.SVCENV_TOKEN) return ctx;
  const apiUrl = apiUrlOf(parsed, ctx);
  const issued = await identityToken(ctx.env, apiUrl, identity, parsed.flags.offline === true);
  return Object.assign(Object.create(ctx) as Context, {
    env: { ...ctx.env, SVCENV_TOKEN: issued.token },
    identity: issued,
  });
}

/** The project's environments as the token sees them; undefined when they cannot be asked for. */
async function projectEnvs(settings: Settings): Promise<string[] | undefined> {
  const { apiUrl, token, project } = settings;
  if (!token || !project) return undefined;
  try {
    const { operations: ops } = await import('./schemas.js');
    const { projects } = await new Api(apiUrl, token).json(ops.listProjects);
    return projects.find((p) => p.id === project || p.slug === project)?.envs;
  } catch {
    return undefined;
  }
}

/** `-e PROD`: suggests `prod` when the project has that environment (the value is otherwise not repeated). */
async function withLowered(err: EnvNameError): Promise<CliError> {
  if (!err.lowered || !err.settings || err.hint?.startsWith('did you mean')) return err;
  const envs = await projectEnvs(err.settings);
  return envs?.includes(err.lowered) ? new CliError(err.code, err.message, `did you mean --env ${err.lowered}?`) : err;
}

/**
 * D58's "did you mean" for an environment the project lacks (`-e prdo`): the server's 404 stands, with the
 * project's environments and the closest one. A 404 for another reason (no such project) stays as it is.
 */
async function withEnvGuess(err: ApiError, parsed: Parsed, ctx: Context): Promise<CliError> {
  let settings: Settings;
  try {
    settings = resolveSettings(settingFlags(parsed), ctx.env, ctx.cwd);
  } catch {
    return err;
  }
  const env = settings.env;
  if (!env) return err;
  const envs = await projectEnvs(settings);
  if (!envs || envs.includes(env)) return err;
  const guess = closest(env, envs);
  return new CliError(
    err.code,
    `the project has no environment ${shown(env)}: choose one with --env: ${envs.join(', ')}`,
    guess ? `did you mean --env ${guess}?` : err.hint,
  );
}

/**
 * D58: "no environment" names the environments to choose from ("choose one with --env: dev, staging,
 * prod"), and "no project" the projects, as the token sees them (GET /v1/projects). Without a token, or
 * when the server cannot be asked, the error stays as it was: the lookup only ever adds to it.
 */
async function withChoices(err: MissingTargetError): Promise<CliError> {
  const { apiUrl, token, project } = err.settings;
  if (!token) return err;
  let projects: { id: string; name: string; slug?: string | undefined; envs: string[] }[];
  try {
    const { operations: ops } = await import('./schemas.js');
    projects = (await new Api(apiUrl, token).json(ops.listProjects)).projects;
  } catch {
    return err;
  }
  if (err.missing === 'project') {
    if (projects.length === 0) return new CliError(err.code, 'no project, and the token sees none', err.hint);
    // A workspace may have many: the first ten, and where the rest are.
    const list = projects
      .slice(0, 10)
      .map((p) => `${p.id} (${p.name})`)
      .join(', ');
    const more = projects.length > 10 ? `, and ${projects.length - 10} more (see \`svcenv projects\`)` : '';
    return new CliError(err.code, `no project: choose one with --project: ${list}${more}`, err.hint);
  }
  const p = projects.find((x) => x.id === project || x.slug === project);
  if (!p || p.envs.length === 0) return err;
  return new CliError(err.code, `no environment: choose one with --env: ${p.envs.join(', ')}`, err.hint);
}
