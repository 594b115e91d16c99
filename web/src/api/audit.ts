/** The audit logs: the workspace's (Owners) or one project's, newest first, in cursor pages (D36, ADR 0015). */
import type { AuditEntry, auditPage } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

export type AuditPage = z.infer<typeof auditPage>;

/** The server-side filters; `from`/`to` are ISO instants (or days), both inclusive. Empty ones are left out. */
export interface AuditFilters {
  action?: string | undefined;
  actor?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/** A project's log when `projectId` is given, else the workspace's. `cursor` continues after a page. */
export const listAudit = (
  projectId: string | undefined,
  limit: number,
  cursor: string | null,
  filters: AuditFilters = {},
) => {
  const query: Record<string, string> = { limit: String(limit) };
  if (cursor) query.cursor = cursor;
  for (const [k, v] of Object.entries(filters)) if (v) query[k] = v;
  return projectId
    ? api.call(e.projectAudit, { params: { id: projectId }, query })
    : api.call(e.workspaceAudit, { query });
};

/** At most this many entries in one export (100 requests of 200); the caller says when it stopped there. */
export const EXPORT_MAX = 20_000;

/**
 * Every entry under `filters`, newest first, following the cursor 200 at a time up to EXPORT_MAX. `onProgress`
 * hears the running count. `complete` is false when the log held more than EXPORT_MAX.
 */
export async function collectAudit(
  projectId: string | undefined,
  filters: AuditFilters,
  onProgress?: (count: number) => void,
): Promise<{ entries: AuditEntry[]; complete: boolean }> {
  const entries: AuditEntry[] = [];
  let cursor: string | null = null;
  do {
    const page: AuditPage = await listAudit(projectId, 200, cursor, filters);
    entries.push(...page.logs);
    onProgress?.(entries.length);
    cursor = page.nextCursor || null;
  } while (cursor && entries.length < EXPORT_MAX);
  return { entries: entries.slice(0, EXPORT_MAX), complete: cursor === null && entries.length <= EXPORT_MAX };
}
