import type { Insertable } from 'kysely';
import type { DbHandle } from '../db/index.js';
import type { AuditLogsTable } from '../db/schema.js';

type AuditRow = Insertable<AuditLogsTable>;

interface Pending {
  row: AuditRow;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Group commit for audit entries of reads (pull, export): every pull is durably audited before it is
 * answered, but the rows of concurrent requests share one transaction (one fsync) instead of one each.
 *
 * Leader/follower: when no commit is running, the rows of one event-loop turn (the requests parsed
 * together) are sent at the end of that turn, so the fsync overlaps the work on the requests that arrive
 * next; rows that arrive while `maxInFlight` commits are running wait and go together in the next one.
 * (Gathering every turn's rows regardless of running commits made all connections move in lock-step: the
 * CPU idled during each fsync and the disk idled during the CPU work.)
 *
 * A failed batch is retried row by row, so one bad row (its project deleted a moment earlier) fails only
 * its own request.
 */
export class AuditBatcher {
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly settled = new Set<() => void>();

  constructor(
    private readonly insert: DbHandle['insertAuditRows'],
    /** SQLite has one writer, so one commit at a time; PostgreSQL commits several in parallel. */
    private readonly maxInFlight = 1,
    private readonly maxBatch = 500,
  ) {}

  append(row: AuditRow): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      if (!this.scheduled && this.inFlight < this.maxInFlight) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          if (this.inFlight < this.maxInFlight && this.queue.length > 0) this.flush();
        });
      }
    });
  }

  private flush(): void {
    const batch = this.queue.splice(0, this.maxBatch);
    this.inFlight++;
    this.insert(batch.map((p) => p.row)).then(
      () => this.done(batch, null),
      (e: unknown) => this.done(batch, e),
    );
  }

  private done(batch: Pending[], error: unknown): void {
    this.inFlight--;
    // Hand the next batch to the database before answering this one, so the disk is never idle.
    if (this.queue.length > 0) this.flush();
    if (error === null) for (const p of batch) p.resolve();
    else if (batch.length === 1) batch[0]!.reject(error);
    else for (const p of batch) this.retryAlone(p);
    if (this.inFlight === 0) for (const wake of this.settled) wake();
  }

  private retryAlone(p: Pending): void {
    this.inFlight++;
    this.insert([p.row]).then(
      () => this.done([p], null),
      (e: unknown) => this.done([p], e),
    );
  }

  /** Waits until every appended row is committed (graceful shutdown). */
  async drain(): Promise<void> {
    while (this.inFlight > 0 || this.queue.length > 0) {
      await new Promise<void>((wake) => {
        const once = () => {
          this.settled.delete(once);
          wake();
        };
        this.settled.add(once);
      });
    }
  }
}
