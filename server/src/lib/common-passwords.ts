/**
 * Passwords that appear on every list of leaked passwords ("password", "12345678", "iloveyou"...): the
 * ~49,000 of zxcvbn-ts's common dictionary (@zxcvbn-ts/language-common, from leaked-password corpora,
 * lower-case). A new password on it is refused at signup, reset and change, whatever its case, as the
 * first guesses of anyone who tries. Loaded on the first check (~100 ms, a few MB): most processes never
 * set a password.
 */
import { validation } from './errors.js';

let common: Promise<ReadonlySet<string>> | undefined;

function commonPasswords(): Promise<ReadonlySet<string>> {
  common ??= import('@zxcvbn-ts/language-common').then((m) => new Set(m.dictionary['passwords-common']));
  return common;
}

/** 400 VALIDATION naming `field` when `password` is a common one; the message never repeats it. */
export async function refuseCommonPassword(password: string, field: string): Promise<void> {
  if ((await commonPasswords()).has(password.toLowerCase())) {
    throw validation(
      field,
      'this password is on lists of commonly used passwords, which are tried first; choose another (a few unrelated words make a strong one)',
    );
  }
}
