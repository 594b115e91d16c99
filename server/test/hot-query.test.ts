import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotQuery } from '../src/db/hot-query.js';
import { createProject, dialectName, signupUser, startApp, type TestApp } from './harness.js';

/**
 * Per-request queries compiled once (db/hot-query.ts): on PostgreSQL those of the root handle run on the pool
 * itself, as named prepared statements, and those of a transaction's handle on its connection (ADR 0007).
 */
describe(`hot queries (${dialectName})`, () => {
  let srv: TestApp;
  beforeAll(async () => {
    srv = await startApp();
  });
  afterAll(async () => {
    await srv.stop();
  });

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
    const [{ workspace_id: ws }] = (await db
      .selectFrom('projects')
      .select('workspace_id')
      .where('id', '=', a.id)
      .execute()) as [{ workspace_id: string }];
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
    const [{ workspace_id: ws }] = (await db
      .selectFrom('projects')
      .select('workspace_id')
      .where('id', '=', p.id)
      .execute()) as [{ workspace_id: string }];
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
});
