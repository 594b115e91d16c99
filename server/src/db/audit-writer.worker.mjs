// Worker thread of the SQLite audit group commit (services/core/audit.ts): its own connection to the same
// database, so the fsync of a batch happens off the event loop that serves requests. Plain JavaScript so it
// loads without a TypeScript loader. Each message is one batch, committed in one transaction, into the audit
// inbox (migration 2026-11-29T10-audit-inbox); a `flush` message moves the inbox into audit_logs.
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
const COLUMNS = 'workspace_id, project_id, action, target_key, target_env, actor_id, actor_type, detail, created_at';
const insert = db.prepare(`insert into audit_inbox (${COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?, ?)`);

// The audit inbox (ADR 0007, eighth round). A group commit of a few pulls' rows into audit_logs writes a page of
// the table and one of each of D64's nine indexes to the WAL and waits for their fsync; into the unindexed
// inbox it writes one page. The rows reach audit_logs by one `insert ... select` per MOVE_AT rows (the
// indexes' pages then written once for hundreds of rows), in their commit order, and whenever the server is
// about to read audit_logs (a `flush` message: DbHandle.flushAuditInbox), so a reader sees every entry
// committed before it asked. ~8 ms of this thread per move of 512 rows, while the requests that arrive
// meanwhile gather into the next group commit.
const MOVE_AT = 512;
const moveRows = db.prepare(`insert into audit_logs (${COLUMNS}) select ${COLUMNS} from audit_inbox order by id`);
const clearInbox = db.prepare('delete from audit_inbox');
const countInbox = db.prepare('select count(*) from audit_inbox').pluck();
// Rows this thread committed since its last move. A flush counts the table itself: rows a crashed process
// left there, and deletions of projects and workspaces cascade into it.
let inboxRows = 0;
const move = db.transaction(() => {
  moveRows.run();
  clearInbox.run();
});
function moveInbox() {
  // Counted outside the move: an empty inbox (a stream's look every 250 ms on an idle server) takes no
  // write lock. Immediate: the write lock first, waiting up to busy_timeout for the server's connection.
  if (countInbox.get() > 0) move.immediate();
  inboxRows = 0;
}
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
// index's keys are expressions (migration 2026-12-03T00-portable-audit-keys), spelled here as
// db/audit-keys.ts spells them: the id's short key and then the whole id, which decides.
const ms = (x) => `cast(round((julianday(${x}) - 2440587.5) * 86400000) as integer)`;
const prune = db.prepare(
  `delete from audit_logs where id in (select id from audit_logs indexed by audit_logs_ws_at where substr(workspace_id, 29) = substr(lower(@ws), 29) and workspace_id = lower(@ws) and ${ms('created_at')} < ${ms('@cutoff')} order by ${ms('created_at')} limit @limit)`,
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
  // After the commit that answered its batches, so their requests do not wait for the move. A flush or a prune
  // needs every committed row in audit_logs; a failed move leaves the inbox whole and fails them.
  const readers = messages.filter((m) => m.flush || m.prune);
  let moveError = null;
  if (readers.length > 0 || inboxRows >= MOVE_AT) {
    try {
      moveInbox();
    } catch (e) {
      moveError = e;
    }
  }
  for (const m of readers) {
    if (moveError) reply([m.id], false, moveError);
    else if (m.flush) reply([m.id], true);
    else {
      try {
        const { changes } = prune.run({ ws: m.prune.workspaceId, cutoff: m.prune.cutoff, limit: m.prune.limit });
        parentPort.postMessage({ ids: [m.id], ok: true, n: changes });
      } catch (e) {
        reply([m.id], false, e);
      }
    }
  }
});

function commit(batches) {
  const first = batches[0];
  try {
    insertAll(batches);
    for (const b of batches) inboxRows += b.rows.length;
    reply(
      batches.map((b) => b.id),
      true,
    );
  } catch (e) {
    if (batches.length === 1) return reply([first.id], false, e);
    for (const b of batches) {
      try {
        insertAll([b]);
        inboxRows += b.rows.length;
        reply([b.id], true);
      } catch (e2) {
        reply([b.id], false, e2);
      }
    }
  }
}
