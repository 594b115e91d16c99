// Worker thread of the SQLite audit group commit (services/core/audit.ts): its own connection to the same
// database, so the fsync of a batch happens off the event loop that serves requests. Plain JavaScript so it
// loads without a TypeScript loader. Each message is one batch, committed in one transaction.
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');
// The writer that commits most often checkpoints the WAL: every 5,000 pages (~20 MB) instead of SQLite's
// 1,000, so that the checkpoints, each with its own fsync of the database file, come five times less
// often (paired runs of bench/pull.bench.ts's loads: 304s ~6 points of floor higher, pulls level; ADR 0007).
db.pragma('wal_autocheckpoint = 5000');
const insert = db.prepare(
  'insert into audit_logs (workspace_id, project_id, action, target_key, target_env, actor_id, actor_type, detail, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
);
const insertAll = db.transaction((batches) => {
  for (const { rows } of batches) {
    for (const r of rows) {
      insert.run(
        r.workspace_id,
        r.project_id,
        r.action,
        r.target_key,
        r.target_env,
        r.actor_id,
        r.actor_type,
        r.detail,
        r.created_at,
      );
    }
  }
});

// D64 retention: one batch of a workspace's oldest entries before the cutoff, in its own short transaction.
// Run here, between group commits, it never holds the write lock against this thread's own inserts. The
// index's keys are expressions (migration 2026-11-29T00-audit-compact-keys), spelled here as
// db/audit-keys.ts spells them.
const ms = (x) => `cast(round(unixepoch(${x}, 'subsec') * 1000) as integer)`;
const prune = db.prepare(
  `delete from audit_logs where id in (select id from audit_logs indexed by audit_logs_ws_at where unhex(workspace_id, '-') = unhex(?, '-') and ${ms('created_at')} < ${ms('?')} order by ${ms('created_at')} limit ?)`,
);

// Group commit: every batch that arrived while the previous commit was syncing goes into the next one. If
// that transaction fails, each batch is committed on its own, so one bad batch fails only its own callers.
// (Needed besides the batcher's row-by-row retry: those single-row retries arrive here together and would
// otherwise fail together again.)
const reply = (ids, ok, e) =>
  parentPort.postMessage(ok ? { ids, ok } : { ids, ok, message: e instanceof Error ? e.message : String(e) });
parentPort.on('message', (first) => {
  const messages = [first];
  for (let m = receiveMessageOnPort(parentPort); m; m = receiveMessageOnPort(parentPort)) messages.push(m.message);
  const batches = messages.filter((m) => m.rows);
  if (batches.length > 0) commit(batches);
  for (const m of messages) {
    if (!m.prune) continue;
    try {
      const { changes } = prune.run(m.prune.workspaceId, m.prune.cutoff, m.prune.limit);
      parentPort.postMessage({ ids: [m.id], ok: true, n: changes });
    } catch (e) {
      reply([m.id], false, e);
    }
  }
});

function commit(batches) {
  const first = batches[0];
  try {
    insertAll(batches);
    reply(
      batches.map((b) => b.id),
      true,
    );
  } catch (e) {
    if (batches.length === 1) return reply([first.id], false, e);
    for (const b of batches) {
      try {
        insertAll([b]);
        reply([b.id], true);
      } catch (e2) {
        reply([b.id], false, e2);
      }
    }
  }
}
