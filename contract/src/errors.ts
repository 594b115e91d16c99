/**
 * The one error contract (spec "Errors"): a closed list of codes, each with one HTTP status.
 * Every non-2xx body is `{error:{code,message,field}}`, except the flat pull reference errors.
 */
export const ERROR_STATUS = {
  VALIDATION: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  /** D15: a plan limit; `field` names the limit. */
  PLAN_LIMIT: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  CIRCULAR_REFERENCE: 422,
  /** D25: a reference chain over 64 links or a resolved value over 1 MiB. */
  REFERENCE_LIMIT: 422,
  RATE_LIMIT: 429,
  SERVER: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  /** `field` names the offending field, or is `""` when no single field is at fault. */
  error: { code: ErrorCode; message: string; field: string };
}

/** Spec rule 4 of variables: the pull reference error is flat, `error` being a string. */
export interface FlatReferenceErrorBody {
  error: 'CIRCULAR_REFERENCE' | 'REFERENCE_LIMIT';
  message: string;
  key: string;
}
