import { randomBytes, randomUUID } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const newId = (): string => randomUUID();

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

function base62Fixed(n: number, width: number): string {
  let out = '';
  let v = n >>> 0;
  for (let i = 0; i < width; i++) {
    out = BASE62[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out;
}

/**
 * D33 token format: `tok_live_` + 32 random base62 characters + a 6-character base62 CRC32 of the random
 * part, so secret scanners can recognise a leaked token offline and the server can refuse a mistyped one
 * without a database or bcrypt round.
 */
export const TOKEN_PREFIX = 'tok_live_';
const RANDOM_LEN = 32;
const CHECK_LEN = 6;
export const TOKEN_LENGTH = TOKEN_PREFIX.length + RANDOM_LEN + CHECK_LEN;
/** D33: `tokenPrefix` is the first 16 characters. */
export const TOKEN_DISPLAY_PREFIX_LEN = 16;

export function newAccessToken(): string {
  const random = randomBase62(RANDOM_LEN);
  return TOKEN_PREFIX + random + base62Fixed(crc32(random), CHECK_LEN);
}

export function tokenChecksumValid(token: string): boolean {
  if (token.length !== TOKEN_LENGTH || !token.startsWith(TOKEN_PREFIX)) return false;
  const random = token.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + RANDOM_LEN);
  if (!/^[0-9A-Za-z]+$/.test(random)) return false;
  return token.slice(-CHECK_LEN) === base62Fixed(crc32(random), CHECK_LEN);
}

/** URL-safe slug of a name, used for workspace slugs. */
export function slugify(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 48) || 'workspace'
  );
}
