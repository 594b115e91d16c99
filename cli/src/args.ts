/**
 * A small strict flag parser: every command declares its flags, anything else is an error (a typo in
 * a flag of a secrets tool should never be silently ignored). Accepts `--flag value`, `--flag=value`,
 * boolean `--flag` and `--no-<flag>` for booleans declared with that spelling. Everything after `--`
 * is returned untouched as `rest` (run rule 1).
 */
import { usageError } from './errors.js';

export interface FlagSpec {
  /** `string` takes a value; `boolean` does not. */
  type: 'string' | 'boolean';
  description: string;
  /** Other spellings, e.g. `--output` for `--file`. */
  aliases?: string[];
}
export type FlagSpecs = Record<string, FlagSpec>;

export interface Parsed {
  flags: Record<string, string | boolean | undefined>;
  /** Positional arguments before `--`. */
  positionals: string[];
  /** Arguments after `--`, or undefined when there was no `--`. */
  rest: string[] | undefined;
}

export function parseArgs(argv: readonly string[], specs: FlagSpecs, command: string): Parsed {
  const byName = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) {
    byName.set(name, name);
    for (const alias of spec.aliases ?? []) byName.set(alias, name);
  }
  const flags: Parsed['flags'] = {};
  const positionals: string[] = [];
  let rest: string[] | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      rest = argv.slice(i + 1);
      break;
    }
    if (!arg.startsWith('--') || arg === '--') {
      if (arg.startsWith('-') && arg !== '-') throw usageError(`unknown flag ${arg}`, `see: svcenv ${command} --help`);
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const rawName = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    const name = byName.get(rawName);
    if (!name) throw usageError(`unknown flag --${rawName}`, `see: svcenv ${command} --help`);
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
      if (value === undefined || value === '--' || (value.startsWith('--') && value.length > 2)) {
        throw usageError(`--${rawName} needs a value`, `see: svcenv ${command} --help`);
      }
      i++;
    }
    flags[name] = value;
  }
  return { flags, positionals, rest };
}

export function renderFlagHelp(specs: FlagSpecs): string {
  const rows = Object.entries(specs).map(([name, spec]) => {
    const names = [name, ...(spec.aliases ?? [])].map((n) => `--${n}`).join(', ');
    return [spec.type === 'string' ? `${names} <value>` : names, spec.description] as const;
  });
  const width = Math.max(0, ...rows.map(([left]) => left.length));
  return rows.map(([left, desc]) => `  ${left.padEnd(width)}  ${desc}`).join('\n');
}

/** `a,b, c` → ['a','b','c']. */
export function splitList(s: string): string[] {
  return s
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
}
