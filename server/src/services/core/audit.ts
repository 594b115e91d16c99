import { CompiledQuery, type InferResult, type Insertable, sql } from 'kysely';
import { presentAuditEntries, selectAuditEntries } from '../../db/audit-entries.js';
import { auditIdIs, auditTimeKey, auditTimeValue } from '../../db/audit-keys.js';
import type { Db, Dialect } from '../../db/index.js';
import type { AuditLogsTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { decodeAuditCursor, encodeAuditCursor } from '../../lib/cursor.js';
import { AppError } from '../../lib/errors.js';
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
    // Work svcenv did by itself has no actor (Principal.system), as the retention job's entries.
    actor_id: principal.system ? null : principal.actorId,
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
 * narrow the list the cursor pages, so a page is full whenever enough matching entries exist. Entries are read
 * and shown by db/audit-entries.ts (actor and project names joined, not looked up per row), as the audit
 * streams send them (D65).
 *
 * D64: newest first is `(created_at, id)` descending, and every combination of filters has an index that is
 * that order within its equality filters (migration 2026-11-27T00-audit-search), so a page is read off the
 * end of one index slice, never by walking the scope's entries. The project endpoint's scope is the project
 * alone (authorizeProject has placed it in the caller's workspace): with the workspace in the query too, a
 * planner could pick a workspace index and filter it.
 */
export async function auditPage(
  deps: { db: Db; dialect: Dialect; flushAuditInbox: () => Promise<void> },
  scope: { workspaceId: string; projectId?: string },
  filters: AuditFilters,
  limit: number,
  cursor: string | undefined,
) {
  // Every entry committed before this request, the pulls' in the audit inbox included (ADR 0007).
  await deps.flushAuditInbox();
  const before = await auditCursor(deps.db, cursor);
  const rows = await auditPageQuery(deps, scope, filters, limit + 1, before).execute();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    logs: await presentAuditEntries(deps.db, page),
    nextCursor: rows.length > limit && last ? encodeAuditCursor(last.created_at, Number(last.id)) : '',
  };
}

/**
 * The query of one page (`limit` rows), also what the index tests and bench/audit.bench.ts EXPLAIN.
 */
export function auditPageQuery(
  { db, dialect }: { db: Db; dialect: Dialect },
  scope: { workspaceId: string; projectId?: string | undefined },
  filters: AuditFilters,
  limit: number,
  before: { createdAt: string; id: number } | null,
) {
  const index = auditIndex(scope, filters);
  // Each index keys ids and times by the expressions of db/audit-keys.ts; `audit_logs_project_at` keeps
  // `project_id` plain (it serves the foreign key's cascade too).
  const id = (column: string, value: string) => auditIdIs(dialect, column, value);
  const time = auditTimeKey(dialect, 'a.created_at');
  let q = selectAuditEntries(db);
  if (!scope.projectId) q = q.where(id('a.workspace_id', scope.workspaceId));
  else if (index === 'audit_logs_project_at') q = q.where('a.project_id', '=', scope.projectId);
  else q = q.where(id('a.project_id', scope.projectId));
  if (filters.action !== undefined) q = q.where('a.action', '=', filters.action);
  if (filters.actor !== undefined) q = q.where(id('a.actor_id', filters.actor));
  // created_at is always Date#toISOString (auditRow above); the bounds are instants (contract).
  if (filters.from !== undefined) q = q.where(time, '>=', auditTimeValue(dialect, filters.from));
  if (filters.to !== undefined) q = q.where(time, '<=', auditTimeValue(dialect, filters.to));
  if (before !== null) {
    q = q.where(
      sql<boolean>`(${time}, ${sql.ref('a.id')}) < (${auditTimeValue(dialect, before.createdAt)}, ${before.id})`,
    );
  }
  const built = q.orderBy(time, 'desc').orderBy('a.id', 'desc').limit(limit);
  const compile = (): CompiledQuery<InferResult<typeof built>[number]> => {
    const c = built.compile();
    if (dialect !== 'sqlite') return c;
    // Without statistics SQLite may take a range on created_at for as selective as an equality and read the
    // page off a shorter index, filtering the rest; the index named here bounds every filter, so it is never
    // worse (the page is its first `limit` entries).
    const from = 'from "audit_logs" as "a"';
    if (!c.sql.includes(from)) throw new Error('audit page query: unexpected SQL');
    return CompiledQuery.raw(c.sql.replace(from, `${from} indexed by "${index}"`), [...c.parameters]) as never;
  };
  return { index, compile, execute: async () => (await db.executeQuery(compile())).rows };
}

/** The index (migration 2026-11-29T00-audit-compact-keys) that serves these filters in this scope. */
export function auditIndex(scope: { projectId?: string | undefined }, filters: AuditFilters): string {
  const actor = filters.actor !== undefined ? '_actor' : '';
  const action = filters.action !== undefined ? '_action' : '';
  return `audit_logs_${scope.projectId ? 'project' : 'ws'}${actor}${action}_at`;
}

/** The page's lower bound; a cursor from before D64 (an id alone) takes that entry's time. */
async function auditCursor(db: Db, cursor: string | undefined): Promise<{ createdAt: string; id: number } | null> {
  const decoded = decodeAuditCursor(cursor);
  if (decoded === null || decoded.createdAt !== undefined) return decoded as { createdAt: string; id: number } | null;
  const row = await db.selectFrom('audit_logs').select('created_at').where('id', '=', decoded.id).executeTakeFirst();
  if (!row) throw new AppError('VALIDATION', 'invalid cursor', 'cursor');
  return { createdAt: row.created_at, id: decoded.id };
}

/** Writes audit entries inside the caller's transaction, so a change and its record commit together. */
export async function recordAudit(trx: Db, rows: AuditRow | AuditRow[]): Promise<void> {
  const list = Array.isArray(rows) ? rows : [rows];
  if (list.length > 0) await trx.insertInto('audit_logs').values(list).execute();
}
