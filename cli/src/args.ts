/**
 * A small strict flag parser: every command declares its flags, anything else is an error (a typo in
 * a flag of a secrets tool should never be silently ignored). Accepts `--flag value`, `--flag=value`,
 * boolean `--flag` and `--no-<flag>` for booleans declared with that spelling, and one-letter short
 * spellings (`-p dev`, `-p=dev`, D58). Everything after `--` is returned untouched as `rest` (spec run
 * rule 1). An unknown flag is answered with the closest known one when it looks like a typo (D58).
 */
import { closest, looksLikeToken, usageError } from './errors.js';

export interface FlagSpec {
  /** `string` takes a value; `boolean` does not. */
  type: 'string' | 'boolean';
  description: string;
  /** Other spellings, e.g. `--output` for `--file`. */
  aliases?: string[];
  /** A one-letter spelling, used as `-x` (see CONVENTIONAL_SHORT for the defaults). */
  short?: string;
}
export type FlagSpecs = Record<string, FlagSpec>;

/**
 * D58: `-p`, `-e` and `-f` mean `--project`, `--env` and `--file` in every command that has those flags,
 * so each command's table does not have to repeat them and they cannot drift apart.
 */
const CONVENTIONAL_SHORT: Readonly<Record<string, string>> = { project: 'p', env: 'e', file: 'f' };

export function shortOf(name: string, spec: FlagSpec): string | undefined {
  return spec.short ?? CONVENTIONAL_SHORT[name];
}

export interface ParseOptions {
  /**
   * `run`: without `--`, the first positional argument starts the command to run, and it and everything
   * after it are returned as positionals, so `run --all npm test --watch` is answered with "put `--` before
   * the command" instead of "unknown flag --watch".
   */
  commandAfterFlags?: boolean;
}

export interface Parsed {
  flags: Record<string, string | boolean | undefined>;
  /** Positional arguments before `--`. */
  positionals: string[];
  /** Arguments after `--`, or undefined when there was no `--`. */
  rest: string[] | undefined;
  /** The arguments as given (run's hint shows them again with `--` in place). */
  argv?: readonly string[];
}

export function parseArgs(
  argv: readonly string[],
  specs: FlagSpecs,
  command: string,
  options: ParseOptions = {},
): Parsed {
  const byName = new Map<string, string>();
  const byShort = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) {
    byName.set(name, name);
    for (const alias of spec.aliases ?? []) byName.set(alias, name);
    const short = shortOf(name, spec);
    if (short) byShort.set(short, name);
  }
  const stopAtPositional = options.commandAfterFlags === true && !argv.includes('--');
  const unknown = (arg: string, raw: string) => {
    if (looksLikeToken(raw)) return usageError('unknown flag (it looks like an access token, so it is not repeated)');
    const guess = closest(raw, [...byName.keys()]);
    return usageError(
      `unknown flag ${arg}`,
      guess ? `did you mean --${guess}? (see: svcenv ${command} --help)` : `see: svcenv ${command} --help`,
    );
  };
  const flags: Parsed['flags'] = {};
  const positionals: string[] = [];
  let rest: string[] | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      rest = argv.slice(i + 1);
      break;
    }
    let eq: number;
    let rawName: string;
    let name: string | undefined;
    if (arg.startsWith('--')) {
      eq = arg.indexOf('=');
      rawName = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      name = byName.get(rawName);
      if (!name) throw unknown(`--${rawName}`, rawName);
    } else if (arg.startsWith('-') && arg !== '-') {
      // `-p value` or `-p=value`; a short flag is one letter, so `-project` is a typo of `--project`.
      eq = arg.indexOf('=');
      const letters = eq < 0 ? arg.slice(1) : arg.slice(1, eq);
      name = letters.length === 1 ? byShort.get(letters) : undefined;
      if (!name) {
        if (letters.length > 1 && byName.has(letters)) {
          throw usageError(`unknown flag -${letters}`, `did you mean --${letters}? (see: svcenv ${command} --help)`);
        }
        throw unknown(`-${letters}`, letters);
      }
      rawName = name;
    } else {
      if (stopAtPositional) {
        positionals.push(...argv.slice(i));
        break;
      }
      positionals.push(arg);
      continue;
    }
    const spec = specs[name]!;
    if (name in flags) throw usageError(`--${rawName} given twice`);
    if (spec.type === 'boolean') {
      if (eq >= 0) throw usageError(`--${rawName} takes no value`);
      flags[name] = true;
      continue;
    }
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      const isFlag = (value?.startsWith('--') && value.length > 2) || /^-[A-Za-z]$/.test(value ?? '');
      if (value === undefined || value === '--' || isFlag) {
        throw usageError(`--${rawName} needs a value`, `see: svcenv ${command} --help`);
      }
      i++;
    }
    flags[name] = value;
  }
  return { flags, positionals, rest, argv };
}

export function renderFlagHelp(specs: FlagSpecs): string {
  const rows = Object.entries(specs).map(([name, spec]) => {
    const short = shortOf(name, spec);
    const names = [...(short ? [`-${short}`] : []), ...[name, ...(spec.aliases ?? [])].map((n) => `--${n}`)].join(', ');
    return [spec.type === 'string' ? `${names} <value>` : names, spec.description] as const;
  });
  const width = Math.max(0, ...rows.map(([left]) => left.length));
  return rows.map(([left, desc]) => `  ${left.padEnd(width)}  ${desc}`).join('\n');
}

/**
 * An argument list as a shell would need it typed (for hints that show a corrected command line): plain
 * words as they are, anything else in single quotes. A token-shaped word is shown as <ACCESS_TOKEN>.
 */
export function shellLine(args: readonly string[]): string {
  return args
    .map((a) => {
      if (looksLikeToken(a)) return '<ACCESS_TOKEN>';
      return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`;
    })
    .join(' ');
}

/** `a,b, c` → ['a','b','c']. */
export function splitList(s: string): string[] {
  return s
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
}
