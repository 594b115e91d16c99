import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotQuery } from '../src/db/hot-query.js';
import { authnQueries } from '../src/runtime/credentials.js';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp } from './harness.js';

/**
 * Per-request queries compiled once (db/hot-query.ts): on PostgreSQL those of the root handle run on the pool
 * itself, as named prepared statements, and those of a transaction's handle on its connection (ADR 0007).
 */
/**
 * PostgreSQL's two pools (db/index.ts `openDb`), each connection set up before the pool hands it out
 * (`preparePooledConnection`): the hot queries' plans are generic, Kysely's are made with the values (under a
 * generic plan an audit page took 58 instead of 8 ms at 2 million entries), and neither compiles with JIT.
 * First in the file: `pg` warns once per process of a query sent while another runs on the same client (an
 * error in pg 9), so the check must see the app's first connections being made.
 */
describe.runIf(dialectName === 'postgres')('pooled PostgreSQL connections', () => {
  it('are set up before their first query: generic plans for hot queries only, no JIT, none sent beside another', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    const app = await startApp();
    try {
      const { db } = app.db;
      const settings = (handle: typeof db) =>
        handle.selectNoFrom([
          sql<string>`current_setting('plan_cache_mode')`.as('mode'),
          sql<string>`current_setting('jit')`.as('jit'),
          sql`pg_sleep(0.02)`.as('slept'),
        ]);
      // More at once than either pool has connections, so that each connection is made for one of these.
      const hot = hotQuery(db, 0, () => settings(db));
      const seenHot = await Promise.all(Array.from({ length: 25 }, () => hot()));
      expect(seenHot.map((rows) => [rows[0]!.mode, rows[0]!.jit])).toEqual(
        Array(25).fill(['force_generic_plan', 'off']),
      );
      const seen = await Promise.all(Array.from({ length: 25 }, () => settings(db).execute()));
      expect(seen.map((rows) => [rows[0]!.mode, rows[0]!.jit])).toEqual(Array(25).fill(['auto', 'off']));
      // A transaction takes a connection of Kysely's pool (the audit inbox's move runs in one).
      const inTransaction = await db.transaction().execute((trx) => settings(trx).execute());
      expect([inTransaction[0]!.mode, inTransaction[0]!.jit]).toEqual(['auto', 'off']);
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
      expect(warnings.filter((w) => w.includes('client.query()'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await app.stop();
    }
  });
});

describe(`hot queries (${dialectName})`, () => {
  let srv: TestApp;
  beforeAll(async () => {
    srv = await startApp();
  });
  afterAll(async () => {
    await srv.stop();
  });

  /** The workspace a project belongs to (each test signs up its own). */
  const workspaceOf = async (projectId: string) =>
    (
      await srv.db.db
        .selectFrom('projects')
        .select('workspace_id')
        .where('id', '=', projectId)
        .executeTakeFirstOrThrow()
    ).workspace_id;

  const projectById = (db: TestApp['db']['db']) =>
    hotQuery(db, 2, (id: string, workspaceId: string) =>
      db
        .selectFrom('projects')
        .select(['id', 'name', 'workspace_id', 'created_at'])
        .where('id', '=', id)
        .where('workspace_id', '=', workspaceId),
    );

  it('answers the rows Kysely answers, each call with its own arguments, on every pooled connection', async () => {
    const { jwt } = await signupUser(srv, 'Hot');
    const [a, b] = [await createProject(srv, jwt, { name: 'alpha' }), await createProject(srv, jwt, { name: 'beta' })];
    const { db } = srv.db;
    const ws = await workspaceOf(a.id);
    const byKysely = async (id: string) =>
      db
        .selectFrom('projects')
        .select(['id', 'name', 'workspace_id', 'created_at'])
        .where('id', '=', id)
        .where('workspace_id', '=', ws)
        .execute();
    const query = projectById(db);
    // More calls at once than the pool has connections: each connection prepares the statement once.
    const ids = Array.from({ length: 30 }, (_, i) => (i % 3 === 2 ? 'no-such-project' : i % 3 ? b.id : a.id));
    const answers = await Promise.all(ids.map((id) => query(id, ws)));
    expect(answers).toEqual(await Promise.all(ids.map(byKysely)));
    expect(answers.slice(0, 3).map((rows) => rows.map((r) => r.name))).toEqual([['alpha'], ['beta'], []]);
    // The workspace is an argument too: another workspace's caller gets nothing.
    expect(await query(a.id, 'another-workspace')).toEqual([]);
  });

  it("on a transaction's handle, runs inside that transaction", async () => {
    const { jwt } = await signupUser(srv, 'HotTrx');
    const p = await createProject(srv, jwt, { name: 'before' });
    const { db } = srv.db;
    const ws = await workspaceOf(p.id);
    const outside = projectById(db);
    let seenInside: string[] = [];
    let seenOutside: string[] = [];
    await db
      .transaction()
      .execute(async (trx) => {
        await trx.updateTable('projects').set({ name: 'renamed' }).where('id', '=', p.id).execute();
        seenInside = (await projectById(trx)(p.id, ws)).map((r) => r.name);
        // SQLite has one connection, which the transaction holds: only PostgreSQL can read beside it.
        if (dialectName === 'postgres') seenOutside = (await outside(p.id, ws)).map((r) => r.name);
        throw new Error('roll back');
      })
      .catch((e: Error) => expect(e.message).toBe('roll back'));
    expect(seenInside).toEqual(['renamed']);
    if (dialectName === 'postgres') expect(seenOutside).toEqual(['before']);
    expect((await outside(p.id, ws)).map((r) => r.name)).toEqual(['before']);
  });

  it('answers the authorization reads exactly as Kysely does: texts, numbers, NULLs, one row per override', async () => {
    // On PostgreSQL the root handle's hot queries come back as one JSON text per row (db/index.ts); a
    // transaction's handle runs the same compiled queries through Kysely and pg's column parsers.
    const { jwt, user } = await signupUser(srv, 'Grant');
    const p = await createProject(srv, jwt, { name: 'Zürich ✓ "quoted" \\ back' });
    const { token } = await createToken(srv, jwt, { scope: 'read', trustedCidrs: ['127.0.0.0/8', '::1/128'] });
    const { db } = srv.db;
    const envs = await db.selectFrom('environments').select(['id', 'name']).where('project_id', '=', p.id).execute();
    await db.deleteFrom('project_members').where('project_id', '=', p.id).execute();
    await db.insertInto('project_members').values({ project_id: p.id, user_id: user.id, role: 'Developer' }).execute();
    await db
      .insertInto('env_permissions')
      .values(
        envs
          .filter((e) => e.name !== 'prod')
          .map((e) => ({
            project_id: p.id,
            user_id: user.id,
            environment_id: e.id,
            permission: e.name === 'dev' ? ('read' as const) : ('none' as const),
          })),
      )
      .execute();
    await db
      .updateTable('environments')
      .set({ revision: 2 ** 31 - 1 })
      .where('project_id', '=', p.id)
      .execute();
    const ws = await workspaceOf(p.id);
    const prefix = token.slice(0, 16);
    const direct = authnQueries(db);
    const reads = (q: ReturnType<typeof authnQueries>) =>
      Promise.all([
        q.tokensWithGrant(prefix, p.id, 'dev'),
        q.tokensWithGrant(prefix, 'no-such-project', 'dev'),
        q.tokensWithGrant(prefix, p.id, 'no-such-env'),
        q.tokensWithGrantBySlug(prefix, p.slug, 'dev'),
        q.tokensByPrefix(prefix),
        q.sessionMember(user.id, ws),
      ]);
    const viaKysely = await db.transaction().execute((trx) => reads(authnQueries(trx)));
    const answered = await reads(direct);
    expect(answered).toEqual(viaKysely);
    const [grant, noProject, , bySlug] = answered;
    expect(bySlug).toEqual(grant);
    expect(grant.map((r) => r.o_permission).sort()).toEqual(['none', 'read']);
    expect(grant[0]).toMatchObject({
      p_name: 'Zürich ✓ "quoted" \\ back',
      member_role: 'Developer',
      e_revision: 2 ** 31 - 1,
    });
    expect(JSON.parse(grant[0]!.trusted_cidrs!)).toEqual(['127.0.0.0/8', '::1/128']);
    expect(noProject).toHaveLength(1);
    expect(noProject[0]).toMatchObject({ p_id: null, e_id: null, o_permission: null });
  });
});
