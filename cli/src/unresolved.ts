/**
 * D67: `vars set` and `push` ask the server to validate what they write (`validate=true`): a value whose
 * `${...}` references do not resolve for this token is refused with nothing saved, and printed here key by
 * key with what is wrong; `--allow-unresolved` saves anyway (no validation, as before D67).
 */
import { ApiError } from './api.js';
import type { FlagSpecs } from './args.js';
import { CliError } from './errors.js';

export const allowUnresolvedFlag = {
  'allow-unresolved': {
    type: 'boolean',
    description: 'save even values whose ${...} references do not resolve (skips the check)',
  },
} as const satisfies FlagSpecs;

/** The query of a write: validated unless --allow-unresolved. */
export function validateQuery(flags: Record<string, unknown>): { query?: { validate: 'true' } } {
  return flags['allow-unresolved'] === true ? {} : { query: { validate: 'true' } };
}

interface Unresolved {
  key: string;
  env: string;
  code: string;
  message?: string;
}

/** An UNRESOLVED_REFERENCES refusal as one error listing each key, its code and what is wrong; else `err`. */
export function explainUnresolved(err: unknown): unknown {
  if (!(err instanceof ApiError) || err.code !== 'UNRESOLVED_REFERENCES') return err;
  const list = ((err.body as { unresolved?: Unresolved[] } | undefined)?.unresolved ?? []).filter(
    (u) => typeof u?.key === 'string' && typeof u.code === 'string',
  );
  if (list.length === 0) return err;
  const lines = list.map((u) => {
    const why = u.message?.startsWith(`${u.key}: `) ? u.message.slice(u.key.length + 2) : (u.message ?? '');
    return `  ${u.key} (${u.code}${list.some((o) => o.env !== u.env) ? `, ${u.env}` : ''}): ${why}`;
  });
  const what = list.length === 1 ? 'a value whose reference does not' : `${list.length} values whose references do not`;
  return new CliError(
    'UNRESOLVED_REFERENCES',
    `nothing was saved: ${what} resolve:\n${lines.join('\n')}`,
    'fix the reference, or pass --allow-unresolved to save anyway (a pull of a value that cannot resolve fails)',
  );
}
