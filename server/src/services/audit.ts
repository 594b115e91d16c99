import type { Insertable } from 'kysely';
import type { Db } from '../db/index.js';
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
 * While a batch commits, new rows gather for the next one.
 */
export class AuditBatcher {
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private scheduled = false;

  constructor(
    private readonly db: Db,
    private readonly maxBatch = 500,
  ) {}

  append(row: AuditRow): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flushing = this.flush().finally(() => {
        this.flushing = null;
        if (this.queue.length > 0) this.schedule();
      });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, this.maxBatch);
    try {
      await this.db
        .insertInto('audit_logs')
        .values(batch.map((p) => p.row))
        .execute();
      for (const p of batch) p.resolve();
    } catch (e) {
      for (const p of batch) p.reject(e);
    }
  }

  /** Waits until every appended row is committed (graceful shutdown). */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.flushing || this.scheduled) {
      await (this.flushing ?? new Promise((r) => setImmediate(r)));
    }
  }
}
