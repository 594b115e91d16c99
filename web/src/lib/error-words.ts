/**
 * The one place where the API's error codes and field paths become words people read. The codes and paths
 * are for programs (the CLI prints them, scripts match on them); the dashboard says what happened instead
 * of "PLAN_LIMIT", "NOT_FOUND" or "items.0.key".
 */

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
