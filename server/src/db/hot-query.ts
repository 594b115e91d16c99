import { type Compilable, CompiledQuery, type Kysely } from 'kysely';
import { preparedNames } from './prepared-names.js';
import type { Database } from './schema.js';

/** db/index.ts's Db, spelt out: index.ts registers the PostgreSQL runner here, so this module does not import it back. */
type Db = Kysely<Database>;

/**
 * A query on a per-request path, compiled once and then run with new arguments. Building and compiling a
 * Kysely query costs several times more than running it on SQLite (~50 µs against ~7 µs here), so the
 * queries that every pull or authenticated request runs are written with the builder as usual, compiled at
 * start-up for the running dialect, and executed with fresh parameters.
 *
 * `build` receives one placeholder per argument; each parameter of the compiled query must be one of those
 * placeholders or a constant of the query itself.
 */
export function hotQuery<A extends unknown[], R>(db: Db, arity: A['length'], build: (...args: A) => Compilable<R>) {
  const placeholders = Array.from({ length: arity }, (_, i) => `\u0000hot-query-arg-${i}\u0000`);
  const compiled = build(...(placeholders as unknown as A)).compile();
  if (!preparedNames.has(compiled.sql)) preparedNames.set(compiled.sql, `svcenv_hot_${preparedNames.size}`);
  const name = preparedNames.get(compiled.sql)!;
  // For each compiled parameter: the index of the argument it takes, or -1 for a constant kept as compiled.
  const argIndex = compiled.parameters.map((p) => placeholders.indexOf(p as string));
  const direct = directRunners.get(db)?.(compiled.sql, name);
  return async (...args: A): Promise<R[]> => {
    const params = argIndex.map((i, n) => (i >= 0 ? args[i] : compiled.parameters[n]));
    if (direct) return (await direct(params)) as R[];
    return (await db.executeQuery<R>(CompiledQuery.raw(compiled.sql, params))).rows;
  };
}

/** Prepares one hot query (its SQL and the name it is prepared under): a function that runs it. */
export type HotQueryRunner = (sql: string, name: string) => (params: unknown[]) => Promise<unknown[]>;

const directRunners = new WeakMap<Db, HotQueryRunner>();

/**
 * Hot queries on `db` run through `runner` rather than Kysely's executor. On PostgreSQL (db/index.ts) that is
 * the pool itself: Kysely's connection hand-out, query id and result wrapping cost ~20 µs of a ~50 µs
 * authorization read here, a seventh of a conditional pull's CPU (ADR 0007). The rows must be the ones
 * Kysely would answer (server/test/hot-query.test.ts). A hot query built on a transaction's handle is not
 * registered here and runs through Kysely on the transaction's connection.
 */
export function runHotQueriesWith(db: Db, runner: HotQueryRunner): void {
  directRunners.set(db, runner);
}
