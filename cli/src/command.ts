/**
 * The shape of a command (guide convention 12): a plain async function from parsed options to a
 * result. Only `main` prints results and calls process.exit.
 */
import type { FlagSpecs, Parsed } from './args.js';
import type { Env } from './config.js';
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

/** The commands that never send an access token, and so take no `--identity`. */
const WITHOUT_TOKEN = new Set(['login', 'logout', 'completion', 'upgrade', 'version']);

/** D61's global flag, taken by every command that sends an access token. */
export const identityFlag = {
  identity: {
    type: 'string',
    description:
      "workload identity id: exchange the platform's identity token for a short-lived access token (default: $SVCENV_IDENTITY)",
  },
} as const satisfies FlagSpecs;

export const usesToken = (c: Command): boolean => !WITHOUT_TOKEN.has(c.name);

/** A command's flags as parsed, printed by `--help` and completed: its own, and `--identity` when it sends a token. */
export function flagsOf(c: Command): FlagSpecs {
  return usesToken(c) ? { ...c.flags, ...identityFlag } : c.flags;
}
