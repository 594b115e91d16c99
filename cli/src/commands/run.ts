import type { ChildProcess } from 'node:child_process';
import { Api, ApiError } from '../api.js';
import { shellLine, splitList } from '../args.js';
import { fs, os } from '../builtins.js';
import { type Command, type Context, settingFlags, targetFlags } from '../command.js';
import { requireTarget, requireToken, resolveOfflineSettings, resolveSettings } from '../config.js';
import { CliError, looksLikeToken, shown, usageError } from '../errors.js';
import { type Declaration, listDeclarations, RunLeases } from '../leases.js';
import { openCache, type PullAnswer, type PullOptions, pullCached, readPulled } from '../remote.js';
import { ScrubAutomaton, type ScrubStream } from '../scrub.js';
import { noteTo, watchChanges } from '../watch.js';
import { OFFLINE_DETAILS, offlineFlags } from './pull.js';

const PLACEHOLDER = /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g;
const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const;

export const runCommand: Command = {
  name: 'run',
  summary: 'Run a command with variables as environment variables, scrubbing them from its output',
  usage:
    'svcenv run [--project <id|slug>] [--env <name>] (--only <k1,k2> | --all [--except <k1,k2>]) [--scrub all|secrets] [--watch [--restart-signal <NAME>]] [--no-dynamic] [--offline] [--max-stale <duration>] -- <command> [args...]',
  flags: {
    ...targetFlags,
    only: { type: 'string', description: 'expose only these keys (comma-separated)' },
    all: { type: 'boolean', description: 'expose every variable of the environment' },
    except: { type: 'string', description: 'with --all: keys to leave out (comma-separated)' },
    scrub: {
      type: 'string',
      description: 'all: every exposed value is replaced by *** in the output (default); secrets: only secret ones',
    },
    ...offlineFlags,
    watch: { type: 'boolean', description: 'restart the command when the variables change' },
    'restart-signal': {
      type: 'string',
      description: 'with --watch: the signal that stops the command (default SIGTERM)',
    },
    'no-dynamic': { type: 'boolean', description: "lease no dynamic secret (D71): only the environment's variables" },
  },
  details:
    'Variables reach the command as environment variables, never as arguments; {{KEY}} in the arguments\n' +
    'is replaced by the value just before the command starts (the key must be in scope). Every exposed\n' +
    "value of 6 or more characters is replaced by *** in the command's stdout and stderr, and so are its\n" +
    'hex, base64, URL and JSON encodings. --scrub secrets scrubs only the values of secret variables (and\n' +
    'of plain ones whose references reach a secret), so a plain DB_HOST stays readable in logs; it reads the\n' +
    "variables' types from the server (one more request), and scrubs every value when it cannot. The command's\n" +
    'exit status is passed through; SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to it.\n' +
    'Not a sandbox: a program can still send its environment elsewhere.\n' +
    '--only pulls only its keys (and what they reference): a broken reference elsewhere in the\n' +
    'environment does not stop the command. The key names travel in the request URL.\n' +
    'Dynamic secrets (D71): each one of the environment whose variables are in scope is leased before the\n' +
    'command starts (one lease each; a lease that cannot be made stops svcenv with exit 1, nothing started),\n' +
    'its values join the variables and the scrubbed values, each lease is renewed at two thirds of its TTL\n' +
    'and revoked when the command ends, however it ends (also when svcenv is interrupted). --watch keeps\n' +
    'the same leases across restarts. --no-dynamic (and --offline) lease nothing.\n' +
    'With --watch the command is restarted with the new values when an exposed variable changes: the\n' +
    '--restart-signal (default SIGTERM), up to 10 s, then SIGKILL. While the server is away the command\n' +
    'keeps running and svcenv retries with backoff; when the command exits on its own, so does svcenv.\n' +
    OFFLINE_DETAILS,
  async run(args, ctx) {
    // D58: the command goes after `--` (spec run rule 1); the hint is the line given, with `--` in place.
    if (args.rest === undefined) {
      const flags = args.argv?.slice(0, args.argv.length - args.positionals.length) ?? [];
      // The options are repeated only when each is a plain word: a value pasted into --only (it would need
      // quoting) is not echoed back; the hint then shows where `--` goes without them.
      const plain = flags.every((f) => /^[\w@%+=:,./-]+$/.test(f) && !looksLikeToken(f));
      throw usageError(
        'missing `--`: put `--` before the command',
        args.positionals.length
          ? `svcenv run ${plain ? shellLine([...flags, '--', ...args.positionals]) : `<options> -- ${shellLine(args.positionals)}`}`
          : 'svcenv run --all -- <command>',
      );
    }
    const [command, ...commandArgs] = args.rest;
    if (command === undefined) throw usageError('no command after `--`');
    if (args.positionals.length) throw usageError(`unexpected argument ${shown(args.positionals[0]!)} before \`--\``);
    const scope = parseScope(args.flags);
    const watch = args.flags.watch === true;
    if (!watch && args.flags['restart-signal'] !== undefined) throw usageError('--restart-signal needs --watch');
    if (watch && args.flags.offline) throw usageError('--watch needs the server; it cannot be used with --offline');
    const restartSignal = parseSignal(args.flags['restart-signal']);
    const scrub = parseScrub(args.flags.scrub);

    const settings = resolveSettings(settingFlags(args), ctx.env, ctx.cwd);
    const offline = resolveOfflineSettings({ maxStale: args.flags['max-stale'], offline: args.flags.offline }, ctx.env);
    const target = requireTarget(settings);
    const token = requireToken(settings);
    const api = new Api(settings.apiUrl, token, offline.timeoutMs);
    // D71: the environment's dynamic secrets, asked for beside the pull (--all) or before it (--only, whose
    // leased keys the pull would not find). Offline there is no server to lease from (ADR 0030).
    const listing =
      args.flags['no-dynamic'] === true || offline.offline
        ? undefined
        : listDeclarations(api, target).then(
            (declarations) => ({ declarations }),
            (error: unknown) => ({ error }),
          );
    let leasedKeys = new Set<string>();
    if (scope.kind === 'only' && listing) {
      const got = await listing;
      if ('declarations' in got) leasedKeys = new Set(got.declarations.flatMap((d) => d.keys));
    }
    // D67: --only pulls only its keys, so a broken reference elsewhere in the environment does not fail it.
    // Keys a lease gives are not the environment's: left out (and if nothing is left, the whole environment).
    const pulledOnly = scope.kind === 'only' ? scope.keys.filter((k) => !leasedKeys.has(k)) : undefined;
    const only = pulledOnly?.length ? pulledOnly : undefined;
    let pull: PullOptions = { ...target, metadata: true, format: 'dotenv', keys: only };
    // --scrub secrets: the types come from the masked listing, asked for beside the pull; the default path
    // makes no such request. Offline there are none to ask for: every value is scrubbed.
    const types =
      scrub === 'secrets'
        ? () => (offline.offline ? Promise.resolve(unknownTypes('--offline')) : secretKeys(api, target))
        : undefined;
    const firstTypes = types?.();
    const note = noteTo(ctx.stderr, ctx.stderrFd);
    const leases = new RunLeases(api, target, note);
    // From the first lease on, a signal to svcenv must not end it before every lease is revoked (ADR 0030):
    // before the command starts it is noted here (and the command never starts); once it runs, it is also
    // forwarded to the command, and the leases are revoked when the command has ended.
    let interrupted: NodeJS.Signals | undefined;
    const early = FORWARDED_SIGNALS.map((s) => [s, () => (interrupted ??= s)] as const);
    const dropEarly = () => {
      for (const [s, h] of early) process.off(s, h);
    };
    if (listing) for (const [s, h] of early) process.on(s, h);
    // The leases are made while the pull is under way: the database's part of a lease is the longest step
    // of a run's start (bench/leases.bench.ts). A failed listing is judged once the pull has answered.
    const acquiring = listing?.then(async (got) => {
      if ('error' in got) return got;
      await leases.acquire(inScope(got.declarations, scope));
      return undefined;
    });
    // Judged after the pull; until then a failure must not count as unhandled (it would end the process).
    acquiring?.catch(() => undefined);
    try {
      const cache = openCache(api, pull, offline, ctx.identity?.cacheKey ?? token);
      let answer: Awaited<ReturnType<typeof pullCached>>;
      try {
        answer = await pullCached(api, pull, offline, cache);
      } catch (err) {
        if (!only || !refusesKeys(err)) throw err;
        // A key the environment lacks (or a server without subsets): the whole environment, where --only's
        // own check names what is missing as before; if that fails too, the first answer stands.
        pull = { ...pull, keys: undefined };
        answer = await pullCached(api, pull, offline, cache).catch(() => {
          throw err;
        });
      }
      // D42: one warning naming the cause and the age; then the command runs as after a fresh pull.
      if (answer.fallback) note(`warning: ${answer.fallback}`);
      const scrubbed = await scrubbedKeys(firstTypes, note);
      const failedListing = await acquiring;
      if (failedListing) {
        // The listing failed: that failure stands, unless the pull itself fell back on the cache (the
        // server is away), when the command starts without leases, as D42 lets it start on cached values.
        // D42's one warning (above) already says the server is away, which is why nothing is leased.
        if (!answer.fallback) throw failedListing.error;
      }
      if (interrupted) return { exitCode: statusOf(null, interrupted) };
      const leased = leases.values();
      const first = prepare(answer, scope, [command, ...commandArgs], ctx, token, scrubbed, undefined, leased);
      leases.startRenewing();
      // The cache is written once the command has started: it needs none of it (D42).
      const keep = () => answer.keep?.();
      if (!watch) return { exitCode: await execScrubbed(first.argv, first.env, first.automaton, ctx, keep) };
      return {
        exitCode: await runWatching(first, keep, {
          scope,
          command: [command, ...commandArgs],
          ctx,
          note,
          restartSignal,
          token,
          leased,
          types: types && (() => scrubbedKeys(types(), note)),
          watch: { api, pull, cache: await cache, etag: answer.etag ?? '' },
        }),
      };
    } finally {
      // Whatever ended the command (its own exit, a forwarded signal, a kill, a failure to start it or to
      // pull), the leases go before svcenv does, those still being made too; the early handlers stay until
      // then, so a second Ctrl-C waits for it.
      await acquiring?.catch(() => undefined);
      await leases.revokeAll();
      dropEarly();
    }
  },
};

/**
 * D71: the dynamic secrets whose variables are in scope: with --all, each unless --except names all of its
 * keys; with --only, each that gives one of the keys named.
 */
function inScope(declarations: readonly Declaration[], scope: Scope): Declaration[] {
  return declarations.filter((d) =>
    scope.kind === 'all' ? d.keys.some((k) => !scope.except.has(k)) : d.keys.some((k) => scope.keys.includes(k)),
  );
}

/** The server refused `keys` itself (400 VALIDATION naming it). */
const refusesKeys = (err: unknown) =>
  err instanceof ApiError &&
  err.status === 400 &&
  (err.body as { error?: { field?: unknown } })?.error?.field === 'keys';

/** What one start of the command needs: its argv, its environment and the scrubber of its output. */
interface Prepared {
  argv: string[];
  env: Record<string, string>;
  automaton: ScrubAutomaton;
  exposed: ReadonlyMap<string, string>;
  /** Whose values were scrubbed (--scrub secrets), kept for the start after a restart. */
  scrubbed: Scrubbed;
}

/**
 * Which exposed keys have their values scrubbed: every one (undefined: the specification's default, spec run
 * rule 6) or, with `--scrub secrets`, those this says yes to.
 */
type Scrubbed = ((key: string) => boolean) | undefined;
type Types = { scrubbed: (key: string) => boolean } | { unknown: string };

const unknownTypes = (why: string): Types => ({ unknown: why });

/** `--scrub`: `all` (the default) or `secrets`; anything else is refused and not repeated. */
export function parseScrub(raw: string | boolean | undefined): 'all' | 'secrets' {
  if (raw === undefined || raw === 'all') return 'all';
  if (raw === 'secrets') return 'secrets';
  throw usageError('--scrub takes all or secrets', 'svcenv run --scrub secrets --all -- <command>');
}

/**
 * --scrub secrets: the masked listing (a read token suffices) tells each key's type. Scrubbed are the secret
 * variables, the plain ones whose resolution used a secret (their `resolvedValue` is masked, D26: a
 * `postgres://app:${DB_PASSWORD}@db` holds the password), those that do not resolve or decrypt, and any key the
 * listing does not name (changed since): only a plain value known to hold no secret is shown.
 */
async function secretKeys(api: Api, t: { project: string; env: string }): Promise<Types> {
  try {
    const { operations: ops } = await import('../schemas.js');
    const { vars } = await api.json(ops.listVars, { params: { id: t.project, env: t.env } });
    const plain = new Set(
      vars
        .filter(
          (v) => v.type === 'plain' && !v.resolveError && !v.valueError && !(v.resolvedValue ?? '').includes('***'),
        )
        .map((v) => v.key),
    );
    return { scrubbed: (key) => !plain.has(key) };
  } catch (err) {
    return unknownTypes(err instanceof CliError ? `${err.code}: ${err.message}` : String(err));
  }
}

/** The types asked for, or every value scrubbed (with a warning) when they could not be read. */
async function scrubbedKeys(types: Promise<Types> | undefined, note: (line: string) => void): Promise<Scrubbed> {
  if (!types) return undefined;
  const got = await types;
  if ('scrubbed' in got) return got.scrubbed;
  note(`warning: --scrub secrets: the variables' types could not be read (${got.unknown}); every value is scrubbed`);
  return undefined;
}

function prepare(
  answer: Pick<PullAnswer, 'text' | 'context'>,
  scope: Scope,
  command: readonly string[],
  ctx: Pick<Context, 'env'>,
  token: string,
  scrubbed: Scrubbed,
  previous?: Prepared,
  /** D71: the leases' values; they win over a pulled variable of the same name (they are the fresh ones). */
  leased?: ReadonlyMap<string, string>,
): Prepared {
  const { vars: pulled, context } = readPulled(answer);
  const vars = leased?.size ? new Map([...pulled, ...leased]) : pulled;
  const exposed = selectScope(vars, scope);
  const argv = substitutePlaceholders(command, exposed);
  // Copied with native calls, not per-key loops: this runs once per start, before any JIT, over up to
  // thousands of variables (bench/cli.bench.ts).
  const env = Object.assign({}, ctx.env) as Record<string, string>;
  // The access token is ours, not the command's, unless the environment itself defines it.
  delete env.SVCENV_TOKEN;
  Object.assign(env, Object.fromEntries(exposed));
  // The values to scrub, listed only when the child first writes (a silent command never pays the pass).
  // The server's context values (project id, env and project name) are not secret; masking "production"
  // in every log line would only hide useful output (ADR 0001-cli). A user variable that overrides one
  // of them is the user's value, and scrubbed like any other. After a --watch restart the values just
  // replaced are scrubbed too: the new command may still print an old secret (from a file, a log).
  const automaton = new ScrubAutomaton(function* () {
    yield token;
    // A leased value is always scrubbed: whatever --scrub says, it is a password (D71).
    for (const [k, v] of exposed) if (leased?.has(k) || (!context.has(k) && (!scrubbed || scrubbed(k)))) yield v;
    if (previous) {
      const before = previous.scrubbed;
      for (const [k, v] of previous.exposed) if (!context.has(k) && (!before || before(k))) yield v;
    }
  });
  return { argv, env, automaton, exposed, scrubbed };
}

/** `--restart-signal`: `SIGHUP`, `HUP` or `hup`; SIGTERM by default. The value is never repeated. */
export function parseSignal(raw: string | boolean | undefined): NodeJS.Signals {
  if (raw === undefined) return 'SIGTERM';
  const name = String(raw).toUpperCase();
  const full = (name.startsWith('SIG') ? name : `SIG${name}`) as NodeJS.Signals;
  if (!(full in os().constants.signals)) {
    throw usageError('--restart-signal must name a signal', 'for example SIGTERM, SIGINT, SIGHUP, SIGQUIT or SIGUSR1');
  }
  return full;
}

/** How long a restart waits for the command to stop before SIGKILL (D43). */
const STOP_GRACE_MS = 10_000;

/**
 * D43 `run --watch`: the command runs until it exits on its own (svcenv then exits with its status) or
 * svcenv is told to stop (forwarded, as without --watch). Each change of an exposed variable stops it
 * (the restart signal, then SIGKILL after 10 s) and starts it again with the new values. A change the
 * command cannot take (an --only key deleted, a placeholder outside the scope) is reported and the command
 * keeps its old values. An error other than the server being away ends the watching, not the command.
 */
async function runWatching(
  first: Prepared,
  started: () => Promise<void> | undefined,
  o: {
    scope: Scope;
    command: readonly string[];
    ctx: Context;
    note: (line: string) => void;
    restartSignal: NodeJS.Signals;
    token: string;
    /** D71: the same leases for every start of the command (ADR 0030). */
    leased: ReadonlyMap<string, string>;
    /** --scrub secrets: the types again for each new start (a key may have become secret). */
    types: (() => Promise<Scrubbed>) | undefined;
    watch: Pick<Parameters<typeof watchChanges>[0], 'api' | 'pull' | 'cache' | 'etag'>;
  },
): Promise<number> {
  let current = {
    prepared: first,
    child: await startScrubbed(first.argv, first.env, first.automaton, o.ctx),
    replaced: false,
  };
  await started();
  let restarting: Promise<void> | undefined;
  const stop = new AbortController();
  const forward = (signal: NodeJS.Signals) => () => {
    stop.abort(); // told to stop: no more restarts
    current.child.kill(signal);
  };
  const handlers = FORWARDED_SIGNALS.map((s) => [s, forward(s)] as const);
  for (const [s, h] of handlers) process.on(s, h);

  const onChange = async (answer: PullAnswer) => {
    let next: Prepared;
    try {
      const scrubbed = o.types ? await o.types() : undefined;
      next = prepare(answer, o.scope, o.command, o.ctx, o.token, scrubbed, current.prepared, o.leased);
    } catch (err) {
      o.note(`svcenv: the variables changed, but the command keeps its old values: ${(err as Error).message}`);
      return;
    }
    const changed = changedKeys(current.prepared.exposed, next.exposed);
    if (changed.length === 0) return;
    if (stop.signal.aborted) return;
    o.note(`svcenv: ${describeChange(changed)} changed; restarting the command`);
    const old = current;
    old.replaced = true;
    let started!: () => void;
    restarting = new Promise<void>((r) => {
      started = r;
    });
    try {
      await stopChild(old.child, o.restartSignal);
      if (stop.signal.aborted) return;
      current = {
        prepared: next,
        child: await startScrubbed(next.argv, next.env, next.automaton, o.ctx),
        replaced: false,
      };
    } finally {
      started();
    }
  };

  const watching = watchChanges({
    ...o.watch,
    signal: stop.signal,
    note: o.note,
    whileAway: 'the command keeps running',
    onChange,
  }).catch((err: unknown) => {
    if (stop.signal.aborted) return;
    const e = err as CliError;
    o.note(`${e.code ?? 'error'}: ${e.message}; no longer watching (the command keeps running)`);
  });

  try {
    for (;;) {
      const gen = current;
      const status = await gen.child.status;
      if (gen.replaced && !stop.signal.aborted) {
        await restarting;
        if (current !== gen) continue;
      }
      stop.abort();
      await gen.child.output;
      await watching;
      return status;
    }
  } finally {
    for (const [s, h] of handlers) process.off(s, h);
  }
}

/** Sends the restart signal, waits up to 10 s, then SIGKILL (D43); resolves once the process is gone. */
async function stopChild(child: Started, signal: NodeJS.Signals): Promise<void> {
  child.kill(signal);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const killed = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, STOP_GRACE_MS);
  });
  await Promise.race([child.status, killed]);
  clearTimeout(timer);
  await child.status;
  // Its last output, unless a grandchild keeps the pipes open (`sh -c 'sleep 60'` killed leaves `sleep`).
  await Promise.race([child.output, new Promise((r) => setTimeout(r, 500))]);
}

/** Keys whose value differs, appeared or disappeared (names only: never a value). */
function changedKeys(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): string[] {
  const keys = new Set<string>();
  for (const [k, v] of a) if (b.get(k) !== v) keys.add(k);
  for (const k of b.keys()) if (!a.has(k)) keys.add(k);
  return [...keys].sort();
}

function describeChange(keys: string[]): string {
  return keys.length <= 5 ? keys.join(', ') : `${keys.slice(0, 5).join(', ')} and ${keys.length - 5} more`;
}

type Scope = { kind: 'only'; keys: string[] } | { kind: 'all'; except: Set<string> };

const KEY = /^[A-Za-z_][A-Za-z0-9_]{0,255}$/;

/**
 * The keys of --only or --except. Anything that is not a key name (D24) is refused before any request and
 * not repeated: it is most likely a value or a token pasted into the wrong place.
 */
function keyList(flag: '--only' | '--except', raw: string): string[] {
  const keys = splitList(raw);
  const bad = keys.filter((k) => !KEY.test(k) || looksLikeToken(k)).length;
  if (bad) {
    throw usageError(
      `${flag} holds ${bad === 1 ? 'an entry that is not a key name' : `${bad} entries that are not key names`} (a value or a token? not repeated)`,
      'key names are letters, digits and _, not starting with a digit: --only DB_URL,PORT',
    );
  }
  return keys;
}

export function parseScope(flags: Record<string, string | boolean | undefined>): Scope {
  const only = flags.only;
  const all = flags.all === true;
  const except = flags.except;
  if (only !== undefined && all) throw usageError('--only and --all are mutually exclusive');
  if (except !== undefined && !all) throw usageError('--except is valid only with --all');
  if (all) return { kind: 'all', except: new Set(typeof except === 'string' ? keyList('--except', except) : []) };
  if (typeof only === 'string') {
    const keys = keyList('--only', only);
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
  if (missing.length) {
    // A missing "key" that is one of the environment's values was a value typed in the wrong place: it is
    // counted, never repeated.
    const values = new Set(vars.values());
    const named = missing.filter((k) => !values.has(k));
    const hidden = missing.length - named.length;
    const list = [
      ...named,
      ...(hidden ? [`${hidden === 1 ? 'one entry' : `${hidden} entries`} equal to a value (not repeated)`] : []),
    ];
    throw new CliError('NOT_FOUND', `--only names keys that do not exist: ${list.join(', ')}`);
  }
  return new Map(scope.keys.map((k) => [k, vars.get(k)!]));
}

/** Spec run rules 4-5: every placeholder must name an exposed key, checked before anything starts. */
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
  // At exit, not at 'close': the output is awaited on its own, and a grandchild may hold the pipes open
  // long after the command is gone (run --watch restarts on the command's exit).
  const status = new Promise<number>((resolve) =>
    child.once('exit', (code, signal) => resolve(statusOf(code, signal))),
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

/** A started command: its exit status, its output copied through (resolves when the pipes close), kill. */
export interface Started {
  status: Promise<number>;
  output: Promise<void>;
  kill(signal: NodeJS.Signals): void;
}

/** Starts argv with stdout and stderr copied through the scrubber. */
export async function startScrubbed(
  argv: string[],
  env: Record<string, string>,
  automaton: ScrubAutomaton,
  ctx: Pick<Context, 'stdout' | 'stderr' | 'stdoutFd' | 'stderrFd'>,
): Promise<Started> {
  const child = bunRuntime ? startBun(bunRuntime, argv, env) : await startNode(argv, env);
  const output = Promise.all([
    pipeScrubbed(child.stdout, automaton.stream(), new Sink(() => ctx.stdout, ctx.stdoutFd)),
    pipeScrubbed(child.stderr, automaton.stream(), new Sink(() => ctx.stderr, ctx.stderrFd)),
  ]).then(() => undefined);
  return { status: child.status, output, kill: (signal) => child.kill(signal) };
}

/** Runs argv with stdout and stderr scrubbed; resolves with its exit status once all output is written. */
export async function execScrubbed(
  argv: string[],
  env: Record<string, string>,
  automaton: ScrubAutomaton,
  ctx: Pick<Context, 'stdout' | 'stderr' | 'stdoutFd' | 'stderrFd'>,
  started?: () => Promise<void> | undefined,
): Promise<number> {
  const child = await startScrubbed(argv, env, automaton, ctx);
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  const handlers = FORWARDED_SIGNALS.map((s) => [s, forward(s)] as const);
  for (const [s, h] of handlers) process.on(s, h);
  try {
    await started?.();
    const [status] = await Promise.all([child.status, child.output]);
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
