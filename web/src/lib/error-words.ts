/**
 * The one place where the API's error codes and field paths become words people read. The codes and paths
 * are for programs (the CLI prints them, scripts match on them); the dashboard says what happened instead
 * of "PLAN_LIMIT", "NOT_FOUND" or "items.0.key".
 */
import type { SsoError } from '@svcenv/contract';

/** A short heading for each error code (spec "Errors"); an unknown code gets a neutral one. */
const CODE_TITLES: Record<string, string> = {
  VALIDATION: 'Check the form',
  UNAUTHORIZED: 'Not accepted',
  FORBIDDEN: 'Not allowed',
  PLAN_LIMIT: 'Plan limit reached',
  APPROVAL_REQUIRED: 'Needs approval',
  NOT_FOUND: 'Not found',
  CONFLICT: 'Already exists or changed',
  PRECONDITION_FAILED: 'Changed meanwhile',
  PAYLOAD_TOO_LARGE: 'Too large',
  CIRCULAR_REFERENCE: 'References go in a circle',
  REFERENCE_LIMIT: 'Reference too long or too deep',
  REFERENCE_FORBIDDEN: 'Reference not readable',
  REFERENCE_MISSING: 'Reference to a missing key',
  UNRESOLVED_REFERENCES: 'References do not resolve',
  FORMAT_UNSUPPORTED: 'Not possible in this format',
  RATE_LIMIT: 'Too many attempts',
  SERVER: 'Server error',
  DECRYPT_FAILED: 'A value cannot be decrypted',
  NETWORK: 'Server unreachable',
  SSO_REQUIRED: 'Single sign-on required',
};

export function codeTitle(code: string): string {
  return CODE_TITLES[code] ?? 'Something went wrong';
}

/** Field names (the last part of a path) in words; plan limits (D15) are fields too. */
const FIELD_WORDS: Record<string, string> = {
  key: 'key',
  value: 'value',
  type: 'type',
  expiresAt: 'expiry',
  expiresIn: 'expiry',
  name: 'name',
  desc: 'description',
  color: 'colour',
  slug: 'slug',
  email: 'email',
  password: 'password',
  currentPassword: 'current password',
  newPassword: 'new password',
  code: 'code',
  url: 'URL',
  events: 'events',
  scope: 'scope',
  envs: 'environments',
  env: 'environment',
  projectId: 'project',
  role: 'role',
  permission: 'permission',
  revision: 'revision',
  message: 'message',
  reason: 'reason',
  envsPerProject: 'environments per project',
  projects: 'projects',
  members: 'members',
};

/**
 * `items.0.key` → "key of item 1", `set.2.value` → "value of change 3", `envsPerProject` → "environments per
 * project". Unknown names are split at their capitals ("fooBar" → "foo bar"), never shown raw.
 */
export function fieldWords(path: string): string {
  const parts = path.split('.').filter((p) => p !== '');
  const words: string[] = [];
  let last = '';
  for (const part of parts) {
    if (/^\d+$/.test(part)) {
      const n = Number(part) + 1;
      const owner = last === 'set' ? 'change' : last === 'delete' ? 'deletion' : last === 'items' ? 'item' : 'entry';
      words.pop();
      words.unshift(`${owner} ${n}`);
      last = part;
      continue;
    }
    words.push(FIELD_WORDS[part] ?? part.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase());
    last = part;
  }
  // The innermost name first: "key of item 1".
  return words.reverse().join(' of ');
}

/**
 * A server message with its field path in words: messages quote the path they are about ("items.0.key must
 * match ..."), so the path is replaced where it appears, and named after the message otherwise.
 */
export function messageInWords(message: string, field?: string): string {
  if (!field) return message;
  const words = fieldWords(field);
  if (message.includes(field)) return message.split(field).join(words);
  return `${message} (${words})`;
}

/**
 * D63: why a single sign-on came back to `/login?sso_error=<reason>`, in words, by the server's closed list of
 * reasons. The query is whatever the link says, so it is only ever a key into this table: an unknown reason
 * gets the general sentence, and the raw text is never shown.
 */
const SSO_ERROR_WORDS: Record<SsoError, string> = {
  invalid_state:
    'This sign-in link was already used or does not belong to this browser. Start single sign-on again from this page.',
  expired: 'The sign-in took too long (more than 10 minutes). Start single sign-on again.',
  idp_error:
    'Your identity provider did not sign you in (you may have cancelled, or it refused). Try again, or ask your IT team.',
  token_exchange_failed:
    'svcenv could not complete the sign-in with your identity provider. Ask a workspace Owner to test the single sign-on connection in Settings.',
  invalid_id_token:
    'The identity provider’s answer could not be verified. Ask a workspace Owner to test the single sign-on connection in Settings.',
  email_not_verified:
    'Your identity provider does not vouch for your email address (it is not marked as verified there). Ask your IT team.',
  domain_not_allowed:
    'Your email address is not in a domain this workspace signs in with single sign-on. Use the email address of your work account.',
  seat_limit:
    'The workspace has no free seat for a new member on its plan. Ask a workspace Owner to free a seat or change the plan.',
  not_configured:
    'Single sign-on is not set up for this workspace any more. Log in with your password, or ask a workspace Owner.',
  idp_unavailable:
    'Your identity provider could not be reached. Try again in a few minutes; if it keeps failing, ask a workspace Owner to test the single sign-on connection in Settings.',
  server_error: 'Something went wrong on the server while signing you in. Try again in a moment.',
};

export function ssoErrorWords(reason: string | null): string | null {
  if (reason === null) return null;
  return Object.hasOwn(SSO_ERROR_WORDS, reason)
    ? SSO_ERROR_WORDS[reason as SsoError]
    : 'Single sign-on did not complete. Try again, or ask a workspace Owner.';
}
