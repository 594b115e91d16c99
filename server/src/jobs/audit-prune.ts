import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { auditIdIs, auditTimeKey, auditTimeValue } from '../db/audit-keys.js';
import type { DbHandle } from '../db/index.js';
import { type Clock, DAY_MS } from '../lib/clock.js';
import type { JobQueue } from './queue.js';
import { claimTaskLease } from './task-lease.js';

/**
 * D64 retention: with AUDIT_RETENTION_DAYS set, every instance looks every minute; the one that claims the
 * `audit-prune` lease (task_leases, one conditional upsert, so two instances never prune in the same minute)
 * deletes the entries older than the cutoff, workspace by workspace, in short batches through
 * DbHandle.pruneAuditBatch, and then writes one `audit.prune` entry `{deleted, cutoff}` in each workspace it
 * deleted from.
 *
 * Each batch is one short transaction, sized as the run goes to take about BATCH_TARGET_MS: a batch's cost
 * is mostly the index pages its rows touch, which depends on the cache and the disk, not only on the count
 * (500 rows of a 2-million-entry log on a busy disk took ~270 ms, and on SQLite every pull's audit insert
 * queued behind it in the writer's thread: bench/audit.bench.ts). The run pauses
 * PRUNE_PAUSE_MS between batches: on SQLite a write that found the lock taken retries on its busy-timeout
 * schedule (1, 2, 5, 10, 15, 20, 25 ms...), so a pause longer than those steps lets it in before the next
 * batch, instead of losing every race to a prune that never lets go. A run stops after RUN_BUDGET_MS of work
 * (the next minute's run goes on), so a backlog of millions never holds a shutdown for long.
 */
export const AUDIT_PRUNE_EVERY_MS = 60_000;
/** The first batch's size; then sized so that a batch takes about BATCH_TARGET_MS, within these bounds. */
export const PRUNE_BATCH = 100;
const MIN_BATCH = 10;
const MAX_BATCH = 2_000;
const BATCH_TARGET_MS = 10;
export const PRUNE_PAUSE_MS = 30;
const RUN_BUDGET_MS = 15_000;
/** Shorter than the period, so that the next minute's run (on whichever instance) can claim it again. */
const LEASE_MS = 50_000;
const LEASE = 'audit-prune';

export interface AuditPruneDeps {
  handle: Pick<DbHandle, 'db' | 'dialect' | 'pruneAuditBatch' | 'insertAuditRows' | 'flushAuditInbox'>;
  clock: Clock;
  retentionDays: number;
  /** This instance, in the lease. */
  holder: string;
  pauseMs?: number;
}

/** One run; returns what it deleted per workspace (empty when another instance holds the lease). */
export async function pruneAudit(deps: AuditPruneDeps): Promise<{ workspaceId: string; deleted: number }[]> {
  const { db, dialect } = deps.handle;
  const now = deps.clock.now();
  if (!(await claimTaskLease(db, LEASE, deps.holder, now, LEASE_MS))) return [];
  const cutoff = new Date(now.getTime() - deps.retentionDays * DAY_MS).toISOString();
  await deps.handle.flushAuditInbox(); // old entries still in the audit inbox (ADR 0007) are found too
  const workspaces = await db
    .selectFrom('workspaces as w')
    .select('w.id')
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('audit_logs as a')
          .select('a.id')
          // audit_logs_ws_at's keys (db/audit-keys.ts).
          .where(auditIdIs(dialect, 'a.workspace_id', sql.ref('w.id')))
          .where(auditTimeKey(dialect, 'a.created_at'), '<', auditTimeValue(dialect, cutoff)),
      ),
    )
    .orderBy('w.id')
    .execute();
  const started = performance.now();
  const done: { workspaceId: string; deleted: number }[] = [];
  let batch = PRUNE_BATCH;
  for (const { id } of workspaces) {
    let deleted = 0;
    for (;;) {
      const t = performance.now();
      const n = await deps.handle.pruneAuditBatch(id, cutoff, batch);
      const took = performance.now() - t;
      deleted += n;
      const full = n === batch;
      batch = Math.round(Math.min(MAX_BATCH, Math.max(MIN_BATCH, (batch * BATCH_TARGET_MS) / Math.max(took, 1))));
      if (!full || performance.now() - started > RUN_BUDGET_MS) break;
      await sleep(deps.pauseMs ?? PRUNE_PAUSE_MS);
    }
    if (deleted > 0) {
      done.push({ workspaceId: id, deleted });
      await deps.handle.insertAuditRows([
        {
          workspace_id: id,
          project_id: null,
          action: 'audit.prune',
          target_key: null,
          target_env: null,
          // The retention job, not a person: no actor.
          actor_id: null,
          actor_type: 'user',
          detail: JSON.stringify({ deleted, cutoff }),
          created_at: deps.clock.now().toISOString(),
        },
      ]);
    }
    if (performance.now() - started > RUN_BUDGET_MS) break;
    await sleep(deps.pauseMs ?? PRUNE_PAUSE_MS);
  }
  return done;
}

/** Schedules the run every minute on this instance (wiring.ts, when AUDIT_RETENTION_DAYS is set). */
export function registerAuditPrune(opts: {
  handle: AuditPruneDeps['handle'];
  clock: Clock;
  jobs: JobQueue;
  retentionDays: number;
  log: { info(obj: object, msg: string): void };
}): void {
  const holder = randomUUID();
  opts.jobs.every(
    'audit-prune',
    AUDIT_PRUNE_EVERY_MS,
    async () => {
      const done = await pruneAudit({ ...opts, holder });
      if (done.length > 0) {
        opts.log.info({ workspaces: done.length, deleted: done.reduce((n, d) => n + d.deleted, 0) }, 'audit pruned');
      }
    },
    { ungated: true },
  );
}
