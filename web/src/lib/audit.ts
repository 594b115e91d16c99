/**
 * The audit log in words and in files (ADR 0015): D36's action names as people read them, the local days of
 * the date filter as the instants the server compares, and the CSV and JSON an export saves.
 */
import type { AuditEntry } from '@svcenv/contract';

/** D36's actions, and the ones added since (change requests, rollback, passwords, backup codes, deliveries). */
export const ACTION_WORDS: Record<string, string> = {
  'audit.prune': 'Old audit entries deleted',
  'auth.login': 'Signed in',
  'auth.login_failed': 'Failed sign-in',
  'auth.mfa_failed': 'Failed two-factor code',
  'auth.password_reset': 'Reset password',
  'auth.password_change': 'Changed password',
  'var.create': 'Created variable',
  'var.update': 'Updated variable',
  'var.delete': 'Deleted variable',
  'var.restore': 'Restored variable',
  'var.reveal': 'Revealed values',
  'vars.bulk_upsert': 'Saved variables',
  'vars.bulk_delete': 'Deleted variables',
  'vars.pull': 'Pulled variables',
  'vars.export': 'Exported variables',
  'project.create': 'Created project',
  'project.update': 'Updated project',
  'project.delete': 'Deleted project',
  'env.create': 'Created environment',
  'env.update': 'Updated environment',
  'env.delete': 'Deleted environment',
  'env.rollback': 'Rolled back environment',
  'token.create': 'Created token',
  'token.rotate': 'Rotated token',
  'token.revoke': 'Revoked token',
  'token.denied_address': 'Token refused from this address',
  'identity.create': 'Created identity',
  'identity.update': 'Updated identity',
  'identity.delete': 'Deleted identity',
  'identity.login': 'Identity signed in',
  'identity.login_failed': 'Identity sign-in refused',
  'member.invite': 'Invited member',
  'member.add': 'Added member',
  'member.remove': 'Removed member',
  'member.role_change': 'Changed workspace role',
  'project_member.set': 'Set project role',
  'project_member.remove': 'Removed from project',
  'env_permission.set': 'Set environment permission',
  'webhook.create': 'Created webhook',
  'webhook.update': 'Updated webhook',
  'webhook.delete': 'Deleted webhook',
  'webhook.deliver': 'Delivered webhook',
  'workspace.update': 'Updated workspace',
  'workspace.plan_change': 'Changed plan',
  'admin.reset_link': 'Made a password reset link',
  'instance.settings_update': 'Changed sign-up mode',
  'mfa.enable': 'Turned on two-factor',
  'mfa.disable': 'Turned off two-factor',
  'mfa.backup_codes_regenerate': 'New backup codes',
  'change_request.open': 'Opened change request',
  'change_request.approve': 'Approved change request',
  'change_request.apply': 'Applied change request',
  'change_request.reject': 'Rejected change request',
  'change_request.withdraw': 'Withdrew change request',
};

/** An action in words; a name this dashboard does not know (a newer server's) is shown as it is. */
export const actionLabel = (action: string): string => ACTION_WORDS[action] ?? action;

/** Who did it: the server's name (`token:<name>` for tokens), else a shortened id, else a dash. */
export function actorLabel(e: Pick<AuditEntry, 'actorId' | 'actorName'>): string {
  if (e.actorName) return e.actorName;
  return e.actorId ? `${e.actorId.slice(0, 8)}…` : '—';
}

/**
 * Who an actor's display name is: `identity:<name>` (D60: a CI job or pod signed in as a workload identity),
 * `token:<name>` (an access token, D34) or a person. Where the actor's type is known (the audit log), only a
 * token's name is read so, lest a person named `token:x` pass for one.
 */
export function actorKind(name: string): { kind: 'identity' | 'token' | 'user'; name: string } {
  const m = /^(identity|token):(.+)$/.exec(name);
  return m ? { kind: m[1] as 'identity' | 'token', name: m[2]! } : { kind: 'user', name };
}

/**
 * A local day (`YYYY-MM-DD` from a date input) as the instant the server compares: its first millisecond for
 * `from`, its last for `to`, in the browser's time zone, so "today" is the user's today. Empty stays empty.
 */
export function dayBound(day: string, end: 'from' | 'to'): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]) - 1, Number(m[3])];
  const at = end === 'from' ? new Date(y, mo, d, 0, 0, 0, 0) : new Date(y, mo, d, 23, 59, 59, 999);
  return at.toISOString();
}

/** A CSV cell (RFC 4180 quoting); a cell a spreadsheet would run as a formula is prefixed with `'`. */
export function csvCell(value: unknown): string {
  let s = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

export const CSV_COLUMNS = [
  'time',
  'action',
  'action_words',
  'actor_type',
  'actor_id',
  'actor_name',
  'project_id',
  'project',
  'project_slug',
  'environment',
  'key',
  'detail',
] as const;

/** The entries as CSV: a header row, then one row per entry, CRLF line ends (RFC 4180). */
export function auditCsv(entries: AuditEntry[]): string {
  const rows = entries.map((e) =>
    [
      e.createdAt,
      e.action,
      actionLabel(e.action),
      e.actorType,
      e.actorId,
      e.actorName,
      e.project?.id,
      e.project?.name,
      e.project?.slug,
      e.targetEnv,
      e.targetKey,
      e.detail === null ? '' : JSON.stringify(e.detail),
    ]
      .map(csvCell)
      .join(','),
  );
  return `${[CSV_COLUMNS.join(','), ...rows].join('\r\n')}\r\n`;
}

/** The entries as JSON: the API's entry objects, unchanged, in an array. */
export const auditJson = (entries: AuditEntry[]): string => `${JSON.stringify(entries, null, 2)}\n`;

/** One `key: value` of an entry's detail as shown; `changeRequest`: the id of the change request it names. */
export interface DetailPart {
  label: string;
  text: string;
  changeRequest?: string;
}

/** How a detail's fields that hold a person's id read (the server names them in `detailNames`). */
const PERSON_LABELS: Record<string, string> = { userId: 'user', author: 'author' };
const shortId = (id: string) => `${id.slice(0, 8)}…`;

/**
 * An entry's detail (never values, D36) as `label: text` parts: people by name where the server named them
 * (`detailNames`), else by a shortened id; a change request's id as a short reference to link; arrays joined;
 * empty lists left out (a bare "updated:" reads like a cut-off line). About 120 characters in all, then "…".
 */
export function detailParts(e: Pick<AuditEntry, 'detail' | 'detailNames'>): DetailPart[] {
  const { detail } = e;
  if (detail === null || detail === undefined) return [];
  if (typeof detail !== 'object') return [{ label: '', text: String(detail) }];
  const parts: DetailPart[] = [];
  let budget = 120;
  for (const [k, v] of Object.entries(detail as Record<string, unknown>)) {
    if (Array.isArray(v) && v.length === 0) continue;
    let part: DetailPart;
    if (PERSON_LABELS[k] && typeof v === 'string') {
      part = { label: PERSON_LABELS[k], text: e.detailNames?.[v] ?? shortId(v) };
    } else if (k === 'changeRequest' && typeof v === 'string') {
      part = { label: 'change request', text: shortId(v), changeRequest: v };
    } else {
      const text = Array.isArray(v)
        ? v.join(', ')
        : typeof v === 'object' && v !== null
          ? JSON.stringify(v)
          : String(v);
      part = { label: k, text };
    }
    const size = part.label.length + 2 + part.text.length;
    if (size > budget) {
      if (budget > part.label.length + 6 && !part.changeRequest) {
        parts.push({ ...part, text: `${part.text.slice(0, budget - part.label.length - 3)}…` });
      } else parts.push({ label: '', text: '…' });
      break;
    }
    budget -= size + 3;
    parts.push(part);
  }
  return parts;
}
