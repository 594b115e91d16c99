import type { Insertable } from 'kysely';
import { presentAuditEntry, selectAuditEntries } from '../../db/audit-entries.js';
import type { Db } from '../../db/index.js';
import type { AuditLogsTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { decodeCursor, encodeCursor } from '../../lib/cursor.js';
import type { Principal } from './principal.js';

export type AuditRow = Insertable<AuditLogsTable>;

export interface AuditEvent {
  action: string;
  projectId?: string | null;
  targetKey?: string | null;
  targetEnv?: string | null;
  /** Never a variable value (D36). */
  detail?: Record<string, unknown> | null;
}

export function auditRow(clock: Clock, principal: Principal, event: AuditEvent): AuditRow {
  return {
    workspace_id: principal.workspaceId,
    project_id: event.projectId ?? null,
    action: event.action,
    target_key: event.targetKey ?? null,
    target_env: event.targetEnv ?? null,
    actor_id: principal.actorId,
    actor_type: principal.kind,
    detail: event.detail ? JSON.stringify(event.detail) : null,
    created_at: clock.now().toISOString(),
  };
}

/** The audit filters of both endpoints (D36, ADR 0015); `from` and `to` are already UTC instants (contract). */
export interface AuditFilters {
  action?: string | undefined;
  actor?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/**
 * Audit page, newest first; `nextCursor` is "" on the last page (the spec types it as a string). The filters
 * narrow the list the cursor pages, so a page is full whenever enough matching entries exist. Entries are shown
 * by db/audit-entries.ts (actor and project names joined), as the audit streams send them (D65).
 */
export async function auditPage(
  db: Db,
  scope: { workspaceId: string; projectId?: string },
  filters: AuditFilters,
  limit: number,
  cursor: string | undefined,
) {
  const before = decodeCursor(cursor);
  let q = selectAuditEntries(db).where('a.workspace_id', '=', scope.workspaceId);
  if (scope.projectId) q = q.where('a.project_id', '=', scope.projectId);
  if (filters.action !== undefined) q = q.where('a.action', '=', filters.action);
  if (filters.actor !== undefined) q = q.where('a.actor_id', '=', filters.actor);
  // created_at is always Date#toISOString (auditRow above): as text it sorts as time does.
  if (filters.from !== undefined) q = q.where('a.created_at', '>=', filters.from);
  if (filters.to !== undefined) q = q.where('a.created_at', '<=', filters.to);
  if (before !== null) q = q.where('a.id', '<', before);
  const rows = await q
    .orderBy('a.id', 'desc')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  return {
    logs: page.map(presentAuditEntry),
    nextCursor: rows.length > limit ? encodeCursor(Number(page[page.length - 1]!.id)) : '',
  };
}

/** Writes audit entries inside the caller's transaction, so a change and its record commit together. */
export async function recordAudit(trx: Db, rows: AuditRow | AuditRow[]): Promise<void> {
  const list = Array.isArray(rows) ? rows : [rows];
  if (list.length > 0) await trx.insertInto('audit_logs').values(list).execute();
}
