import { randomInt } from 'node:crypto';
import type { Statement, StatementVars } from './engine.js';

/**
 * The credentials svcenv makes for D71's leases and D70/D72's new passwords. Every value comes from a small
 * alphabet ([a-z0-9_] for usernames, letters and digits for passwords), so that filling it into statement
 * text cannot change what a statement means: nothing a client sends ever reaches a statement.
 */

const LOWER_DIGITS = 'abcdefghijklmnopqrstuvwxyz0123456789';
const LETTERS_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random characters of the username: 12 (62 bits), never fewer than 8 (41 bits) when the limit is short. */
const USERNAME_RANDOM = 12;
const USERNAME_RANDOM_MIN = 8;

const randomString = (alphabet: string, length: number): string => {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
};

/** An environment or secret name as username text: lower case, every other character `_`. */
const usernamePart = (text: string): string => text.toLowerCase().replace(/[^a-z0-9_]/g, '_');

/**
 * D71: `v_<env>_<name>_<random>` from [a-z0-9_], at most `maxLength` characters. A long environment or
 * name is cut, the random tail never below 8 characters, so two leases never share a username.
 */
export function makeUsername(env: string, name: string, maxLength: number): string {
  if (maxLength < USERNAME_RANDOM_MIN + 2) throw new Error(`a username limit of ${maxLength} is too short`);
  const prefix = `v_${usernamePart(env)}_${usernamePart(name)}_`;
  const randomLength = Math.max(USERNAME_RANDOM_MIN, Math.min(USERNAME_RANDOM, maxLength - prefix.length));
  return prefix.slice(0, maxLength - randomLength) + randomString(LOWER_DIGITS, randomLength);
}

/** D71 (and D70 rotate-root, D72 rotation): 32 random letters and digits, ~190 bits. */
export function makePassword(): string {
  return randomString(LETTERS_DIGITS, 32);
}

const PLACEHOLDER = /\{\{(username|password|expiration)\}\}/g;

/**
 * D71's placeholders filled: `{{username}}`, `{{password}}`, `{{expiration}}` in SQL text, or in each
 * argument of a Redis command (one argument stays one argument, whatever its value).
 */
export function fillPlaceholders(statement: Statement, vars: StatementVars): Statement {
  const fill = (text: string) => text.replace(PLACEHOLDER, (_, name: keyof StatementVars) => vars[name]);
  return typeof statement === 'string' ? fill(statement) : statement.map(fill);
}

/**
 * The shape of a password an engine sets (D70 rotate-root, D72): printable ASCII without quotes,
 * backslashes or spaces, 8 to 128 characters. `makePassword` always passes; the rule keeps a password
 * from changing the meaning of the statement that sets it, whatever the database's quoting rules
 * (MySQL's NO_BACKSLASH_ESCAPES, PostgreSQL's standard_conforming_strings).
 */
export function passwordProblem(password: string): string | null {
  if (password.length < 8 || password.length > 128) return 'the new password must be 8 to 128 characters';
  if (!/^[\x21-\x7e]+$/.test(password) || /['"\\`]/.test(password)) {
    return 'the new password must be printable ASCII without quotes, backslashes or spaces';
  }
  return null;
}
