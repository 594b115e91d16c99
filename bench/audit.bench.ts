/**
 * D64: the audit log at any size. For SQLite, then PostgreSQL (BENCH_PG_URL, default the test database, in a
 * fresh schema dropped after): the real server in this process, its workspace's log filled with
 * BENCH_AUDIT_ENTRIES entries (default 10,000,000) by bulk SQL, shaped like a fleet of `run --watch` clients:
 * pulls by 1,000 tokens, a write by the owner every 10,000 entries, one `token.create` every 1,000,000, spread
 * over the days 1.4 million entries a day would take. Prints:
 *   - each filter's first page (median of BENCH_AUDIT_SAMPLES requests) beside the unfiltered first page, the
 *     floor (goal: at most 3 times it), with the index its plan reads;
 *   - a pull's latency on that log beside the same pull on the empty log (median, p99);
 *   - the bytes each entry costs on disk (SQLite: growth of the database file; PostgreSQL:
 *     pg_total_relation_size of audit_logs, indexes included), divided by the entries;
 *   - a pull's p99 while the oldest BENCH_AUDIT_PRUNE entries (default 1,000,000) are pruned by the D64 job,
 *     beside the same pulls with no pruning.
 * The fill drops the audit indexes and builds them again after (as CREATE INDEX does it: sorted, dense),
 * because maintaining eight indexes row by row would make the fill take hours; the size is therefore that of
 * freshly built indexes, somewhat below an index grown entry by entry.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { pruneAudit } from '../server/src/jobs/audit-prune.js';
import { DAY_MS } from '../server/src/lib/clock.js';
import { auditPageQuery } from '../server/src/services/core/audit.js';
import {
  createProject,
  createToken,
  explainPlan,
  freshPgSchema,
  signupUser,
  startApp,
  type TestApp,
  upsert,
} from '../server/test/harness.js';

const N = Number(process.env.BENCH_AUDIT_ENTRIES ?? 10_000_000);
const SAMPLES = Number(process.env.BENCH_AUDIT_SAMPLES ?? 15);
const PULLS = Number(process.env.BENCH_AUDIT_PULLS ?? 300);
const PRUNE = Math.min(N, Number(process.env.BENCH_AUDIT_PRUNE ?? 1_000_000));
/** Audited pulls written through the server to measure what one costs on disk, from this many tokens. */
const SIZE_PULLS = Number(process.env.BENCH_AUDIT_SIZE_PULLS ?? 20_000);
const SIZE_TOKENS = 50;
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PER_DAY = 1_400_000;

const stats = (times: number[]) => {
  const s = [...times].sort((a, b) => a - b);
  return { median: s[s.length >> 1]!, p99: s[Math.min(s.length - 1, Math.floor(s.length * 0.99))]! };
};
const ms = (x: number) => `${x.toFixed(1).padStart(7)} ms`;

/**
 * Where an entry's bytes go: the table and each of its indexes (SQLite: the dbstat virtual table, pages
 * included with their free space; PostgreSQL: pg_relation_size), and each column's average stored size.
 */
async function breakdown(app: TestApp, entries: number) {
  const db = app.db.db;
  const per = (bytes: number) => (bytes / entries).toFixed(1).padStart(7);
  let objects: { name: string; bytes: number }[];
  let columns: { name: string; bytes: number }[];
  const names = (
    await db
      .selectFrom('audit_logs')
      .selectAll()
      .limit(1)
      .execute()
      .then((r) => Object.keys(r[0] ?? {}))
  ).filter(Boolean);
  if (app.db.dialect === 'sqlite') {
    objects = (
      await sql<{ name: string; bytes: number }>`select name, sum(pgsize) as bytes from dbstat
        where name = 'audit_logs' or name in (select name from sqlite_master where tbl_name = 'audit_logs' and type = 'index')
        group by name order by name = 'audit_logs' desc, name`.execute(db)
    ).rows;
    // What each value takes in the record: integers by their size class, text and blobs by their length.
    const size = (c: string) =>
      sql`avg(case typeof(${sql.ref(c)}) when 'null' then 0 when 'integer' then (case when abs(${sql.ref(c)}) < 2 then 0 when abs(${sql.ref(c)}) < 128 then 1 when abs(${sql.ref(c)}) < 32768 then 2 when abs(${sql.ref(c)}) < 8388608 then 3 when abs(${sql.ref(c)}) < 2147483648 then 4 when abs(${sql.ref(c)}) < 140737488355328 then 6 else 8 end) else length(cast(${sql.ref(c)} as blob)) end)`;
    const row = (
      await sql<
        Record<string, number>
      >`select ${sql.join(names.map((c) => sql`${size(c)} as ${sql.ref(c)}`))} from audit_logs`.execute(db)
    ).rows[0]!;
    columns = names.map((name) => ({ name, bytes: Number(row[name]) }));
  } else {
    objects = (
      await sql<{
        name: string;
        bytes: string;
      }>`select c.relname as name, pg_relation_size(c.oid) as bytes from pg_class c
        where c.oid = 'audit_logs'::regclass or c.oid in (select indexrelid from pg_index where indrelid = 'audit_logs'::regclass)
        order by c.relkind <> 'r', c.relname`.execute(db)
    ).rows.map((r) => ({ name: r.name, bytes: Number(r.bytes) }));
    const row = (
      await sql<
        Record<string, string>
      >`select ${sql.join(names.map((c) => sql`avg(coalesce(pg_column_size(${sql.ref(c)}), 0)) as ${sql.ref(c)}`))}, avg(pg_column_size(a.*)) as whole from audit_logs a`.execute(
        db,
      )
    ).rows[0]!;
    columns = [...names, 'whole'].map((name) => ({ name, bytes: Number(row[name]) }));
  }
  console.log(`  bytes per entry, by object (${entries.toLocaleString('en')} entries):`);
  for (const o of objects) console.log(`    ${o.name.padEnd(36)} ${per(o.bytes)}`);
  console.log(`    ${'total'.padEnd(36)} ${per(objects.reduce((s, o) => s + o.bytes, 0))}`);
  console.log(`  average stored size per column: ${columns.map((c) => `${c.name} ${c.bytes.toFixed(1)}`).join(', ')}`);
}

async function bench(dialect: 'sqlite' | 'postgres') {
  const schema = dialect === 'postgres' ? await freshPgSchema(PG_URL) : null;
  const app: TestApp = await startApp({
    env: { DEFAULT_PLAN: 'enterprise', LOG_LEVEL: 'warn' },
    ...(schema ? { databaseUrl: schema.url } : {}),
  });
  try {
    await app.deps.jobs.stop();
    const owner = await signupUser(app, 'Olivia');
    const p = await createProject(app, owner.jwt, { name: 'fleet' });
    await upsert(
      app,
      owner.jwt,
      p.id,
      ['dev'],
      Array.from({ length: 20 }, (_, i) => ({ key: `VAR_${i}`, value: `value-${i}`, type: 'plain' })),
    );
    const { token } = await createToken(app, owner.jwt, { scope: 'read' });
    const ws = (
      await app.db.db.selectFrom('projects').select('workspace_id').where('id', '=', p.id).executeTakeFirstOrThrow()
    ).workspace_id;
    const pullPath = `/v1/projects/${p.id}/envs/dev/pull`;
    const pulls = async (n: number) => {
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const t = performance.now();
        const res = await app.request('GET', pullPath, { token });
        times.push(performance.now() - t);
        if (res.status !== 200) throw new Error(`pull: ${res.status} ${res.text}`);
      }
      return times;
    };
    await pulls(20);
    const emptyPull = stats(await pulls(PULLS));

    const size = async () => {
      if (dialect === 'postgres') {
        const r = await sql<{ n: string }>`select pg_total_relation_size('audit_logs') as n`.execute(app.db.db);
        return Number(r.rows[0]!.n);
      }
      await sql`pragma wal_checkpoint(truncate)`.execute(app.db.db);
      return statSync(join(app.dataDir, 'svcenv.db')).size;
    };

    // What an audited pull costs on disk, written as the server writes it: SIZE_PULLS pulls (200, each
    // audited) by SIZE_TOKENS tokens in turn, 8 in flight, on the otherwise empty log; the growth of the
    // database (SQLite: the file after a checkpoint; PostgreSQL: audit_logs with its indexes).
    if (SIZE_PULLS > 0) {
      const tokens = [token];
      while (tokens.length < SIZE_TOKENS) tokens.push((await createToken(app, owner.jwt, { scope: 'read' })).token);
      const entriesBefore = Number(
        (await sql<{ n: number }>`select count(*) as n from audit_logs`.execute(app.db.db)).rows[0]!.n,
      );
      const before = await size();
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < SIZE_PULLS) {
            const i = next++;
            const res = await app.request('GET', pullPath, { token: tokens[i % tokens.length] });
            if (res.status !== 200) throw new Error(`pull: ${res.status} ${res.text}`);
          }
        }),
      );
      const after = await size();
      const written =
        Number((await sql<{ n: number }>`select count(*) as n from audit_logs`.execute(app.db.db)).rows[0]!.n) -
        entriesBefore;
      console.log(
        `\n--- ${dialect}: ${written.toLocaleString('en')} audited pulls through the server: ${((after - before) / written).toFixed(0)} bytes on disk each`,
      );
      await breakdown(app, written + entriesBefore);
      await sql`delete from audit_logs`.execute(app.db.db);
      if (dialect === 'postgres') await sql`vacuum full audit_logs`.execute(app.db.db);
      else await sql`vacuum`.execute(app.db.db);
    }
    const sizeBefore = await size();

    // The fill: entry i (1..N) at `start + i * span / N`, newest last, so that the log ends now.
    const now = Date.now();
    const spanMs = (N / PER_DAY) * DAY_MS;
    const start = now - spanMs;
    const t0 = performance.now();
    const indexes =
      dialect === 'postgres'
        ? (
            await sql<{
              sql: string;
              name: string;
            }>`select indexdef as sql, indexname as name from pg_indexes where tablename = 'audit_logs' and schemaname = current_schema() and indexname <> 'audit_logs_pkey'`.execute(
              app.db.db,
            )
          ).rows
        : (
            await sql<{
              sql: string;
              name: string;
            }>`select sql, name from sqlite_master where type = 'index' and tbl_name = 'audit_logs' and sql is not null`.execute(
              app.db.db,
            )
          ).rows;
    for (const ix of indexes) await sql`drop index ${sql.id(ix.name)}`.execute(app.db.db);
    const actorOf = (i: string) =>
      dialect === 'postgres'
        ? sql`'00000000-0000-4000-8000-' || lpad((${sql.raw(i)} % 1000)::text, 12, '0')`
        : sql`printf('00000000-0000-4000-8000-%012d', ${sql.raw(i)} % 1000)`;
    const at = (i: string) =>
      dialect === 'postgres'
        ? sql`date_trunc('milliseconds', to_timestamp((${start}::float8 + ${sql.raw(i)} * ${spanMs / N}::float8) / 1000.0))`
        : sql`strftime('%Y-%m-%dT%H:%M:%fZ', (${start} + ${sql.raw(i)} * ${spanMs / N}) / 1000.0, 'unixepoch')`;
    const rows = (i: string) => sql`select ${ws}, ${p.id},
        case when ${sql.raw(i)} % 1000000 = 500000 then 'token.create' when ${sql.raw(i)} % 10000 = 0 then 'var.update' else 'vars.pull' end,
        case when ${sql.raw(i)} % 10000 = 0 then 'VAR_1' else null end, 'dev',
        case when ${sql.raw(i)} % 10000 = 0 then ${owner.user.id} else ${actorOf(i)} end,
        case when ${sql.raw(i)} % 10000 = 0 then 'user' else 'token' end,
        case when ${sql.raw(i)} % 10000 = 0 then '{"revision":2}' else '{"format":"dotenv"}' end,
        ${at(i)}`;
    const cols = sql`(workspace_id, project_id, action, target_key, target_env, actor_id, actor_type, detail, created_at)`;
    if (dialect === 'postgres') {
      await sql`insert into audit_logs ${cols} ${rows('g')} from generate_series(1, ${N}) g`.execute(app.db.db);
    } else {
      // One transaction per million rows keeps the WAL bounded.
      for (let done = 0; done < N; done += 1_000_000) {
        const to = Math.min(N, done + 1_000_000);
        await sql`with recursive s(i) as (select ${done + 1} union all select i + 1 from s where i < ${to}) insert into audit_logs ${cols} ${rows('i')} from s`.execute(
          app.db.db,
        );
      }
    }
    const filled = performance.now();
    for (const ix of indexes) await sql.raw(ix.sql).execute(app.db.db);
    if (dialect === 'postgres') await sql`analyze audit_logs`.execute(app.db.db);
    const indexed = performance.now();
    const bytes = ((await size()) - sizeBefore) / N;
    console.log(
      `\n--- ${dialect}: ${N.toLocaleString('en')} entries filled in ${((filled - t0) / 1000).toFixed(0)} s, indexes built in ${((indexed - filled) / 1000).toFixed(0)} s`,
    );
    console.log(`bytes on disk per entry (rows and every index, freshly built): ${bytes.toFixed(0)}`);
    await breakdown(app, N);

    // First pages. The rare action: 'token.create' (N / 1,000,000 entries); the rare actor: the owner (one in
    // 10,000); the old narrow window: one hour at a tenth of the log's age.
    const day = (f: number) => new Date(start + f * spanMs).toISOString();
    const windowFrom = day(0.1);
    const windowTo = new Date(start + 0.1 * spanMs + 3_600_000).toISOString();
    const cases: [string, boolean, Record<string, string>][] = [
      ['workspace, unfiltered (floor)', false, {}],
      ['workspace, action=var.update (1 in 10,000)', false, { action: 'var.update' }],
      ['workspace, action=token.create (rare)', false, { action: 'token.create' }],
      ['workspace, actor=owner (1 in 10,000)', false, { actor: owner.user.id }],
      ['workspace, an hour at 10% of the age', false, { from: windowFrom, to: windowTo }],
      ['workspace, from 10% of the age', false, { from: windowFrom }],
      ['workspace, to 10% of the age', false, { to: windowTo }],
      ['workspace, actor=owner + action=vars.pull (none)', false, { actor: owner.user.id, action: 'vars.pull' }],
      [
        'workspace, action + actor + hour',
        false,
        { action: 'var.update', actor: owner.user.id, from: windowFrom, to: windowTo },
      ],
      ['project, unfiltered', true, {}],
      ['project, action=token.create', true, { action: 'token.create' }],
      ['project, actor=owner', true, { actor: owner.user.id }],
      ['project, an hour at 10% of the age', true, { from: windowFrom, to: windowTo }],
      [
        'project, actor=owner + action=var.update + hour',
        true,
        { actor: owner.user.id, action: 'var.update', from: windowFrom, to: windowTo },
      ],
    ];
    // On SQLite the fill and the index builds held this process's event loop for minutes: the client's pooled
    // keep-alive connection may have been closed by the server meanwhile, and its first reuse reset.
    await app.request('GET', pullPath, { token }).catch(() => undefined);
    let floor = 0;
    for (const [label, project, q] of cases) {
      const url = `${project ? `/v1/projects/${p.id}/audit` : '/v1/workspace/audit'}?${new URLSearchParams({ limit: '50', ...q })}`;
      // One unmeasured request first: the floor is measured first and would otherwise carry the warm-up.
      await app.request('GET', url, { token: owner.jwt });
      const times: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const t = performance.now();
        const res = await app.request('GET', url, { token: owner.jwt });
        times.push(performance.now() - t);
        if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.text}`);
      }
      const m = stats(times).median;
      if (!floor) floor = m;
      const plan = await explainPlan(
        app.db,
        auditPageQuery(app.db, project ? { workspaceId: ws, projectId: p.id } : { workspaceId: ws }, q, 51, null),
      );
      const used = /(?:INDEX|using) (audit_logs_\w+)/.exec(plan)?.[1] ?? plan.split('\n')[0];
      console.log(`${label.padEnd(52)} ${ms(m)}  ${(m / floor).toFixed(2).padStart(5)}x  ${used}`);
      if (process.env.BENCH_AUDIT_PLANS) console.log(plan);
    }

    await pulls(20);
    const bigPull = stats(await pulls(PULLS));
    console.log(`pull on the empty log:      median ${ms(emptyPull.median)}  p99 ${ms(emptyPull.p99)}`);
    console.log(`pull on ${N.toLocaleString('en')} entries: median ${ms(bigPull.median)}  p99 ${ms(bigPull.p99)}`);

    // Pruning: the oldest PRUNE entries fall behind the cutoff; pulls run while the job deletes them.
    const quiet = stats(await pulls(PULLS));
    const cutoffMs = start + ((PRUNE + 0.5) * spanMs) / N;
    let clockMs = now;
    let pruned = 0;
    const pruneStart = performance.now();
    const pruning = (async () => {
      while (pruned < PRUNE) {
        clockMs += 60_000;
        const done = await pruneAudit({
          handle: app.db,
          clock: { now: () => new Date(clockMs) },
          retentionDays: (clockMs - cutoffMs) / DAY_MS,
          holder: 'bench',
        });
        const n = done.reduce((s, d) => s + d.deleted, 0);
        if (n === 0) break;
        pruned += n;
      }
    })();
    const during: number[] = [];
    let done = false;
    void pruning.finally(() => {
      done = true;
    });
    while (!done) during.push(...(await pulls(10)));
    await pruning;
    const pruneSecs = (performance.now() - pruneStart) / 1000;
    const busy = stats(during);
    console.log(
      `pruned ${pruned.toLocaleString('en')} entries in ${pruneSecs.toFixed(0)} s (${Math.round(pruned / pruneSecs).toLocaleString('en')}/s)`,
    );
    console.log(`pull, no pruning:           median ${ms(quiet.median)}  p99 ${ms(quiet.p99)}  (${PULLS} pulls)`);
    console.log(`pull while pruning:         median ${ms(busy.median)}  p99 ${ms(busy.p99)}  (${during.length} pulls)`);
  } finally {
    await app.stop();
    await schema?.drop();
  }
}

// BENCH_AUDIT_DB=sqlite or postgres runs one (BENCH_AUDIT_SQLITE_ONLY=true: SQLite alone, as before).
const only = process.env.BENCH_AUDIT_DB ?? (process.env.BENCH_AUDIT_SQLITE_ONLY === 'true' ? 'sqlite' : undefined);
if (only !== 'postgres') await bench('sqlite');
if (only !== 'sqlite') await bench('postgres');
