import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, type Migration, type MigrationProvider, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import * as initial from './migrations/2026-11-22T00-initial.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';
export type Db = Kysely<Database>;

export interface DbHandle {
  db: Db;
  dialect: Dialect;
  close(): Promise<void>;
}

/** Bigint columns (audit and history ids) come back as numbers; they stay far below 2^53. */
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

/**
 * Opens the embedded SQLite database in `dataDir` (D1) or PostgreSQL at `databaseUrl` (D2).
 * SQLite runs in WAL mode with synchronous=FULL: an acknowledged write survives power loss.
 */
export function openDb(opts: { dataDir: string; databaseUrl?: string | undefined }): DbHandle {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10 });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', close: () => db.destroy() };
  }
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const sqlite = new SQLite(join(opts.dataDir, 'svcenv.db'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

/** Migrations are bundled (imported), so they run from any working directory (guide convention 13). */
function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '2026-11-22T00-initial': { up: (db) => initial.up(db, dialect), down: initial.down },
  };
}

export async function migrate(handle: DbHandle): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(handle.dialect) };
  const { error, results } = await new Migrator({ db: handle.db, provider }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`database migration ${failed ?? ''} failed: ${(error as Error).message}`);
  }
}
