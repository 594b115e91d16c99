import { createHash, randomUUID } from 'node:crypto';
import { AUDIT_STREAM_BATCH, AUDIT_STREAM_EVENT } from '@svcenv/contract';
import { type ExpressionBuilder, sql } from 'kysely';
import { presentAuditEntries, selectAuditEntries } from '../db/audit-entries.js';
import { auditIdIs } from '../db/audit-keys.js';
import type { Db, Dialect } from '../db/index.js';
import type { Database } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import type { Resolver } from '../lib/net-guard.js';
import { openStreamSecret, signWebhookBody } from '../lib/webhook-signing.js';
import type { BackgroundWorker } from './queue.js';
import { sendWebhook, WEBHOOK_TIMEOUT_MS } from './webhook.js';

/**
 * D65: audit streams, delivered (ADR 0024). Each instance looks every `STREAM_POLL_MS` for streams with
 * entries past their cursor, takes a stream's lease (a conditional update of its row, so one instance at a
 * time sends its next batch), sends up to 500 entries in id order, signed as a webhook delivery, and moves
 * the cursor only on a 2xx and only from the cursor it read (so it moves once per batch whichever instances
 * raced). A failed batch is tried again after 1 s, doubling up to 5 minutes, for as long as the stream exists.
 *
 * A stream is its own lane with one batch in flight, and the streams do not use the job runner's slots: a
 * dead stream never delays a webhook, an email or another stream. Their database work goes through the
 * runner's share of the pool (`withDb`, ADR 0010).
 */
export const STREAM_POLL_MS = 250;
/** Longer than an attempt (10 s, as webhooks) and its two database steps. */
export const STREAM_LEASE_MS = 30_000;
/** Streams in flight at once on an instance; each holds at most one open request. */
export const STREAM_CONCURRENCY = 32;
export const STREAM_BACKOFF_CAP_MS = 5 * 60_000;
/** Delay after `failures` failed attempts in a row: about 1 s, doubling, capped at 5 minutes (D65). */
export const streamBackoffMs = (failures: number): number =>
  Math.min(STREAM_BACKOFF_CAP_MS, 1000 * 2 ** Math.max(0, failures - 1));

export interface AuditStreamDeps {
  db: Db;
  dialect: Dialect;
  /** DbHandle.flushAuditInbox. */
  flushAuditInbox: () => Promise<void>;
  clock: Clock;
  /** The job runner's share of the database (JobQueue.withDb). */
  withDb<T>(fn: () => Promise<T>): Promise<T>;
  /** Seals the `whsec_` secrets (the webhooks' key). */
  secretKey: Buffer;
  /** D5: WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  resolve: Resolver;
  log: { error(obj: object, msg: string): void };
  pollMs?: number;
  timeoutMs?: number;
}

/**
 * The highest audit id handed out so far: every entry written later has a higher one. On PostgreSQL the
 * sequence's last value (ids of transactions still open included); on SQLite, called inside a write
 * transaction, the largest id (ids are never reused: AUTOINCREMENT).
 */
export async function auditIdHighWater(db: Db, dialect: Dialect): Promise<number> {
  const q =
    dialect === 'postgres'
      ? sql<{
          w: number | null;
        }>`select pg_sequence_last_value(pg_get_serial_sequence('audit_logs', 'id')::regclass) as w`
      : sql<{ w: number | null }>`select max(id) as w from audit_logs`;
  const { rows } = await q.execute(db);
  return Number(rows[0]?.w ?? 0);
}

/**
 * The highest audit id below which no entry can still appear. SQLite commits audit rows one transaction at a
 * time under its write lock (the writer thread included), so ids appear in commit order: every id is safe.
 * On PostgreSQL a transaction may commit id 11 while id 10's is still open; passing 10 then would skip it
 * for good. So: read the sequence's last value `w`, then a snapshot; every transaction holding an id <= w
 * had its transaction id before it took the audit id (migration 2026-11-27T20: the id default takes the
 * transaction id first), so below the snapshot's xmax. Once the oldest transaction still running is at or
 * above that xmax, every id <= w has committed or never will. A rolled-back id leaves a gap that is passed
 * then; an open one is waited for, never skipped.
 */
export class AuditWatermark {
  private safe = 0;
  private waiting: { w: number; xmax: bigint } | null = null;
  constructor(private readonly deps: Pick<AuditStreamDeps, 'db' | 'dialect' | 'withDb'>) {}

  async current(): Promise<number> {
    const { db, dialect, withDb } = this.deps;
    if (dialect === 'sqlite') return Number.MAX_SAFE_INTEGER;
    // Two statements, in this order: a statement's snapshot is taken before it runs, so reading both in one
    // would take the snapshot before the sequence.
    const w = await withDb(() => auditIdHighWater(db, dialect));
    const { rows } = await withDb(() =>
      sql<{ xmin: string; xmax: string }>`select pg_snapshot_xmin(s)::text as xmin, pg_snapshot_xmax(s)::text as xmax
        from (select pg_current_snapshot() as s) q`.execute(db),
    );
    const xmin = BigInt(rows[0]!.xmin);
    const xmax = BigInt(rows[0]!.xmax);
    if (this.waiting && xmin >= this.waiting.xmax) {
      this.safe = Math.max(this.safe, this.waiting.w);
      this.waiting = null;
    }
    if (xmin >= xmax) {
      // No transaction was running: every id handed out before the snapshot is settled.
      this.safe = Math.max(this.safe, w);
      this.waiting = null;
    } else if (!this.waiting && w > this.safe) {
      this.waiting = { w, xmax };
    }
    return this.safe;
  }
}

/**
 * A stream's next batch: its workspace's entries after its cursor, in id order, read off audit_logs_ws_id (the
 * index's key as db/audit-keys.ts spells it; server/test/audit-scale.test.ts checks the plan).
 */
export function streamBatchQuery(db: Db, dialect: Dialect, workspaceId: string, cursor: number, upTo: number) {
  return selectAuditEntries(db)
    .where(auditIdIs(dialect, 'a.workspace_id', workspaceId))
    .where('a.id', '>', cursor)
    .where('a.id', '<=', upTo)
    .orderBy('a.id')
    .limit(AUDIT_STREAM_BATCH);
}

interface Leased {
  id: string;
  workspace_id: string;
  url: string;
  secret_sealed: string;
  cursor: number;
  failures: number;
}

/** X-Svcenv-Delivery of a batch: the same for the same entries of a stream, whichever instance sends them. */
function deliveryId(streamId: string, from: number, to: number): string {
  const h = createHash('sha256').update(`${streamId}:${from}:${to}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export class AuditStreamer implements BackgroundWorker {
  private stopped = true;
  private timer: NodeJS.Timeout | null = null;
  private looking: Promise<void> | null = null;
  private lookAgain = false;
  /** Stream id → its batch in flight on this instance. */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** This instance, as the lease names it. */
  private readonly owner = randomUUID();
  private readonly watermark: AuditWatermark;

  constructor(private readonly deps: AuditStreamDeps) {
    this.watermark = new AuditWatermark(deps);
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.looking;
    await Promise.all(this.inFlight.values());
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.look();
    }, ms);
    this.timer.unref();
  }

  /** One look for streams with work (one at a time; a look asked for meanwhile runs right after). */
  private look(): void {
    if (this.stopped) return;
    if (this.looking) {
      this.lookAgain = true;
      return;
    }
    this.looking = this.startDue()
      .catch((e) => this.deps.log.error({ err: e }, 'audit streams: look failed'))
      .finally(() => {
        this.looking = null;
        if (this.lookAgain) {
          this.lookAgain = false;
          this.schedule(0);
        } else this.schedule(this.deps.pollMs ?? STREAM_POLL_MS);
      });
  }

  private async startDue(): Promise<void> {
    const { db, clock, dialect, withDb } = this.deps;
    const free = STREAM_CONCURRENCY - this.inFlight.size;
    if (free <= 0) return;
    const now = clock.now().toISOString();
    const due = (
      await withDb(() =>
        db
          .selectFrom('audit_streams')
          .select(['id'])
          .where('next_attempt_at', '<=', now)
          .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
          .orderBy('next_attempt_at')
          .limit(STREAM_CONCURRENCY * 4)
          .execute(),
      )
    )
      .map((r) => r.id)
      .filter((id) => !this.inFlight.has(id));
    if (due.length === 0) return;
    // The audit inbox holds the latest pulls' entries until moved; every look moves them, so they are
    // streamed within a poll of being written (D65's 5 s), in the id order the move gives them (ADR 0007).
    await this.deps.flushAuditInbox();
    const upTo = await this.watermark.current();
    const ready = await withDb(() =>
      db
        .selectFrom('audit_streams as s')
        .select(['s.id', 's.cursor'])
        .where('s.id', 'in', due)
        .where(({ exists, selectFrom }) =>
          exists(
            selectFrom('audit_logs as a')
              .select('a.id')
              // audit_logs_ws_id's key (db/audit-keys.ts).
              .where(auditIdIs(dialect, 'a.workspace_id', sql.ref('s.workspace_id')))
              .whereRef('a.id', '>', 's.cursor')
              .where('a.id', '<=', upTo),
          ),
        )
        .orderBy('s.next_attempt_at')
        .limit(free)
        .execute(),
    );
    for (const s of ready) {
      const leased = await this.lease(s.id, Number(s.cursor));
      if (!leased) continue;
      const p = this.send(leased, upTo)
        .catch((e) => {
          this.deps.log.error({ err: e, streamId: leased.id }, 'audit streams: batch failed');
          return false;
        })
        .then((more) => {
          this.inFlight.delete(leased.id);
          // A full batch went through: the next one is likely waiting, send it without waiting for the poll.
          if (more) this.look();
        });
      this.inFlight.set(leased.id, p);
    }
  }

  /** Takes the stream for one batch, unless another instance holds it or moved its cursor meanwhile. */
  private async lease(id: string, cursor: number): Promise<Leased | undefined> {
    const { db, clock, withDb } = this.deps;
    const now = clock.now();
    const nowIso = now.toISOString();
    return withDb(() =>
      db
        .updateTable('audit_streams')
        .set({ lease_owner: this.owner, lease_until: new Date(now.getTime() + STREAM_LEASE_MS).toISOString() })
        .where('id', '=', id)
        .where('cursor', '=', cursor)
        .where('next_attempt_at', '<=', nowIso)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowIso)]))
        .returning(['id', 'workspace_id', 'url', 'secret_sealed', 'cursor', 'failures'])
        .executeTakeFirst()
        .then((r) => (r ? { ...r, cursor: Number(r.cursor), failures: Number(r.failures) } : undefined)),
    );
  }

  /** One batch; true when it was full and acknowledged. */
  private async send(s: Leased, upTo: number): Promise<boolean> {
    const { db, clock, dialect, withDb } = this.deps;
    const rows = await withDb(() => streamBatchQuery(db, dialect, s.workspace_id, s.cursor, upTo).execute());
    const mine = (eb: ExpressionBuilder<Database, 'audit_streams'>) =>
      eb.and([eb('id', '=', s.id), eb('lease_owner', '=', this.owner), eb('cursor', '=', s.cursor)]);
    if (rows.length === 0) {
      await withDb(() =>
        db.updateTable('audit_streams').set({ lease_owner: null, lease_until: null }).where(mine).execute(),
      );
      return false;
    }
    const entries = await withDb(() => presentAuditEntries(db, rows));
    const last = entries[entries.length - 1]!.id;
    const body = JSON.stringify({ entries });
    const secret = openStreamSecret(this.deps.secretKey, s.id, s.secret_sealed);
    const result = await sendWebhook({
      url: s.url,
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'svcenv-audit-streams/1',
        'x-svcenv-signature': signWebhookBody(secret, body),
        'x-svcenv-delivery': deliveryId(s.id, entries[0]!.id, last),
        'x-svcenv-event': AUDIT_STREAM_EVENT,
      },
      allowPrivate: this.deps.allowPrivate,
      resolve: this.deps.resolve,
      timeoutMs: this.deps.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
    });
    const at = clock.now();
    const atIso = at.toISOString();
    const ok = result.status >= 200 && result.status < 300;
    const failures = ok ? 0 : s.failures + 1;
    // Conditional on the cursor read and on our lease: the cursor moves once per batch, and never back.
    await withDb(() =>
      db
        .updateTable('audit_streams')
        .set({
          ...(ok ? { cursor: last, last_delivered_at: atIso } : {}),
          last_status: result.status,
          last_attempt_at: atIso,
          failures,
          next_attempt_at: ok ? atIso : new Date(at.getTime() + streamBackoffMs(failures)).toISOString(),
          lease_owner: null,
          lease_until: null,
        })
        .where(mine)
        .execute(),
    );
    return ok && rows.length === AUDIT_STREAM_BATCH;
  }
}
