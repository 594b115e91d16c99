import { closestName } from '@svcenv/contract/spelling';

/**
 * The CLI's one error type. `code` is the API's error code when the error came from the API (D37a:
 * printed as `CODE: message`), or a local code such as USAGE or CONFIG. `hint` says what to do next.
 * Messages never carry a secret value or a token.
 */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export const usageError = (message: string, hint?: string) => new CliError('USAGE', message, hint);

/**
 * An argument as it may appear in a message: quoted, unless it looks like an access token (pasted into
 * the wrong place), which is never repeated on the screen or into a CI log.
 */
export function shown(arg: string): string {
  return looksLikeToken(arg) ? '(an access token, not repeated)' : `"${arg}"`;
}

export const looksLikeToken = (s: string): boolean => s.includes('tok_') || s.startsWith('eyJ');

/**
 * D58's "did you mean": the closest candidate when it is close enough to be a typo (one edit for short
 * words, two for longer ones), else the one candidate the word begins (`pu` → `pull` but not `p` →
 * `pull|push`). Never a guess for a token-shaped word.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  if (word === '' || looksLikeToken(word)) return undefined;
  return closestName(word, candidates);
}
