import type { ChildProcess } from 'node:child_process';
import { Api } from '../api.js';
import { splitList } from '../args.js';
import { fs, os } from '../builtins.js';
import { type Command, type Context, targetFlags } from '../command.js';
import { requireTarget, requireToken, resolveSettings } from '../config.js';
import { CliError, usageError } from '../errors.js';
import { pullVarsWithContext } from '../remote.js';
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
    const { vars, context } = await pullVarsWithContext(new Api(settings.apiUrl, token), { ...target, metadata: true });
    const exposed = selectScope(vars, scope);
    const argv = substitutePlaceholders([command, ...commandArgs], exposed);

    // Copied with native calls, not per-key loops: this runs once per start, before any JIT, over up to
    // thousands of variables (bench/cli.bench.ts).
    const childEnv = Object.assign({}, ctx.env) as Record<string, string>;
    // The access token is ours, not the command's, unless the environment itself defines it.
    delete childEnv.SVCENV_TOKEN;
    Object.assign(childEnv, Object.fromEntries(exposed));
    // The values to scrub, listed only when the child first writes (a silent command never pays the pass).
    // The server's context values (project id, env and project name) are not secret; masking "production"
    // in every log line would only hide useful output (ADR 0001-cli). A user variable that overrides one
    // of them is the user's value, and scrubbed like any other.
    const automaton = new ScrubAutomaton(function* () {
      yield token;
      for (const [k, v] of exposed) if (!context.has(k)) yield v;
    });
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

export function selectScope(vars: ReadonlyMap<string, string>, scope: Scope): ReadonlyMap<string, string> {
  if (scope.kind === 'all') {
    // Nothing left out: the pulled map itself, not a copy made by a cold loop over thousands of entries.
    if (scope.except.size === 0) return vars;
    const selected = new Map<string, string>();
    for (const [k, v] of vars) if (!scope.except.has(k)) selected.set(k, v);
    return selected;
  }
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

/** A started child: its two output streams, its exit status (shell convention), and kill. */
interface Child {
  stdout: AsyncIterable<Uint8Array>;
  stderr: AsyncIterable<Uint8Array>;
  status: Promise<number>;
  kill(signal: NodeJS.Signals): void;
}

/** The part of Bun's API that `run` uses: the compiled executable runs on Bun, `tsx` on Node. */
interface BunSubprocess {
  readonly stdout: AsyncIterable<Uint8Array>;
  readonly stderr: AsyncIterable<Uint8Array>;
  readonly exited: Promise<number>;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  kill(signal?: NodeJS.Signals): void;
}
interface BunRuntime {
  spawn(
    cmd: string[],
    opts: { env: Record<string, string>; stdin: 'inherit'; stdout: 'pipe'; stderr: 'pipe' },
  ): BunSubprocess;
}
const bunRuntime = (globalThis as { Bun?: BunRuntime }).Bun;

/** Shell convention for a child killed by a signal: 128 + the signal number. */
const statusOf = (code: number | null, signal: NodeJS.Signals | null) =>
  code ?? 128 + (signal ? (os().constants.signals[signal] ?? 0) : 0);

function execError(command: string, code: string | undefined): CliError {
  return new CliError('EXEC', `cannot start ${command} (${code})`, code === 'ENOENT' ? 'is it on PATH?' : undefined);
}

/**
 * Bun's native spawn: a few milliseconds less than its node:child_process layer on every `run`, which
 * matters for short commands (bench/cli.bench.ts).
 */
function startBun(bun: BunRuntime, argv: string[], env: Record<string, string>): Child {
  let proc: BunSubprocess;
  try {
    proc = bun.spawn(argv, { env, stdin: 'inherit', stdout: 'pipe', stderr: 'pipe' });
  } catch (err) {
    throw execError(argv[0]!, (err as NodeJS.ErrnoException).code ?? 'ENOENT');
  }
  return {
    stdout: proc.stdout,
    stderr: proc.stderr,
    status: proc.exited.then((code) => statusOf(proc.signalCode ? null : (proc.exitCode ?? code), proc.signalCode)),
    kill: (signal) => proc.kill(signal),
  };
}

/** Under Node (tests, `npm run dev`); node:child_process is loaded only here, it costs Bun ~1 ms to load. */
async function startNode(argv: string[], env: Record<string, string>): Promise<Child> {
  const { spawn } = await import('node:child_process');
  let child: ChildProcess;
  try {
    child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['inherit', 'pipe', 'pipe'] });
  } catch (err) {
    throw execError(argv[0]!, (err as NodeJS.ErrnoException).code);
  }
  const status = new Promise<number>((resolve) =>
    child.once('close', (code, signal) => resolve(statusOf(code, signal))),
  );
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
  } catch (err) {
    throw execError(argv[0]!, (err as NodeJS.ErrnoException).code);
  }
  return { stdout: child.stdout!, stderr: child.stderr!, status, kill: (signal) => child.kill(signal) };
}

/** Runs argv with stdout and stderr scrubbed; resolves with its exit status once all output is written. */
export async function execScrubbed(
  argv: string[],
  env: Record<string, string>,
  automaton: ScrubAutomaton,
  ctx: Pick<Context, 'stdout' | 'stderr' | 'stdoutFd' | 'stderrFd'>,
): Promise<number> {
  const child = bunRuntime ? startBun(bunRuntime, argv, env) : await startNode(argv, env);
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  const handlers = FORWARDED_SIGNALS.map((s) => [s, forward(s)] as const);
  for (const [s, h] of handlers) process.on(s, h);
  try {
    const [status] = await Promise.all([
      child.status,
      pipeScrubbed(child.stdout, automaton.stream(), new Sink(() => ctx.stdout, ctx.stdoutFd)),
      pipeScrubbed(child.stderr, automaton.stream(), new Sink(() => ctx.stderr, ctx.stderrFd)),
    ]);
    return status;
  } finally {
    for (const [s, h] of handlers) process.off(s, h);
  }
}

/**
 * Where scrubbed output goes. When the destination has a file descriptor (svcenv's own stdout and
 * stderr), output is written with plain blocking write(2) calls: no copy, no queue, and the child is
 * held back simply because we stop reading while a write blocks. If the descriptor turns out to be
 * non-blocking (EAGAIN), the rest goes through the stream, with its backpressure. Destinations
 * without one (tests pass their own streams) always use the stream.
 * A closed destination (`| head`) must not kill us before the child's exit status is known: output is
 * then dropped.
 */
class Sink {
  private broken = false;
  private stream: NodeJS.WritableStream | undefined;

  constructor(
    private readonly open: () => NodeJS.WritableStream,
    private fd: number | undefined,
  ) {
    if (fd === undefined) this.stream = this.attach();
  }

  private attach(): NodeJS.WritableStream {
    const stream = this.open();
    stream.on('error', () => {
      this.broken = true;
    });
    return stream;
  }

  private get to(): NodeJS.WritableStream {
    this.stream ??= this.attach();
    return this.stream;
  }

  /** Writes `parts` in order; false when the stream asks the caller to wait for 'drain'. */
  write(parts: readonly Uint8Array[]): boolean {
    if (this.broken) return true;
    let rest = parts;
    if (this.fd !== undefined && parts.length > 1) {
      // One writev(2) per chunk of child output instead of one write per piece between matches: the
      // system calls, not the copying, bound throughput into a fast sink.
      try {
        rest = skipBytes(parts, fs().writevSync(this.fd, parts as Uint8Array[]));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') {
          this.broken = true;
          return true;
        }
      }
    }
    let ok = true;
    for (const part of rest) {
      if (this.broken || part.length === 0) continue;
      let off = 0;
      if (this.fd !== undefined) {
        try {
          const { writeSync } = fs();
          while (off < part.length) off += writeSync(this.fd, part, off);
          continue;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') {
            this.broken = true;
            continue;
          }
          this.fd = undefined;
        }
      }
      ok = this.to.write(off === 0 ? part : part.subarray(off));
    }
    return ok;
  }

  /** Resolves once the stream has drained (at once for blocking writes or a broken destination). */
  drained(): Promise<void> {
    if (this.broken || this.fd !== undefined) return Promise.resolve();
    return new Promise((resolve) => this.to.once('drain', resolve));
  }

  /** Resolves once everything written so far has been handed to the operating system. */
  flushed(): Promise<void> {
    if (this.broken || this.fd !== undefined) return Promise.resolve();
    return new Promise((resolve) => this.to.write('', () => resolve()));
  }
}

/** What is left of `parts` after its first `n` bytes (a partial writev). */
export function skipBytes(parts: readonly Uint8Array[], n: number): readonly Uint8Array[] {
  let i = 0;
  while (i < parts.length && n >= parts[i]!.length) n -= parts[i++]!.length;
  if (i === parts.length) return [];
  return n === 0 ? parts.slice(i) : [parts[i]!.subarray(n), ...parts.slice(i + 1)];
}

/** Copies a child stream through a scrubber, with backpressure; resolves once all is written. */
async function pipeScrubbed(from: AsyncIterable<Uint8Array>, scrub: ScrubStream, sink: Sink): Promise<void> {
  const parts: Uint8Array[] = [];
  for await (const chunk of from) {
    parts.length = 0;
    scrub.push(chunk, parts);
    if (!sink.write(parts)) await sink.drained();
  }
  parts.length = 0;
  scrub.finish(parts);
  sink.write(parts);
  await sink.flushed();
}
