/**
 * Dispatch: argv → command → result. Kept apart from main.ts so that tests can call it in-process.
 */
import { type Parsed, parseArgs, renderFlagHelp } from './args.js';
import type { Command, CommandResult, Context } from './command.js';
import { diffCommand } from './commands/diff.js';
import { loginCommand } from './commands/login.js';
import { projectsCommand } from './commands/projects.js';
import { pullCommand } from './commands/pull.js';
import { pushCommand } from './commands/push.js';
import { runCommand } from './commands/run.js';
import { upgradeCommand } from './commands/upgrade.js';
import { versionCommand } from './commands/version.js';
import { usageError } from './errors.js';

export const COMMANDS: readonly Command[] = [
  loginCommand,
  pullCommand,
  runCommand,
  pushCommand,
  diffCommand,
  projectsCommand,
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
    'Settings come from flags, then SVCENV_TOKEN, SVCENV_PROJECT, SVCENV_ENV, SVCENV_OUTPUT, SVCENV_API_URL,',
    'then ~/.config/svcenv/config.json (written by `svcenv login`).',
    'Run `svcenv <command> --help` for the flags of a command.',
    '',
  ].join('\n');
}

export function commandHelp(c: Command): string {
  const flags = renderFlagHelp({ ...c.flags, help: { type: 'boolean', description: 'show this help' } });
  return `${c.summary}\n\nUsage: ${c.usage}\n\nFlags:\n${flags}\n${c.details ? `\n${c.details}\n` : ''}`;
}

/** `--help` counts only before `--`: after it, it belongs to the command that `run` starts. */
function wantsHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

export async function dispatch(argv: readonly string[], ctx: Context): Promise<CommandResult> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    const sub = name === 'help' ? COMMANDS.find((c) => c.name === rest[0]) : undefined;
    return { stdout: sub ? commandHelp(sub) : topHelp() };
  }
  if (name === '--version') return versionCommand.run({ flags: {}, positionals: [], rest: undefined }, ctx);
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw usageError(`unknown command "${name}"`, 'run `svcenv --help` for the list of commands');
  if (wantsHelp(rest)) return { stdout: commandHelp(command) };
  const parsed: Parsed = parseArgs(rest, command.flags, command.name);
  if (command.name !== 'run' && parsed.rest !== undefined)
    throw usageError(`${command.name} takes no \`--\` arguments`);
  if (command.name !== 'run' && parsed.positionals.length) {
    throw usageError(`unexpected argument "${parsed.positionals[0]}"`, `see: svcenv ${command.name} --help`);
  }
  return command.run(parsed, ctx);
}
