import { DotenvParseError, parseDotenv } from '@svcenv/contract/dotenv-parse';

/** D24 key rule, as the server checks it; a bad key is shown in the preview instead of a failed request. */
const KEY_RULE = /^[A-Za-z_][A-Za-z0-9_]{0,255}$/;

export interface EnvPreview {
  env: string;
  created: string[];
  updated: string[];
  /** Keys whose value is the same as the stored one (they are still sent, and count as updated). */
  unchanged: string[];
}

export type DotenvPreview =
  | { ok: true; items: { key: string; value: string }[]; envs: EnvPreview[] }
  | { ok: false; error: string; line?: number };

/**
 * What a pasted or uploaded .env would do to each chosen environment: which keys the bulk upsert creates
 * and which it updates. `existing` maps an environment to its current variables (values are only compared
 * when they are revealed; a masked `***` never counts as unchanged).
 */
export function previewDotenv(
  text: string,
  envs: string[],
  existing: ReadonlyMap<string, ReadonlyMap<string, string | null>>,
): DotenvPreview {
  let parsed: Map<string, string>;
  try {
    parsed = parseDotenv(text);
  } catch (e) {
    if (e instanceof DotenvParseError) return { ok: false, error: e.message, line: e.line };
    throw e;
  }
  if (parsed.size === 0) return { ok: false, error: 'No variables found. Paste lines of the form KEY=value.' };
  if (parsed.size > 5000) return { ok: false, error: `${parsed.size} variables: at most 5,000 can be saved at once.` };
  for (const key of parsed.keys()) {
    if (!KEY_RULE.test(key)) return { ok: false, error: `${key}: keys are at most 256 characters` };
  }
  const items = [...parsed].map(([key, value]) => ({ key, value }));
  return {
    ok: true,
    items,
    envs: envs.map((env) => {
      const current = existing.get(env) ?? new Map<string, string | null>();
      const out: EnvPreview = { env, created: [], updated: [], unchanged: [] };
      for (const { key, value } of items) {
        if (!current.has(key)) out.created.push(key);
        else if (current.get(key) === value) out.unchanged.push(key);
        else out.updated.push(key);
      }
      return out;
    }),
  };
}

/** Names that say "this is a credential": matched as words of the key (API_KEY, DB_PASSWORD, GITHUB_TOKEN). */
const SECRET_NAME = /(^|_)(SECRET|TOKEN|PASSWORD|PASSWD|PWD|KEY|PRIVATE|CREDENTIALS?|CERT|SALT|DSN)(_|S?$)/i;
/** A URL carrying a password (postgres://user:pass@host) is a credential whatever its key is called. */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s:]*:[^/@\s]+@/i;

/**
 * The type an imported key is offered with before the person chooses: secret when its name or value looks
 * like a credential, plain otherwise (LOG_LEVEL, PORT, PUBLIC_URL stay readable). Only a default: the import
 * preview lets each key be changed.
 */
export function guessType(key: string, value: string): 'secret' | 'plain' {
  return SECRET_NAME.test(key) || /SECRET|TOKEN|PASSWORD|PRIVATE/i.test(key) || URL_WITH_PASSWORD.test(value)
    ? 'secret'
    : 'plain';
}
