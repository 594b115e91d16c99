import { type Compilable, CompiledQuery, type Kysely, sql } from 'kysely';
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

/** Most calls one coalesced query answers at once, and most such queries of one kind in flight at once. */
const BATCH_MAX = 64;
const BATCHES_IN_FLIGHT = 2;

/**
 * A hot query that many requests run at the same moment with different text arguments (a pull's
 * authorization read, services/identity/authn.ts). Where hot queries run on the pool (PostgreSQL), calls
 * made while earlier ones are in flight wait for one of those to end and then go together, as one query over
 * the arrays of their arguments: `unnest(...) with ordinality` joined laterally to the query itself, each
 * row tagged with the call it answers. The per-query cost (protocol round trip, bind, execute, the client's
 * queue) is then paid once per batch instead of once per request (ADR 0007).
 *
 * Each call's rows come from a query sent after the call was made, so they are exactly as fresh as a query
 * of its own would be: a token revoked or a member removed before the request arrived is seen (D9, D33).
 * A call whose arguments PostgreSQL would refuse as text (a NUL character: a request's path may carry one)
 * runs alone, so that one client's malformed request cannot fail the others it would have shared a batch
 * with. Elsewhere (SQLite, whose epoch cache serves these rows; a transaction's handle) it is `hotQuery`.
 */
export function coalescedHotQuery<A extends string[], R>(
  db: Db,
  arity: A['length'],
  build: (...args: A) => Compilable<R>,
): (...args: A) => Promise<R[]> {
  const single = hotQuery<A, R>(db, arity, build);
  const runner = directRunners.get(db);
  if (!runner) return single;
  const placeholders = Array.from({ length: arity }, (_, i) => `\u0000hot-query-args-${i}\u0000`);
  const columns = Array.from({ length: arity }, (_, i) => `a${i}`);
  const inner = build(...(columns.map((c) => sql.ref(`w.${c}`)) as unknown as A));
  const compiled = sql`select w.n as batch_call, g.* from unnest(${sql.join(
    placeholders.map((p) => sql`cast(${p} as text[])`),
  )}) with ordinality as w(${sql.raw(columns.join(', '))}, n) cross join lateral (${inner}) as g`.compile(db);
  if (!preparedNames.has(compiled.sql)) preparedNames.set(compiled.sql, `svcenv_hot_${preparedNames.size}`);
  const argIndex = compiled.parameters.map((p) => placeholders.indexOf(p as string));
  const run = runner(compiled.sql, preparedNames.get(compiled.sql)!);
  const batcher = new Batcher<R>(async (calls) => {
    const params = argIndex.map((i, n) => (i >= 0 ? calls.map((args) => args[i]) : compiled.parameters[n]));
    const answers = calls.map((): R[] => []);
    for (const row of (await run(params)) as ({ batch_call: number } & R)[]) {
      const { batch_call, ...rest } = row;
      answers[batch_call - 1]!.push(rest as R);
    }
    return answers;
  });
  return (...args: A) => (args.some((a) => a.includes('\u0000')) ? single(...args) : batcher.load(args));
}

/** Calls waiting for a coalesced query (coalescedHotQuery), sent in batches. */
class Batcher<R> {
  private waiting: { args: string[]; resolve: (rows: R[]) => void; reject: (e: unknown) => void }[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(private readonly run: (calls: string[][]) => Promise<R[][]>) {}

  load(args: string[]): Promise<R[]> {
    return new Promise<R[]>((resolve, reject) => {
      this.waiting.push({ args, resolve, reject });
      // The first call waits for the end of this turn of the event loop, so that requests read from the
      // sockets in the same turn go together; later ones for a batch in flight to end.
      if (!this.scheduled && this.inFlight < BATCHES_IN_FLIGHT) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.send();
        });
      }
    });
  }

  private send(): void {
    while (this.waiting.length > 0 && this.inFlight < BATCHES_IN_FLIGHT) {
      const batch = this.waiting.splice(0, BATCH_MAX);
      this.inFlight++;
      this.run(batch.map((c) => c.args))
        .then(
          (answers) => {
            for (const [i, c] of batch.entries()) c.resolve(answers[i]!);
          },
          (e: unknown) => {
            for (const c of batch) c.reject(e);
          },
        )
        .finally(() => {
          this.inFlight--;
          this.send();
        });
    }
  }
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
