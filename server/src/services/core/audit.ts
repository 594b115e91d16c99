import type { Insertable } from 'kysely';
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
 * narrow the list the cursor pages, so a page is full whenever enough matching entries exist. Each entry names
 * its actor as D34 does: the user's name, `token:<name>`, or `identity:<name>` (D60), and its project by
 * name and slug (joins, not a lookup per row).
 */
export async function auditPage(
  db: Db,
  scope: { workspaceId: string; projectId?: string },
  filters: AuditFilters,
  limit: number,
  cursor: string | undefined,
) {
  const before = decodeCursor(cursor);
  let q = db
    .selectFrom('audit_logs as a')
    .leftJoin('users as u', (j) => j.onRef('u.id', '=', 'a.actor_id').on('a.actor_type', '=', 'user'))
    .leftJoin('access_tokens as t', (j) => j.onRef('t.id', '=', 'a.actor_id').on('a.actor_type', '=', 'token'))
    // D60: a token issued to a workload identity acts as the identity (actor id: the identity's id).
    .leftJoin('workload_identities as wi', (j) => j.onRef('wi.id', '=', 'a.actor_id').on('a.actor_type', '=', 'token'))
    .leftJoin('projects as p', 'p.id', 'a.project_id')
    .selectAll('a')
    .select([
      'u.name as user_name',
      't.name as token_name',
      'wi.name as identity_name',
      'p.name as project_name',
      'p.slug as project_slug',
    ])
    .where('a.workspace_id', '=', scope.workspaceId);
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
    logs: page.map((r) => ({
      id: Number(r.id),
      action: r.action,
      targetKey: r.target_key,
      targetEnv: r.target_env,
      actorId: r.actor_id,
      actorType: r.actor_type,
      actorName:
        r.user_name ??
        (r.token_name !== null
          ? `token:${r.token_name}`
          : r.identity_name !== null
            ? `identity:${r.identity_name}`
            : null),
      detail: r.detail === null ? null : JSON.parse(r.detail),
      createdAt: r.created_at,
      project:
        r.project_id === null || r.project_name === null
          ? null
          : { id: r.project_id, name: r.project_name, slug: r.project_slug ?? r.project_id },
    })),
    nextCursor: rows.length > limit ? encodeCursor(Number(page[page.length - 1]!.id)) : '',
  };
}

/** Writes audit entries inside the caller's transaction, so a change and its record commit together. */
export async function recordAudit(trx: Db, rows: AuditRow | AuditRow[]): Promise<void> {
  const list = Array.isArray(rows) ? rows : [rows];
  if (list.length > 0) await trx.insertInto('audit_logs').values(list).execute();
}
