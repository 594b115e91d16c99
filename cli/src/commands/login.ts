import { Api } from '../api.js';
import type { Command } from '../command.js';
import {
  type ConfigFile,
  checkApiUrl,
  configPath,
  DEFAULT_API_URL,
  readConfigFile,
  writeConfigFile,
} from '../config.js';
import { CliError } from '../errors.js';

export const loginCommand: Command = {
  name: 'login',
  summary: 'Check an access token and write it to the config file',
  usage: 'svcenv login --token <ACCESS_TOKEN|-> [--api-url <url>]',
  flags: {
    token: {
      type: 'string',
      description:
        'access token (tok_live_...); "-" reads it from standard input (on a terminal: asked for, never echoed)',
    },
    'api-url': {
      type: 'string',
      description: `API base URL (default: $SVCENV_API_URL, the config file, ${DEFAULT_API_URL})`,
    },
  },
  details:
    'Writes apiUrl and token to ~/.config/svcenv/config.json (mode 0600). When the token sees exactly one\n' +
    'project, that project becomes the default. Prefer "--token -" so the token stays out of `ps` and shell history.',
  async run(args, ctx) {
    const path = configPath(ctx.env);
    // login is what rewrites a broken config file (every other command's hint says to run it), so an
    // unreadable one is replaced rather than an error; it is only a hint for the API URL here.
    let existing: ConfigFile = {};
    let replaced = '';
    try {
      existing = readConfigFile(path);
    } catch (err) {
      if (!(err instanceof CliError)) throw err;
      replaced = `note: ${err.message}; it is replaced\n`;
    }
    // `--token -` was read from standard input by dispatch (cli.ts), without echo on a terminal.
    const token = (args.flags.token as string | undefined) || ctx.env.SVCENV_TOKEN || undefined;
    if (!token)
      throw new CliError('USAGE', 'no token given', 'pass --token <ACCESS_TOKEN> or --token - to read it from stdin');
    if (token.startsWith('eyJ')) {
      throw new CliError(
        'USAGE',
        'that is a dashboard session (JWT), not an access token',
        'create an access token in the dashboard (Tokens)',
      );
    }
    const apiUrl = checkApiUrl(
      (args.flags['api-url'] as string | undefined) || ctx.env.SVCENV_API_URL || existing.apiUrl || DEFAULT_API_URL,
    );
    // Proves the URL and the token before anything is written.
    const { operations: ops } = await import('../schemas.js');
    const { projects } = await new Api(apiUrl, token).json(ops.listProjects);
    const config: ConfigFile = { ...existing, apiUrl, token };
    let note = '';
    if (projects.length === 1 && projects[0]) {
      config.project = projects[0].id;
      note = `default project: ${projects[0].name} (${projects[0].id})\n`;
    }
    writeConfigFile(path, config);
    return {
      stdout: `logged in to ${apiUrl}; wrote ${path} (mode 0600)\n${note}`,
      ...(replaced ? { stderr: replaced } : {}),
    };
  },
};
