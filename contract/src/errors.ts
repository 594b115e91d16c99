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
  /** D47: a direct write to an environment that requires approval; open a change request instead. */
  APPROVAL_REQUIRED: 403,
  /** D69: the instance's signup mode refuses this signup (`closed`, or `invite` without a pending invite). */
  SIGNUP_CLOSED: 403,
  /**
   * D63: password login of an account in a domain whose workspace enforces single sign-on (its Owners
   * excepted); sign in through `/v1/auth/sso/start` instead.
   */
  SSO_REQUIRED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  /** D46: `If-Match: "rev:<n>"` on a write, and the environment is no longer at revision n; field `revision`. */
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  CIRCULAR_REFERENCE: 422,
  /** D25: a reference chain over 64 links or a resolved value over 1 MiB. */
  REFERENCE_LIMIT: 422,
  /** D49: a reference names an environment the reader may not read, or one that does not exist (not told apart). */
  REFERENCE_FORBIDDEN: 422,
  /**
   * D67: a write with `?validate=true` whose values hold references that do not resolve for the writer; nothing
   * is written. `field` names the first such key; the body also lists them all (`unresolved`).
   */
  UNRESOLVED_REFERENCES: 422,
  /** D55: a value the requested format cannot carry (a line break in `docker`); `field` names the key. */
  FORMAT_UNSUPPORTED: 422,
  RATE_LIMIT: 429,
  SERVER: 500,
  /**
   * D71, D72: a managed database (D70) refused or failed a statement, or did not answer in time. The message is
   * the database's own (credentials and statements removed); nothing is left half-done.
   */
  UPSTREAM_FAILED: 502,
  /**
   * A stored value that does not decrypt with its project key (tampered with, or copied from another row):
   * pull and export fail naming the key in `field`; listings mark that variable instead (`valueError`).
   */
  DECRYPT_FAILED: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  /** `field` names the offending field, or is `""` when no single field is at fault. */
  error: { code: ErrorCode; message: string; field: string };
}

/** D67: why a written value's reference does not resolve (REFERENCE_MISSING only on validation). */
export const UNRESOLVED_CODES = [
  'REFERENCE_FORBIDDEN',
  'REFERENCE_MISSING',
  'CIRCULAR_REFERENCE',
  'REFERENCE_LIMIT',
  'DECRYPT_FAILED',
] as const;
export type UnresolvedCode = (typeof UNRESOLVED_CODES)[number];

/** D67: the 422 of a validated write; `message` of each item says what is wrong in plain words. */
export interface UnresolvedReferencesBody {
  error: { code: 'UNRESOLVED_REFERENCES'; message: string; field: string };
  unresolved: { key: string; env: string; code: UnresolvedCode; message: string }[];
}

/** Spec variables rule 4: the pull reference error is flat, `error` being a string. */
export interface FlatReferenceErrorBody {
  error: 'CIRCULAR_REFERENCE' | 'REFERENCE_LIMIT' | 'REFERENCE_FORBIDDEN';
  message: string;
  key: string;
}
