import type { Insertable } from 'kysely';
import type { Db, DbHandle } from '../db/index.js';
import type { AuditLogsTable } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
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

/** Writes audit entries inside the caller's transaction, so a change and its record commit together. */
export async function recordAudit(trx: Db, rows: AuditRow | AuditRow[]): Promise<void> {
  const list = Array.isArray(rows) ? rows : [rows];
  if (list.length > 0) await trx.insertInto('audit_logs').values(list).execute();
}

interface Pending {
  row: AuditRow;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Group commit for audit entries of reads (pull, export): every pull is durably audited before it is
 * answered, but the rows of concurrent requests share one transaction (one fsync) instead of one each.
 * Rows gathered in one event-loop turn are handed to the database together without waiting for earlier
 * batches; on SQLite the writer thread folds every batch that queued during a commit into the next one.
 */
export class AuditBatcher {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly insert: DbHandle['insertAuditRows'],
    private readonly maxBatch = 500,
  ) {}

  append(row: AuditRow): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      const done = this.insert(batch.map((p) => p.row)).then(
        () => {
          for (const p of batch) p.resolve();
        },
        (e) => {
          for (const p of batch) p.reject(e);
        },
      );
      this.inFlight.add(done);
      void done.finally(() => this.inFlight.delete(done));
    }
  }

  /** Waits until every appended row is committed (graceful shutdown). */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.scheduled || this.inFlight.size > 0) {
      if (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
      else await new Promise((r) => setImmediate(r));
    }
  }
}
