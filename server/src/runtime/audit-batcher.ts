import type { Insertable } from 'kysely';
import type { DbHandle } from '../db/index.js';
import type { AuditLogsTable } from '../db/schema.js';
import { GroupBatcher } from '../lib/group-batcher.js';

type AuditRow = Insertable<AuditLogsTable>;

/**
 * Group commit for audit entries of reads (pull, export): every pull is durably audited before it is
 * answered, but the rows of concurrent requests share one transaction (one fsync) instead of one each
 * (lib/group-batcher.ts: the rows of one event-loop turn go together; a failed batch is retried row by row,
 * so one bad row, its project deleted a moment earlier, fails only its own request).
 */
export class AuditBatcher {
  private readonly batcher: GroupBatcher<AuditRow, void>;

  constructor(
    insert: DbHandle['insertAuditRows'],
    /** SQLite has one writer, so one commit at a time; PostgreSQL commits several in parallel. */
    maxInFlight = 1,
    maxBatch = 500,
  ) {
    this.batcher = new GroupBatcher<AuditRow, void>(
      async (rows) => {
        await insert(rows);
        return rows.map(() => undefined);
      },
      maxInFlight,
      maxBatch,
    );
  }

  append(row: AuditRow): Promise<void> {
    return this.batcher.add(row);
  }

  /** Waits until every appended row is committed (graceful shutdown). */
  drain(): Promise<void> {
    return this.batcher.drain();
  }
}
