import {
  ERROR_STATUS,
  type ErrorCode,
  type FlatReferenceErrorBody,
  type UnresolvedReferencesBody,
} from '@svcenv/contract';

/** The single error type of the server; the error handler maps `code` to its status (contract/errors.ts). */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly status: number;
  /** Extra headers, e.g. Retry-After on RATE_LIMIT. */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, field?: string, headers: Record<string, string> = {}) {
    super(message);
    this.code = code;
    this.field = field;
    this.status = ERROR_STATUS[code];
    this.headers = headers;
  }
}

/** D67: a validated write refused; the error body also lists every unresolved key (`unresolved`). */
export class UnresolvedReferencesError extends AppError {
  constructor(readonly unresolved: UnresolvedReferencesBody['unresolved']) {
    const [first] = unresolved;
    const message =
      unresolved.length === 1
        ? first!.message
        : `${unresolved.length} values have references that do not resolve: ${unresolved
            .slice(0, 3)
            .map((u) => u.message)
            .join('; ')}${unresolved.length > 3 ? '; ...' : ''}`;
    super('UNRESOLVED_REFERENCES', message, first?.key ?? '');
  }
}

/** Thrown by reference resolution on pull; rendered as the spec's flat 422 body. */
export class ReferenceError422 extends Error {
  constructor(
    readonly code: FlatReferenceErrorBody['error'],
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}

export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found`);
export const forbidden = (message = 'insufficient permission') => new AppError('FORBIDDEN', message);
export const unauthorized = (message = 'missing, invalid or expired credential') =>
  new AppError('UNAUTHORIZED', message);
export const validation = (field: string, message: string) => new AppError('VALIDATION', message, field);

export function rateLimited(retryAfterMs: number, message = 'too many requests; try again later'): AppError {
  // Retry-After is in whole seconds, rounded up so a client that obeys it is never refused again.
  return new AppError('RATE_LIMIT', message, undefined, {
    'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))),
  });
}

/** Whether a database error is a unique violation, on either dialect (a second row with a unique name). */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown } | null;
  return (
    err?.code === '23505' ||
    err?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    (typeof err?.message === 'string' && err.message.includes('UNIQUE constraint failed'))
  );
}
