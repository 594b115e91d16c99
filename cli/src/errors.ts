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
