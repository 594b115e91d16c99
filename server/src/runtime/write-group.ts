import { sql } from 'kysely';
import { type Db, type DbHandle, WalSyncError } from '../db/index.js';
import { GroupBatcher } from '../lib/group-batcher.js';

/** A short write transaction's body: database statements only (it may share its transaction with others). */
export type WriteJob<T> = (trx: Db) => Promise<T>;
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit of the short write transactions that concurrent requests make at once (the D71 lease's record
 * and activation, services/credentials/leases.ts), each durable before its request goes on.
 *
 * On SQLite every commit is an fsync on the thread that serves requests (better-sqlite3 is synchronous): at
 * four leases in flight, two commits each took a third of that thread (bench/profile.ts lease). Here the
 * jobs of one event-loop turn share one transaction and one fsync (lib/group-batcher.ts; jobs that arrive
 * while it commits go together in the next), and the longer a commit blocks the loop, the more jobs the next
 * one carries. Each job runs in a savepoint of its own: one that throws (a full maxLeases) is rolled back
 * alone and rejects only its own caller; a later job sees an earlier one's rows, as it would had they
 * committed one after the other. A transaction that fails as a whole (its COMMIT) rolled every job back, and
 * each is run again in a transaction of its own.
 *
 * The batch's fsync runs off this thread as well (DbHandle.transactionSyncedOffThread: the COMMIT writes the
 * WAL unsynced, libuv's pool fsyncs it, and only then do the jobs resolve). So the thread serves requests
 * while the disk syncs, and what a job's caller acknowledges is still durable (ADR 0029).
 *
 * On PostgreSQL commits run in parallel on the pool and block no thread: each job is its own transaction.
 */
export class WriteGroup {
  private readonly batcher: GroupBatcher<WriteJob<unknown>, Outcome> | null;

  private readonly db: Db;
  /** A batch's transaction: on SQLite its fsync runs off this thread (DbHandle.transactionSyncedOffThread). */
  private readonly transaction: <T>(body: (trx: Db) => Promise<T>) => Promise<T>;

  constructor(handle: Pick<DbHandle, 'db' | 'dialect' | 'transactionSyncedOffThread'>, maxBatch = 64) {
    this.db = handle.db;
    const offThread = handle.transactionSyncedOffThread?.bind(handle);
    this.transaction = offThread ?? ((body) => this.db.transaction().execute(body));
    this.batcher =
      handle.dialect === 'sqlite'
        ? new GroupBatcher<WriteJob<unknown>, Outcome>((jobs) => this.together(jobs), 1, maxBatch)
        : null;
  }

  /** Runs `job` in a transaction committed (durably) before this resolves; its error when it throws. */
  async run<T>(job: WriteJob<T>): Promise<T> {
    if (!this.batcher) return this.db.transaction().execute(job);
    const outcome = await this.batcher.add(job as WriteJob<unknown>);
    if (!outcome.ok) throw outcome.error;
    return outcome.value as T;
  }

  private together(jobs: WriteJob<unknown>[]): Promise<Outcome[]> {
    if (jobs.length === 1) {
      // No savepoint needed: the job's error is its transaction's.
      return this.transaction(jobs[0]!).then(
        (value): Outcome[] => [{ ok: true, value }],
        (error: unknown): Outcome[] => [{ ok: false, error }],
      );
    }
    const batch = this.transaction(async (trx) => {
      const outcomes: Outcome[] = [];
      for (const job of jobs) {
        await sql`savepoint write_job`.execute(trx);
        try {
          outcomes.push({ ok: true, value: await job(trx) });
          await sql`release write_job`.execute(trx);
        } catch (error) {
          // Fails when SQLite already rolled the whole transaction back (a full disk, an I/O error): the
          // batch then fails as a whole and every job runs again alone.
          await sql`rollback to write_job`.execute(trx);
          await sql`release write_job`.execute(trx);
          outcomes.push({ ok: false, error });
        }
      }
      return outcomes;
    });
    // A batch that committed but whose fsync failed is not run again job by job (that would apply every
    // job twice): each job fails with the error.
    return batch.catch((error: unknown) => {
      if (error instanceof WalSyncError) return jobs.map((): Outcome => ({ ok: false, error }));
      throw error;
    });
  }

  /** Waits until every job run so far is committed or failed (graceful shutdown). */
  drain(): Promise<void> {
    return this.batcher?.drain() ?? Promise.resolve();
  }
}
