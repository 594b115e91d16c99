/**
 * The shape of a command (guide convention 12): a plain async function from parsed options to a
 * result. Only `main` prints results and calls process.exit.
 */
import type { FlagSpecs, Parsed } from './args.js';
import { configPath, type Env, type FlagValues } from './config.js';
import type { IdentityToken } from './identity.js';

export interface Context {
  env: Env;
  cwd: string;
  version: string;
  /** Streams for `run`, which forwards its child's output while it runs. */
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /**
   * The file descriptors behind stdout and stderr, when they are the process's own: `run` then writes
   * to them directly and touches the streams only if a descriptor is non-blocking (creating Bun's
   * process.stdout costs milliseconds at start).
   */
  readonly stdoutFd?: number;
  readonly stderrFd?: number;
  /** D61: the workload identity the access token was exchanged for, when one was (whoami names it). */
  readonly identity?: IdentityToken;
  /**
   * Set when `--token -` read the token from standard input (cli.ts): standard input is then used up, so a
   * `KEY=-` of `vars set` cannot read it too, and messages name where the token came from.
   */
  readonly tokenFromStdin?: boolean;
}

export interface CommandResult {
  /** Printed to stdout as is. */
  stdout?: string;
  /** Notes for the user, printed to stderr (never data a script would parse). */
  stderr?: string;
  exitCode?: number;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  flags: FlagSpecs;
  /** Extra help text after the flags. */
  details?: string;
  /**
   * The command takes positional arguments (all commands but `run` refuse them otherwise); the words listed
   * are what the first one may be (a subcommand, a shell), offered by the completion scripts (D51).
   */
  positionals?: readonly string[];
  run(args: Parsed, ctx: Context): Promise<CommandResult>;
}

/** Flags shared by the commands that talk to one environment. */
export const targetFlags = {
  project: {
    type: 'string',
    description: 'project id or slug (default: $SVCENV_PROJECT, then .svcenv.json, then the config file)',
  },
  env: {
    type: 'string',
    description: 'environment name (default: $SVCENV_ENV, then .svcenv.json, then the config file)',
  },
} as const satisfies FlagSpecs;

/** The commands that never send an access token, and so take no `--identity`, `--token` or `--api-url` of this table. */
const WITHOUT_TOKEN = new Set(['login', 'logout', 'completion', 'upgrade', 'version']);

/**
 * D61: `--token` beats SVCENV_TOKEN, an identity and the stored token; `--api-url` beats SVCENV_API_URL and the
 * config file. Taken by every command that talks to the server with a token (login has its own, same spelling).
 */
export const connectionFlags = {
  token: {
    type: 'string',
    description:
      'access token (tok_live_...); "-" reads it from standard input, never echoed (default: $SVCENV_TOKEN, then the config file)',
  },
  'api-url': {
    type: 'string',
    description: 'API base URL (default: $SVCENV_API_URL, then the config file, then http://127.0.0.1:8080)',
  },
} as const satisfies FlagSpecs;

/** D61's global flag, taken by every command that sends an access token. */
export const identityFlag = {
  identity: {
    type: 'string',
    description:
      "workload identity id: exchange the platform's identity token for a short-lived access token (default: $SVCENV_IDENTITY)",
  },
} as const satisfies FlagSpecs;

export const usesToken = (c: Command): boolean => !WITHOUT_TOKEN.has(c.name);

/**
 * A command's flags as parsed, printed by `--help` and completed: its own, and `--token`, `--api-url` and
 * `--identity` when it sends a token.
 */
export function flagsOf(c: Command): FlagSpecs {
  return usesToken(c) ? { ...c.flags, ...connectionFlags, ...identityFlag } : c.flags;
}

/** The setting flags of a command line as resolveSettings takes them (flags beat SVCENV_*, D61 for the token). */
export function settingFlags(args: Parsed): FlagValues {
  return {
    apiUrl: args.flags['api-url'],
    token: args.flags.token,
    project: args.flags.project,
    env: args.flags.env,
  };
}

/** Where the token of a command came from, for messages (never the token itself). */
export function tokenSource(args: Parsed, ctx: Context): string {
  if (typeof args.flags.token === 'string') return ctx.tokenFromStdin ? 'standard input (--token -)' : '--token';
  if (ctx.identity) return `the workload identity ${ctx.identity.identity}`;
  if (ctx.env.SVCENV_TOKEN) return 'SVCENV_TOKEN';
  return configPath(ctx.env);
}
