// Worker thread of the SQLite audit group commit (services/audit.ts): its own connection to the same
// database, so the fsync of a batch happens off the event loop that serves requests. Plain JavaScript so it
// loads without a TypeScript loader. Each message is one batch, committed in one transaction.
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');
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

// Group commit: every batch that arrived while the previous commit was syncing goes into the next one.
parentPort.on('message', (first) => {
  const batches = [first];
  for (let m = receiveMessageOnPort(parentPort); m; m = receiveMessageOnPort(parentPort)) batches.push(m.message);
  try {
    insertAll(batches);
    parentPort.postMessage({ ids: batches.map((b) => b.id), ok: true });
  } catch (e) {
    parentPort.postMessage({
      ids: batches.map((b) => b.id),
      ok: false,
      message: e instanceof Error ? e.message : String(e),
    });
  }
});
