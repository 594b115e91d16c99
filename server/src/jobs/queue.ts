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
 *
 * Each job completes on its own (ADR 0010): a runner keeps up to `concurrency` jobs in flight and claims more
 * as soon as any one finishes or a kick arrives, so a slow job holds one slot, never a batch. Jobs of one
 * lane (one webhook) hold at most their kind's `laneLimit` slots of an instance, and the claim skips lanes
 * already at their limit, so one hanging target cannot take the slots of the others. The runner's database
 * work goes through a gate of `dbSlots` (a bounded share of the pool the API uses too, on PostgreSQL).
 */
export interface JobKind<P> {
  /** Does the work; throw to retry. Must be safe to run again (at-least-once delivery). */
  perform(payload: P, ctx: JobContext): Promise<void>;
  maxAttempts: number;
  /** Delay before attempt `attempt + 1`, after `attempt` failed attempts. */
  backoffMs(attempt: number): number;
  /** Longest a single attempt may take before its lease lapses. */
  leaseMs?: number;
  onDead?(payload: P, error: string): Promise<void>;
  /** The job's lane, fixed when it is enqueued (e.g. one per webhook); null or absent: no lane. */
  lane?(payload: P): string | null;
  /** Most jobs of one lane in flight on an instance (default 1). */
  laneLimit?: number;
}

export interface JobContext {
  attempt: number;
  jobId: number;
  /**
   * Runs `fn`, which uses the database, within the runner's share of it. Wrap each short piece of database
   * work, never a wait on the network: a job waiting here holds no connection.
   */
  withDb<T>(fn: () => Promise<T>): Promise<T>;
}

export type JobKinds = Record<string, JobKind<any>>;

/** Background work with a loop of its own, started and stopped with the runner (`alongside`). */
export interface BackgroundWorker {
  start(): void;
  /** Stops looking for work and waits for the work in flight. */
  stop(): Promise<void>;
}

/** Thrown by `perform` when trying again cannot help (e.g. a webhook answered 404): the job is dead at once. */
export class FinalJobError extends Error {}

/** At most `size` callers inside at once; the others wait in order. */
class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly size: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active < this.size) this.active++;
    // The caller that leaves hands its place over, so `active` stays counted.
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

interface ClaimedJob {
  id: number;
  kind: string;
  payload_sealed: string;
  attempts: number;
  max_attempts: number;
  lane: string | null;
}

/** Work done every `everyMs` by each runner (e.g. the expiry reminder scan); must be safe on several instances. */
interface Periodic {
  name: string;
  everyMs: number;
  run: () => Promise<void>;
  /** Clock time of the next run; 0 = at the first runDue. */
  nextAt: number;
  running: boolean;
  /** The task paces its own database work (long runs of short batches), so it does not hold the runner's gate. */
  ungated: boolean;
}

export interface EnqueueOptions {
  kind: string;
  payload: unknown;
  /** Default: now. */
  runAt?: Date;
}

const aad = (kind: string) => `svcenv/job/${kind}`;

/** Jobs one runner keeps in flight. They mostly wait on the network (a webhook attempt may take 10 s, D35). */
export const JOB_CONCURRENCY = 64;

export class JobQueue {
  private kinds: JobKinds = {};
  private stopped = true;
  private pollTimer: NodeJS.Timeout | null = null;
  private followUpTimer: NodeJS.Timeout | null = null;
  /** The background fill in progress; `fillAgain`: another was asked for meanwhile. */
  private filling: Promise<void> | null = null;
  private fillAgain = false;
  /** The last claim left due jobs behind (a full claim, or lanes at their limit): claim again when a slot frees. */
  private backlog = false;
  private periodicRun: Promise<void> | null = null;
  /** Claims of one instance run one at a time, each seeing the lanes the previous one filled. */
  private claims: Promise<unknown> = Promise.resolve();
  private readonly inFlight = new Set<Promise<void>>();
  /** Lane → jobs of it in flight here, and its limit. */
  private readonly lanes = new Map<string, { running: number; limit: number }>();
  private readonly gate: Gate;
  private periodic: Periodic[] = [];
  private readonly workers: BackgroundWorker[] = [];

  constructor(
    private readonly opts: {
      db: Db;
      dialect: Dialect;
      clock: Clock;
      sealKey: Buffer;
      log: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void };
      pollMs?: number;
      /** Most jobs one claim takes. */
      batch?: number;
      /** Most jobs in flight on this instance (default JOB_CONCURRENCY). */
      concurrency?: number;
      /**
       * Most pieces of the runner's database work at once. On PostgreSQL the runner shares the app's pool
       * (max 10) with the API: 3 leaves the API at least 7 connections however many attempts end together.
       * On SQLite every statement queues on the one connection, so 1 keeps the runner's share of that queue
       * to one statement ahead of a request.
       */
      dbSlots?: number;
    },
  ) {
    this.gate = new Gate(opts.dbSlots ?? (opts.dialect === 'postgres' ? 3 : 1));
  }

  register(kinds: JobKinds): void {
    this.kinds = { ...this.kinds, ...kinds };
  }

  /**
   * Runs `run` every `everyMs` (injected clock) from `runDue`, first at the first run. Each instance runs
   * its own schedule, so the task itself must act once per period across instances (guide convention 10).
   */
  every(name: string, everyMs: number, run: () => Promise<void>, opts: { ungated?: boolean } = {}): void {
    this.periodic.push({ name, everyMs, run, nextAt: 0, running: false, ungated: opts.ungated ?? false });
  }

  /**
   * A loop of its own that starts and stops with the runner (the audit streams, ADR 0024): it does not take
   * the runner's job slots, and reaches the database through `withDb`.
   */
  alongside(worker: BackgroundWorker): void {
    this.workers.push(worker);
  }

  /** Runs `fn`, which uses the database, within the runner's share of it (ADR 0010); never a network wait. */
  withDb<T>(fn: () => Promise<T>): Promise<T> {
    return this.gate.run(fn);
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
        lane: kind.lane?.(job.payload) ?? null,
      })
      .execute();
  }

  start(): void {
    this.stopped = false;
    // The first look on the next turn, not now: a caller that stops the runner at once (tests driving
    // runDue by hand) gets no scheduled work run behind its back.
    this.pollTimer = setTimeout(() => this.poll(), 0);
    this.pollTimer.unref();
    for (const w of this.workers) w.start();
  }

  /** Runs due jobs soon (after a commit that enqueued some), without waiting for the next poll. */
  kick(): void {
    if (this.stopped) return;
    this.fill();
    // A kick may come from inside the enqueuing transaction, before its commit: look once more shortly after
    // the latest kick.
    if (this.followUpTimer) clearTimeout(this.followUpTimer);
    this.followUpTimer = setTimeout(() => {
      this.followUpTimer = null;
      this.fill();
    }, 25);
    this.followUpTimer.unref();
  }

  /** Stops claiming, and waits for the jobs in flight to finish (a webhook attempt: at most its timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of [this.pollTimer, this.followUpTimer]) if (t) clearTimeout(t);
    this.pollTimer = null;
    this.followUpTimer = null;
    await this.filling;
    await this.periodicRun;
    await Promise.all([...this.inFlight, ...this.workers.map((w) => w.stop())]);
  }

  private poll(): void {
    if (this.stopped) return;
    this.periodicRun ??= this.runPeriodic().finally(() => {
      this.periodicRun = null;
    });
    this.fill();
    this.pollTimer = setTimeout(() => this.poll(), this.opts.pollMs ?? 500);
    this.pollTimer.unref();
  }

  /** Claims and starts due jobs while there are free slots (in the background; one fill at a time). */
  private fill(): void {
    if (this.stopped) return;
    if (this.filling) {
      this.fillAgain = true;
      return;
    }
    this.filling = (async () => {
      do {
        this.fillAgain = false;
        while (!this.stopped && (await this.claimAndStart()).more) {}
      } while (this.fillAgain && !this.stopped);
    })()
      .catch((e) => this.opts.log.error({ err: e }, 'job runner failed'))
      .finally(() => {
        this.filling = null;
      });
  }

  /**
   * Claims and performs due jobs until none is left that this instance may start; returns how many ran.
   * Tests call it directly (with the background runner stopped).
   */
  async runDue(): Promise<number> {
    await this.runPeriodic();
    let total = 0;
    const mine = new Set<Promise<void>>();
    for (;;) {
      const { started, more } = await this.claimAndStart();
      for (const p of started) {
        mine.add(p);
        void p.then(() => mine.delete(p));
      }
      total += started.length;
      if (more) continue;
      // Wait for a slot (one of ours, or, with every slot taken by the background runner, any) and look again:
      // a finished job may free a lane, or be due again at once.
      if (mine.size > 0) await Promise.race(mine);
      else if (started.length === 0 && this.inFlight.size >= this.concurrency) await Promise.race(this.inFlight);
      else return total;
    }
  }

  private get concurrency(): number {
    return this.opts.concurrency ?? JOB_CONCURRENCY;
  }

  /** Starts every due task and waits for them all: a long one (the audit prune) delays none of the others. */
  private async runPeriodic(): Promise<void> {
    const now = this.opts.clock.now().getTime();
    const runs: Promise<void>[] = [];
    for (const p of this.periodic) {
      if (p.running || now < p.nextAt) continue;
      p.running = true;
      p.nextAt = now + p.everyMs;
      runs.push(
        (p.ungated ? p.run() : this.gate.run(p.run))
          .catch((e) => this.opts.log.error({ err: e, task: p.name }, 'periodic task failed'))
          .finally(() => {
            p.running = false;
          }),
      );
    }
    await Promise.all(runs);
  }

  /** One claim for the free slots, its jobs started; `more`: a full claim, so more may be due. */
  private claimAndStart(): Promise<{ started: Promise<void>[]; more: boolean }> {
    const next = this.claims.then(() => this.claimAndStartNow());
    this.claims = next.catch(() => undefined);
    return next;
  }

  private async claimAndStartNow(): Promise<{ started: Promise<void>[]; more: boolean }> {
    const want = Math.min(this.concurrency - this.inFlight.size, this.opts.batch ?? 20);
    if (want <= 0) {
      this.backlog = true;
      return { started: [], more: false };
    }
    const full = [...this.lanes].filter(([, l]) => l.running >= l.limit).map(([lane]) => lane);
    const jobs = await this.gate.run(() => this.claim(want, full));
    const started: Promise<void>[] = [];
    const release: number[] = [];
    for (const job of jobs) {
      if (job.lane !== null) {
        const lane = this.lanes.get(job.lane) ?? { running: 0, limit: this.kinds[job.kind]?.laneLimit ?? 1 };
        // One claim may take several jobs of a lane with room for fewer; the rest go back.
        if (lane.running >= lane.limit) {
          release.push(job.id);
          continue;
        }
        lane.running++;
        this.lanes.set(job.lane, lane);
      }
      started.push(this.startJob(job));
    }
    if (release.length > 0) await this.gate.run(() => this.release(release));
    this.backlog = jobs.length === want || full.length > 0 || release.length > 0;
    return { started, more: jobs.length === want && this.inFlight.size < this.concurrency };
  }

  private startJob(job: ClaimedJob): Promise<void> {
    const p: Promise<void> = this.perform(job)
      .catch((e) => this.opts.log.error({ err: e, jobId: job.id, kind: job.kind }, 'job runner failed'))
      .finally(() => {
        this.inFlight.delete(p);
        if (job.lane !== null) {
          const lane = this.lanes.get(job.lane);
          if (lane && --lane.running <= 0) this.lanes.delete(job.lane);
        }
        if (this.backlog) this.fill();
      });
    this.inFlight.add(p);
    return p;
  }

  private async claim(limit: number, fullLanes: string[]): Promise<ClaimedJob[]> {
    const { db, dialect, clock } = this.opts;
    const now = clock.now();
    const nowIso = now.toISOString();
    const leaseIso = new Date(now.getTime() + 60_000).toISOString();
    const lanesFree =
      fullLanes.length === 0
        ? sql``
        : sql` and (lane is null or lane not in (${sql.join(fullLanes.map((l) => sql`${l}`))}))`;
    const due = sql`((status = 'pending' and run_at <= ${nowIso}) or (status = 'running' and locked_until < ${nowIso}))${lanesFree}`;
    const pick =
      dialect === 'postgres'
        ? sql`select id from jobs where ${due} order by run_at limit ${limit} for update skip locked`
        : sql`select id from jobs where ${due} order by run_at limit ${limit}`;
    const rows =
      await sql<ClaimedJob>`update jobs set status = 'running', attempts = attempts + 1, locked_until = ${leaseIso}, updated_at = ${nowIso}
       where id in (${pick}) returning id, kind, payload_sealed, attempts, max_attempts, lane`.execute(db);
    return rows.rows.map((r) => ({ ...r, id: Number(r.id) }));
  }

  /** Gives claimed jobs back untouched (their lane is full here); the claim excludes that lane meanwhile. */
  private async release(ids: number[]): Promise<void> {
    await this.opts.db
      .updateTable('jobs')
      .set((eb) => ({
        status: 'pending',
        attempts: eb('attempts', '-', 1),
        locked_until: null,
        updated_at: this.opts.clock.now().toISOString(),
      }))
      .where('id', 'in', ids)
      .where('status', '=', 'running')
      .execute();
  }

  private async perform(job: ClaimedJob): Promise<void> {
    const { db, clock } = this.opts;
    const kind = this.kinds[job.kind];
    let error: string;
    let final = false;
    let payload: unknown;
    try {
      if (!kind) throw new Error(`no handler for job kind ${job.kind}`);
      payload = JSON.parse(open(this.opts.sealKey, job.payload_sealed, aad(job.kind)).toString('utf8'));
      await kind.perform(payload, { attempt: job.attempts, jobId: job.id, withDb: (fn) => this.gate.run(fn) });
      await this.gate.run(() =>
        db
          .updateTable('jobs')
          .set({ status: 'done', locked_until: null, last_error: null, updated_at: clock.now().toISOString() })
          .where('id', '=', job.id)
          .execute(),
      );
      return;
    } catch (e) {
      // Job errors are our own messages (status codes, timeouts), never payload contents.
      error = e instanceof Error ? e.message.slice(0, 500) : 'failed';
      final = e instanceof FinalJobError;
    }
    const dead = !kind || final || job.attempts >= job.max_attempts;
    const now = clock.now();
    await this.gate.run(() =>
      db
        .updateTable('jobs')
        .set({
          status: dead ? 'dead' : 'pending',
          locked_until: null,
          last_error: error,
          run_at: dead ? now.toISOString() : new Date(now.getTime() + kind!.backoffMs(job.attempts)).toISOString(),
          updated_at: now.toISOString(),
        })
        .where('id', '=', job.id)
        .execute(),
    );
    if (dead) {
      this.opts.log.warn({ jobId: job.id, kind: job.kind, attempts: job.attempts, error }, 'job failed for good');
      await kind?.onDead?.(payload, error).catch(() => undefined);
    }
  }
}

/** Exponential backoff: base, then x4 each attempt, capped. */
export const exponentialBackoff = (baseMs: number, capMs: number) => (attempt: number) =>
  Math.min(capMs, baseMs * 4 ** Math.max(0, attempt - 1));
