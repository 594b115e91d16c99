import { parseDotenv } from '@svcenv/contract/dotenv-parse';
import { Api } from '../api.js';
import { path } from '../builtins.js';
import { type Command, targetFlags } from '../command.js';
import { requireTarget, requireToken, resolveSettings } from '../config.js';
import { CliError } from '../errors.js';
import { appendGithubEnv, writeSecretFile } from '../files.js';
import { pullText, pullVars } from '../remote.js';

export const pullCommand: Command = {
  name: 'pull',
  summary: "Fetch an environment's variables into a file (mode 0600) or stdout",
  usage: 'svcenv pull [--project <id>] [--env <name>] [--file <path>] [--stdout] [--format dotenv|k8s] [--no-metadata]',
  flags: {
    ...targetFlags,
    file: { type: 'string', aliases: ['output'], description: 'file to write (default: $SVCENV_OUTPUT, then .env)' },
    stdout: { type: 'boolean', description: 'print to stdout instead of writing a file' },
    format: { type: 'string', description: 'dotenv (default) or k8s (a Kubernetes Secret manifest)' },
    'no-metadata': { type: 'boolean', description: 'leave out SVCENV_PROJECT, SVCENV_ENV and SVCENV_PROJECT_NAME' },
  },
  details:
    'With SVCENV_TOKEN, SVCENV_PROJECT and SVCENV_ENV set, no config file is needed. In GitHub Actions\n' +
    '(GITHUB_ACTIONS=true and GITHUB_ENV set) every variable is also appended to $GITHUB_ENV.',
  async run(args, ctx) {
    const format = (args.flags.format as string | undefined) ?? 'dotenv';
    if (format !== 'dotenv' && format !== 'k8s') {
      throw new CliError('USAGE', `unknown --format ${format}`, 'use --format dotenv or --format k8s');
    }
    const settings = resolveSettings({ project: args.flags.project, env: args.flags.env }, ctx.env);
    const target = requireTarget(settings);
    const api = new Api(settings.apiUrl, requireToken(settings));
    const metadata = !args.flags['no-metadata'];
    const text = await pullText(api, { ...target, metadata, format });

    const notes: string[] = [];
    const githubEnv = ctx.env.GITHUB_ACTIONS === 'true' ? ctx.env.GITHUB_ENV : undefined;
    if (githubEnv) {
      const vars = format === 'dotenv' ? parseDotenv(text) : await pullVars(api, { ...target, metadata });
      appendGithubEnv(githubEnv, vars);
      notes.push(`appended ${vars.size} variables to $GITHUB_ENV`);
    }
    if (args.flags.stdout) return { stdout: text, stderr: notes.map((n) => `${n}\n`).join('') };

    const file = (args.flags.file as string | undefined) || ctx.env.SVCENV_OUTPUT || '.env';
    writeSecretFile(path().resolve(ctx.cwd, file), text);
    const what = format === 'dotenv' ? `${parseDotenv(text).size} variables` : 'Kubernetes Secret manifest';
    notes.unshift(`wrote ${what} to ${file} (mode 0600)`);
    return { stdout: notes.map((n) => `${n}\n`).join('') };
  },
};
