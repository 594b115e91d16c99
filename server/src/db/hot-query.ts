import { type Compilable, CompiledQuery, type Kysely, sql } from 'kysely';
import { GroupBatcher } from '../lib/group-batcher.js';
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
  const placeholders = argPlaceholders(arity);
  const compiled = build(...(placeholders as unknown as A)).compile();
  const { name, params: paramsOf } = prepared(compiled, placeholders);
  const direct = directRunners.get(db)?.(compiled.sql, name);
  return async (...args: A): Promise<R[]> => {
    const params = paramsOf(args);
    if (direct) return (await direct(params)) as R[];
    return (await db.executeQuery<R>(CompiledQuery.raw(compiled.sql, params))).rows;
  };
}

/**
 * hotQuery's compile-once for a query that runs inside a transaction: compiled at start-up as hotQuery's are,
 * then executed on the handle it is given (a transaction's, whose connection it must use: on SQLite a query
 * on the pool's handle would wait for the connection the transaction holds). A short write transaction made
 * per request (a D71 lease's record and activation, services/credentials/leases.ts) then pays its queries'
 * execution only, not their building and compiling.
 */
export function compiledStatement<A extends unknown[], R>(
  arity: A['length'],
  build: (...args: A) => Compilable<R>,
): (on: Db, ...args: A) => Promise<R[]> {
  const placeholders = argPlaceholders(arity);
  const compiled = build(...(placeholders as unknown as A)).compile();
  // Each compiled parameter: an argument's placeholder (its index) or a constant of the query (-1, kept).
  const argIndex = compiled.parameters.map((p) => placeholders.indexOf(p as string));
  const paramsOf = (args: readonly unknown[]) => argIndex.map((i, n) => (i >= 0 ? args[i] : compiled.parameters[n]));
  return async (on, ...args) => (await on.executeQuery<R>(CompiledQuery.raw(compiled.sql, paramsOf(args)))).rows;
}

/** One placeholder per argument, for `build` to put where the argument goes. */
const argPlaceholders = (arity: number) => Array.from({ length: arity }, (_, i) => `\u0000hot-query-arg-${i}\u0000`);

/**
 * The name `compiled` is prepared under (one per distinct SQL text), and its parameters for given arguments:
 * each compiled parameter is one of `placeholders`, replaced by its argument, or a constant kept as compiled.
 */
function prepared(compiled: CompiledQuery, placeholders: string[]) {
  if (!preparedNames.has(compiled.sql)) preparedNames.set(compiled.sql, `svcenv_hot_${preparedNames.size}`);
  const argIndex = compiled.parameters.map((p) => placeholders.indexOf(p as string));
  return {
    name: preparedNames.get(compiled.sql)!,
    params: (args: readonly unknown[]) => argIndex.map((i, n) => (i >= 0 ? args[i] : compiled.parameters[n])),
  };
}

/** Most calls one coalesced query answers at once, and most such queries of one kind in flight at once. */
const BATCH_MAX = 64;
const BATCHES_IN_FLIGHT = 2;

/**
 * A hot query that many requests run at the same moment with different text arguments (a pull's
 * authorization read, services/identity/authn.ts). Where hot queries run on the pool (PostgreSQL), the calls
 * of one event-loop turn, and those made while earlier batches are in flight, go together
 * (lib/group-batcher.ts) as one query over the arrays of their arguments: `unnest(...) with ordinality`
 * joined laterally to the query itself, each row tagged with the call it answers. The per-query cost
 * (protocol round trip, bind, execute, the client's queue) is then paid once per batch instead of once per
 * request, and calls of a batch with the same arguments are one lookup in it (ADR 0007, eleventh round).
 *
 * Each call's rows come from a query sent after the call was made, so they are exactly as fresh as a query
 * of its own would be: a token revoked or a member removed before the request arrived is seen (D9, D33).
 * A batch that fails is retried call by call, so a call whose arguments PostgreSQL refuses (a NUL character
 * in a text) fails only itself. Elsewhere (SQLite, whose epoch cache serves these rows; a transaction's
 * handle) it is `hotQuery`.
 */
export function coalescedHotQuery<A extends string[], R>(
  db: Db,
  arity: A['length'],
  build: (...args: A) => Compilable<R>,
): (...args: A) => Promise<R[]> {
  const runner = directRunners.get(db);
  if (!runner) return hotQuery<A, R>(db, arity, build);
  const placeholders = argPlaceholders(arity);
  const columns = Array.from({ length: arity }, (_, i) => `a${i}`);
  const inner = build(...(columns.map((c) => sql.ref(`w.${c}`)) as unknown as A));
  const compiled = sql`select w.n as batch_call, g.* from unnest(${sql.join(
    placeholders.map((p) => sql`cast(${p} as text[])`),
  )}) with ordinality as w(${sql.raw(columns.join(', '))}, n) cross join lateral (${inner}) as g`.compile(db);
  const { name, params: paramsOf } = prepared(compiled, placeholders);
  const run = runner(compiled.sql, name);
  const batcher = new GroupBatcher<A, R[]>(
    async (calls) => {
      // Calls with the same arguments (pulls of one environment with one token: a fleet of pods, an
      // operator's replicas) are read once and share the rows, as the epoch cache's readers do on SQLite.
      const distinct = new Map<string, number>();
      const unique: A[] = [];
      const readOf = calls.map((args) => {
        const key = JSON.stringify(args);
        let n = distinct.get(key);
        if (n === undefined) {
          n = unique.push(args) - 1;
          distinct.set(key, n);
        }
        return n;
      });
      // Each argument as the array of that argument of every distinct call.
      const params = paramsOf(placeholders.map((_, i) => unique.map((args) => args[i])));
      const rowsOf = unique.map((): R[] => []);
      for (const row of (await run(params)) as ({ batch_call: number } & R)[]) {
        const { batch_call, ...rest } = row;
        rowsOf[batch_call - 1]!.push(rest as R);
      }
      // Each call its own array: a caller that filters or sorts its rows leaves the others' alone.
      return readOf.map((n) => rowsOf[n]!.slice());
    },
    BATCHES_IN_FLIGHT,
    BATCH_MAX,
  );
  return (...args: A) => batcher.add(args);
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
