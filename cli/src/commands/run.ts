import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:os';
import { Api } from '../api.js';
import { splitList } from '../args.js';
import { type Command, type Context, targetFlags } from '../command.js';
import { requireTarget, requireToken, resolveSettings } from '../config.js';
import { CliError, usageError } from '../errors.js';
import { CONTEXT_KEYS, pullVars } from '../remote.js';
import { ScrubAutomaton, type ScrubStream } from '../scrub.js';

const PLACEHOLDER = /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g;
const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const;

export const runCommand: Command = {
  name: 'run',
  summary: 'Run a command with variables as environment variables, scrubbing them from its output',
  usage:
    'svcenv run [--project <id>] [--env <name>] (--only <k1,k2> | --all [--except <k1,k2>]) -- <command> [args...]',
  flags: {
    ...targetFlags,
    only: { type: 'string', description: 'expose only these keys (comma-separated)' },
    all: { type: 'boolean', description: 'expose every variable of the environment' },
    except: { type: 'string', description: 'with --all: keys to leave out (comma-separated)' },
  },
  details:
    'Variables reach the command as environment variables, never as arguments; {{KEY}} in the arguments\n' +
    'is replaced by the value just before the command starts (the key must be in scope). Every exposed\n' +
    "value of 6 or more characters is replaced by *** in the command's stdout and stderr. The command's\n" +
    'exit status is passed through; SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to it.\n' +
    'Not a sandbox: a program can still send its environment elsewhere.',
  async run(args, ctx) {
    if (args.rest === undefined) throw usageError('missing `--` before the command', 'svcenv run --all -- <command>');
    const [command, ...commandArgs] = args.rest;
    if (command === undefined) throw usageError('no command after `--`');
    if (args.positionals.length) throw usageError(`unexpected argument ${args.positionals[0]} before \`--\``);
    const scope = parseScope(args.flags);

    const settings = resolveSettings({ project: args.flags.project, env: args.flags.env }, ctx.env);
    const target = requireTarget(settings);
    const token = requireToken(settings);
    const vars = await pullVars(new Api(settings.apiUrl, token), { ...target, metadata: true });
    const exposed = selectScope(vars, scope);
    const argv = substitutePlaceholders([command, ...commandArgs], exposed);

    const childEnv: Record<string, string | undefined> = { ...ctx.env };
    // The access token is ours, not the command's, unless the environment itself defines it.
    delete childEnv.SVCENV_TOKEN;
    for (const [k, v] of exposed) childEnv[k] = v;
    // Context values (project id, env and project name) are not secret; masking "production" in every
    // log line would only hide useful output (ADR 0001-cli).
    const scrubbed = [...exposed].filter(([k]) => !CONTEXT_KEYS.has(k)).map(([, v]) => v);
    const automaton = new ScrubAutomaton([...scrubbed, token]);
    return { exitCode: await execScrubbed(argv, childEnv, automaton, ctx) };
  },
};

type Scope = { kind: 'only'; keys: string[] } | { kind: 'all'; except: Set<string> };

export function parseScope(flags: Record<string, string | boolean | undefined>): Scope {
  const only = flags.only;
  const all = flags.all === true;
  const except = flags.except;
  if (only !== undefined && all) throw usageError('--only and --all are mutually exclusive');
  if (except !== undefined && !all) throw usageError('--except is valid only with --all');
  if (all) return { kind: 'all', except: new Set(typeof except === 'string' ? splitList(except) : []) };
  if (typeof only === 'string') {
    const keys = splitList(only);
    if (keys.length === 0) throw usageError('--only needs at least one key');
    return { kind: 'only', keys };
  }
  throw usageError('choose a scope: --only <k1,k2> or --all', 'svcenv run --all -- <command>');
}

export function selectScope(vars: ReadonlyMap<string, string>, scope: Scope): Map<string, string> {
  if (scope.kind === 'all') return new Map([...vars].filter(([k]) => !scope.except.has(k)));
  const missing = scope.keys.filter((k) => !vars.has(k));
  if (missing.length) throw new CliError('NOT_FOUND', `--only names keys that do not exist: ${missing.join(', ')}`);
  return new Map(scope.keys.map((k) => [k, vars.get(k)!]));
}

/** Run rules 4-5: every placeholder must name an exposed key, checked before anything starts. */
export function substitutePlaceholders(argv: readonly string[], exposed: ReadonlyMap<string, string>): string[] {
  for (const arg of argv) {
    for (const m of arg.matchAll(PLACEHOLDER)) {
      if (!exposed.has(m[1]!)) {
        throw usageError(
          `placeholder {{${m[1]}}} names a variable outside the scope`,
          'add it to --only, or remove it from --except',
        );
      }
    }
  }
  return argv.map((arg) => arg.replace(PLACEHOLDER, (_, key: string) => exposed.get(key)!));
}

async function execScrubbed(
  argv: string[],
  env: Record<string, string | undefined>,
  automaton: ScrubAutomaton,
  ctx: Context,
): Promise<number> {
  let child: ChildProcess;
  try {
    child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['inherit', 'pipe', 'pipe'] });
  } catch (err) {
    throw new CliError('EXEC', `cannot start ${argv[0]} (${(err as NodeJS.ErrnoException).code})`);
  }
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  const handlers = FORWARDED_SIGNALS.map((s) => [s, forward(s)] as const);
  for (const [s, h] of handlers) process.on(s, h);
  try {
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    const closed = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('close', (code, signal) => resolve([code, signal])),
    );
    const piped = Promise.all([
      pipeScrubbed(child.stdout!, automaton.stream(), ctx.stdout),
      pipeScrubbed(child.stderr!, automaton.stream(), ctx.stderr),
    ]);
    try {
      await spawned;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new CliError('EXEC', `cannot start ${argv[0]} (${code})`, code === 'ENOENT' ? 'is it on PATH?' : undefined);
    }
    const [[code, signal]] = await Promise.all([closed, piped]);
    // Shell convention for a child killed by a signal: 128 + the signal number.
    return code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0);
  } finally {
    for (const [s, h] of handlers) process.off(s, h);
  }
}

/** Copies a child stream through a scrubber, with backpressure; resolves once all is written. */
function pipeScrubbed(from: NodeJS.ReadableStream, scrub: ScrubStream, to: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    let broken = false;
    // A closed stdout (`| head`) must not kill us before the child's exit status is known.
    to.on('error', () => {
      broken = true;
    });
    from.on('data', (chunk: Buffer) => {
      const out = scrub.write(chunk);
      if (broken || out.length === 0) return;
      if (!to.write(out)) {
        from.pause();
        to.once('drain', () => from.resume());
      }
    });
    from.once('end', () => {
      // Written with a callback so that everything is flushed before main exits.
      if (broken) resolve();
      else to.write(scrub.end(), () => resolve());
    });
  });
}
