import { parseDotenv } from '@svcenv/contract/dotenv-parse';
import { Api } from '../api.js';
import { path } from '../builtins.js';
import { type Command, settingFlags, targetFlags } from '../command.js';
import { requireTarget, requireToken, resolveOfflineSettings, resolveSettings } from '../config.js';
import { CliError, looksLikeToken, usageError } from '../errors.js';
import { appendGithubEnv, gitIgnoreWarning, writeSecretFile } from '../files.js';
import { FORMAT_READERS, openCache, PULL_FORMATS, type PullFormat, pullCached, readPulled } from '../remote.js';
import { contextKeys } from '../snapshot.js';
import { noteTo, watchChanges } from '../watch.js';

export const offlineFlags = {
  offline: { type: 'boolean', description: 'no request: use the cached copy within --max-stale, or fail' },
  'max-stale': {
    type: 'string',
    description:
      'oldest cached copy to use when the server is away: 90s, 30m, 24h, 7d, or 0 for never (default: $SVCENV_MAX_STALE, then 24h)',
  },
} as const;

export const OFFLINE_DETAILS =
  'Every pull is kept encrypted under $SVCENV_CACHE_DIR (else $XDG_CACHE_HOME/svcenv, else ~/.cache/svcenv).\n' +
  'When the server cannot be reached (or gives no answer within $SVCENV_TIMEOUT seconds, default 10) or\n' +
  'answers 5xx or 429, the cached copy is used if the server confirmed it within --max-stale, with a warning.\n' +
  'A 401, 403 or 404 deletes the cached copy.';

export const pullCommand: Command = {
  name: 'pull',
  summary: "Fetch an environment's variables into a file (mode 0600) or stdout",
  usage: `svcenv pull [--project <id|slug>] [--env <name>] [--file <path>] [--stdout] [--format ${PULL_FORMATS.join('|')}] [--no-metadata] [--watch] [--offline] [--max-stale <duration>]`,
  flags: {
    ...targetFlags,
    file: { type: 'string', aliases: ['output'], description: 'file to write (default: $SVCENV_OUTPUT, then .env)' },
    stdout: { type: 'boolean', description: 'print to stdout instead of writing a file' },
    format: {
      type: 'string',
      description: `${PULL_FORMATS.join(', ')} (default dotenv; see below)`,
    },
    'no-metadata': { type: 'boolean', description: 'leave out SVCENV_PROJECT, SVCENV_ENV and SVCENV_PROJECT_NAME' },
    ...offlineFlags,
    watch: { type: 'boolean', description: 'rewrite the file on every change until interrupted' },
  },
  details:
    'With SVCENV_TOKEN, SVCENV_PROJECT and SVCENV_ENV set, no config file is needed. In GitHub Actions\n' +
    '(GITHUB_ACTIONS=true and GITHUB_ENV set) every variable is also appended to $GITHUB_ENV.\n' +
    `Formats:\n${Object.entries(FORMAT_READERS)
      .map(([f, reader]) => `  ${f.padEnd(8)}${reader}`)
      .join('\n')}\n${OFFLINE_DETAILS}`,
  async run(args, ctx) {
    const format = (args.flags.format as string | undefined) ?? 'dotenv';
    if (!isPullFormat(format)) {
      throw new CliError(
        'USAGE',
        `unknown --format ${looksLikeToken(format) ? '(an access token, not repeated)' : format}`,
        `use one of: ${PULL_FORMATS.join(', ')}`,
      );
    }
    const watch = args.flags.watch === true;
    if (watch && args.flags.stdout) throw usageError('--watch rewrites a file; it cannot be used with --stdout');
    if (watch && args.flags.offline) throw usageError('--watch needs the server; it cannot be used with --offline');
    const settings = resolveSettings(settingFlags(args), ctx.env, ctx.cwd);
    const offline = resolveOfflineSettings({ maxStale: args.flags['max-stale'], offline: args.flags.offline }, ctx.env);
    const target = requireTarget(settings);
    const token = requireToken(settings);
    const api = new Api(settings.apiUrl, token, offline.timeoutMs);
    const metadata = !args.flags['no-metadata'];
    const options = { ...target, metadata, format };
    // One cache for the environment: its keys are derived once, for this pull, the dotenv one below, the watch.
    const cache = openCache(api, options, offline, ctx.identity?.cacheKey ?? token);
    const answer = await pullCached(api, options, offline, cache);
    await answer.keep?.();
    const text = answer.text;
    // D42: the fallback is one warning on stderr; otherwise the pull behaves as a fresh one, exit code included.
    const warning = answer.fallback ? `warning: ${answer.fallback}\n` : '';
    const notes: string[] = [];

    const pulledDotenv = async () => {
      const dotenv = await pullCached(api, { ...options, format: 'dotenv' }, offline, cache);
      await dotenv.keep?.();
      return dotenv;
    };
    const githubEnv = ctx.env.GITHUB_ACTIONS === 'true' ? ctx.env.GITHUB_ENV : undefined;
    // The variables read from `text` itself (dotenv, json) when $GITHUB_ENV needed them: the summary counts them.
    let parsed: Map<string, string> | undefined;
    if (githubEnv) {
      parsed =
        format === 'dotenv'
          ? parseDotenv(text)
          : format === 'json'
            ? new Map(Object.entries(JSON.parse(text) as Record<string, string>))
            : undefined;
      const vars = parsed ?? readPulled(await pulledDotenv()).vars;
      appendGithubEnv(githubEnv, vars);
      notes.push(`appended ${vars.size} variables to $GITHUB_ENV`);
    }
    if (args.flags.stdout) return { stdout: text, stderr: warning + notes.map((n) => `${n}\n`).join('') };

    const file = (args.flags.file as string | undefined) || ctx.env.SVCENV_OUTPUT || '.env';
    const out = path().resolve(ctx.cwd, file);
    writeSecretFile(out, text);
    const unignored = gitIgnoreWarning(out, ctx.cwd) ?? '';
    const wrote = (body: string, context: string | undefined, count?: number) =>
      `wrote ${describe(format, body, context, count)} to ${file} (mode 0600)`;
    if (!watch) {
      notes.unshift(wrote(text, answer.context, parsed?.size));
      return { stdout: notes.map((n) => `${n}\n`).join(''), stderr: warning + unignored };
    }

    // D43: rewrite the file on each change until SIGINT or SIGTERM, then exit 0.
    const note = noteTo(ctx.stderr, ctx.stderrFd);
    const say = noteTo(ctx.stdout, ctx.stdoutFd);
    if (warning) note(warning.trimEnd());
    if (unignored) note(unignored.trimEnd());
    for (const n of notes) note(n);
    say(wrote(text, answer.context, parsed?.size));
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      await watchChanges({
        api,
        pull: options,
        cache: await cache,
        etag: answer.etag ?? '',
        signal: stop.signal,
        note,
        whileAway: `${file} stays as it is`,
        onChange: async (changed) => {
          writeSecretFile(out, changed.text);
          say(wrote(changed.text, changed.context));
        },
      });
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    return {};
  },
};

function isPullFormat(format: string): format is PullFormat {
  return (PULL_FORMATS as readonly string[]).includes(format);
}

/**
 * What was written, for the summary line; counted where the format can be read back without doubt.
 * `count` is the number of variables in `text` when it was already read (dotenv, json); the server's
 * context variables among them (`context`, its X-Svcenv-Context header) are counted apart.
 */
function describe(format: PullFormat, text: string, context: string | undefined, count?: number): string {
  const added = contextKeys(context).size;
  const counted = (n: number, as = '') =>
    `${n - added} variable${n - added === 1 ? '' : 's'}${as}${added ? ` (+${added} context variable${added === 1 ? '' : 's'})` : ''}`;
  switch (format) {
    case 'dotenv':
      return counted(count ?? parseDotenv(text).size);
    case 'json':
      return counted(count ?? Object.keys(JSON.parse(text) as object).length, ' as JSON');
    case 'docker':
      // One line per variable: the server refuses a value with a line break in this format (D55).
      return counted(text.split('\n').length - 1, ' as a docker env-file');
    case 'shell':
      return 'shell exports';
    case 'k8s':
      return 'Kubernetes Secret manifest';
  }
}
