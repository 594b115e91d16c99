import { Api } from '../api.js';
import { splitList } from '../args.js';
import { type Command, settingFlags, targetFlags } from '../command.js';
import { requireTarget, requireToken, resolveSettings } from '../config.js';
import { readDotenvFile } from '../localfile.js';
import { CONTEXT_KEYS, pullVars } from '../remote.js';

export const diffCommand: Command = {
  name: 'diff',
  summary: 'Compare a local dotenv file with the remote environment (keys only, never values)',
  usage: 'svcenv diff [--project <id|slug>] [--env <name>] [--file <path>] [--keys <k1,k2>]',
  flags: {
    ...targetFlags,
    file: { type: 'string', description: 'dotenv file to compare (default: .env)' },
    keys: { type: 'string', description: 'compare only these keys (comma-separated)' },
  },
  details:
    'Output: "~ KEY" both have it with different values, "+ KEY" remote only, "- KEY" local only\n' +
    '(on a terminal a legend under the list says so). `svcenv push` would create the "-" keys and\n' +
    'update the "~" ones.\n' +
    'Exit status: 0 no differences, 1 differences or an error.',
  async run(args, ctx) {
    const file = (args.flags.file as string | undefined) || '.env';
    const local = readDotenvFile(ctx.cwd, file);
    const settings = resolveSettings(settingFlags(args), ctx.env, ctx.cwd);
    const target = requireTarget(settings);
    const api = new Api(settings.apiUrl, requireToken(settings));
    const remote = await pullVars(api, { ...target, metadata: false });
    const only = typeof args.flags.keys === 'string' ? new Set(splitList(args.flags.keys)) : undefined;
    const keys = [...new Set([...local.keys(), ...remote.keys()])]
      .filter((k) => !CONTEXT_KEYS.has(k) && (!only || only.has(k)))
      .sort();
    const lines: string[] = [];
    for (const key of keys) {
      const l = local.get(key);
      const r = remote.get(key);
      if (l === undefined) lines.push(`+ ${key}`);
      else if (r === undefined) lines.push(`- ${key}`);
      else if (l !== r) lines.push(`~ ${key}`);
    }
    if (lines.length === 0) return { stderr: 'no differences\n', exitCode: 0 };
    // The symbols are the specification's, read from the server's side ("-": the server lacks it, not "a push
    // deletes it"): a person at a terminal gets a legend; a script reading the output never does (ADR 0028).
    const { stdoutIsTerminal } = await import('../prompt.js');
    const legend = (await stdoutIsTerminal()) ? `+ only on the server, - only in ${file}, ~ differ\n` : '';
    return { stdout: `${lines.join('\n')}\n${legend}`, exitCode: 1 };
  },
};
