import { sql } from 'kysely';
import type { Db, Dialect } from '../db/index.js';
import type { Clock } from '../lib/clock.js';
import { open, seal } from '../lib/crypto.js';

/**
 * Durable background jobs over the application's own database (guide convention 10).
 *
 * A job row is written in the same transaction as the change that causes it, so a committed change always
 * has its job and a rolled-back one never does. Runners claim due jobs atomically (PostgreSQL:
 * `FOR UPDATE SKIP LOCKED`; SQLite: one UPDATE ... RETURNING, a single writer), under a lease: a job whose
 * instance died is claimed again once the lease runs out. Failures retry with the kind's backoff until
 * `maxAttempts`, then the job is `dead` and the kind's `onDead` runs.
 */
export interface JobKind<P> {
  /** Does the work; throw to retry. Must be safe to run again (at-least-once delivery). */
  perform(payload: P, ctx: { attempt: number; jobId: number }): Promise<void>;
  maxAttempts: number;
  /** Delay before attempt `attempt + 1`, after `attempt` failed attempts. */
  backoffMs(attempt: number): number;
  /** Longest a single attempt may take before its lease lapses. */
  leaseMs?: number;
  onDead?(payload: P, error: string): Promise<void>;
}

export type JobKinds = Record<string, JobKind<any>>;

export interface EnqueueOptions {
  kind: string;
  payload: unknown;
  /** Default: now. */
  runAt?: Date;
}

const aad = (kind: string) => `svcenv/job/${kind}`;

export class JobQueue {
  private kinds: JobKinds = {};
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  private kicked = false;

  constructor(
    private readonly opts: {
      db: Db;
      dialect: Dialect;
      clock: Clock;
      sealKey: Buffer;
      log: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void };
      pollMs?: number;
      batch?: number;
    },
  ) {}

  register(kinds: JobKinds): void {
    this.kinds = { ...this.kinds, ...kinds };
  }

  /** Writes a job in the caller's transaction; call `kick()` after the commit to run it promptly. */
  async enqueue(trx: Db, job: EnqueueOptions): Promise<void> {
    const kind = this.kinds[job.kind];
    if (!kind) throw new Error(`unknown job kind ${job.kind}`);
    const now = this.opts.clock.now().toISOString();
    await trx
      .insertInto('jobs')
      .values({
        kind: job.kind,
        payload_sealed: seal(this.opts.sealKey, Buffer.from(JSON.stringify(job.payload)), aad(job.kind)),
        status: 'pending',
        max_attempts: kind.maxAttempts,
        run_at: (job.runAt ?? this.opts.clock.now()).toISOString(),
        locked_until: null,
        last_error: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Runs due jobs soon (after a commit that enqueued some), without waiting for the next poll. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) this.kicked = true;
    else this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.runDue()
        .then(() => undefined)
        .catch((e) => this.opts.log.error({ err: e }, 'job runner failed'))
        .finally(() => {
          this.running = null;
          const again = this.kicked;
          this.kicked = false;
          this.schedule(again ? 0 : (this.opts.pollMs ?? 500));
        });
    }, ms);
    this.timer.unref();
  }

  /** Claims and performs due jobs until none is left; returns how many ran. Tests call it directly. */
  async runDue(): Promise<number> {
    let total = 0;
    for (;;) {
      const jobs = await this.claim();
      if (jobs.length === 0) return total;
      total += jobs.length;
      await Promise.all(jobs.map((j) => this.perform(j)));
    }
  }

  private async claim() {
    const { db, dialect, clock } = this.opts;
    const now = clock.now();
    const nowIso = now.toISOString();
    const leaseIso = new Date(now.getTime() + 60_000).toISOString();
    const limit = this.opts.batch ?? 20;
    const due = sql`(status = 'pending' and run_at <= ${nowIso}) or (status = 'running' and locked_until < ${nowIso})`;
    const pick =
      dialect === 'postgres'
        ? sql`select id from jobs where ${due} order by run_at limit ${limit} for update skip locked`
        : sql`select id from jobs where ${due} order by run_at limit ${limit}`;
    const rows = await sql<{
      id: number;
      kind: string;
      payload_sealed: string;
      attempts: number;
      max_attempts: number;
    }>`update jobs set status = 'running', attempts = attempts + 1, locked_until = ${leaseIso}, updated_at = ${nowIso}
       where id in (${pick}) returning id, kind, payload_sealed, attempts, max_attempts`.execute(db);
    return rows.rows.map((r) => ({ ...r, id: Number(r.id) }));
  }

  private async perform(job: {
    id: number;
    kind: string;
    payload_sealed: string;
    attempts: number;
    max_attempts: number;
  }): Promise<void> {
    const { db, clock } = this.opts;
    const kind = this.kinds[job.kind];
    let error: string;
    let payload: unknown;
    try {
      if (!kind) throw new Error(`no handler for job kind ${job.kind}`);
      payload = JSON.parse(open(this.opts.sealKey, job.payload_sealed, aad(job.kind)).toString('utf8'));
      await kind.perform(payload, { attempt: job.attempts, jobId: job.id });
      await db
        .updateTable('jobs')
        .set({ status: 'done', locked_until: null, last_error: null, updated_at: clock.now().toISOString() })
        .where('id', '=', job.id)
        .execute();
      return;
    } catch (e) {
      // Job errors are our own messages (status codes, timeouts), never payload contents.
      error = e instanceof Error ? e.message.slice(0, 500) : 'failed';
    }
    const dead = !kind || job.attempts >= job.max_attempts;
    const now = clock.now();
    await db
      .updateTable('jobs')
      .set({
        status: dead ? 'dead' : 'pending',
        locked_until: null,
        last_error: error,
        run_at: dead ? now.toISOString() : new Date(now.getTime() + kind!.backoffMs(job.attempts)).toISOString(),
        updated_at: now.toISOString(),
      })
      .where('id', '=', job.id)
      .execute();
    if (dead) {
      this.opts.log.warn({ jobId: job.id, kind: job.kind, attempts: job.attempts, error }, 'job failed for good');
      await kind?.onDead?.(payload, error).catch(() => undefined);
    }
  }
}

/** Exponential backoff: base, then x4 each attempt, capped. */
export const exponentialBackoff = (baseMs: number, capMs: number) => (attempt: number) =>
  Math.min(capMs, baseMs * 4 ** Math.max(0, attempt - 1));
