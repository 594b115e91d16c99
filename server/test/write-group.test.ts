import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, dialectName, pullAuditRow, signupUser, startApp, type TestApp } from './harness.js';

/**
 * The group commit of short write transactions (runtime/write-group.ts), on the real database: jobs made at
 * once share a transaction on SQLite, each in a savepoint, and still succeed or fail alone.
 */
describe(`write group (${dialectName})`, () => {
  let srv: TestApp;
  beforeAll(async () => {
    srv = await startApp();
  });
  afterAll(async () => {
    await srv.stop();
  });

  /**
   * SQLite: the level every statement outside a write-group batch runs at. A batch commits at NORMAL and
   * fsyncs the WAL itself, off the request thread (DbHandle.transactionSyncedOffThread); left at NORMAL, the
   * connection would acknowledge every other write before it is durable.
   */
  const synchronous = async () =>
    (await sql<{ synchronous: number }>`pragma synchronous`.execute(srv.db.db)).rows[0]?.synchronous;

  const holders = (name: string, db = srv.db.db) =>
    db
      .selectFrom('task_leases')
      .select('holder')
      .where('name', 'like', `${name}%`)
      .orderBy('holder')
      .execute()
      .then((rows) => rows.map((r) => r.holder));

  it('rolls back only the job that threw; a later job sees an earlier one rows', async () => {
    const name = `wg-${randomUUID()}`;
    const until = new Date().toISOString();
    const results = await Promise.allSettled([
      srv.deps.writeGroup.run(async (trx) => {
        await trx
          .insertInto('task_leases')
          .values({ name: `${name}-a`, holder: 'a', until })
          .execute();
        return 'a';
      }),
      srv.deps.writeGroup.run(async (trx) => {
        await trx
          .insertInto('task_leases')
          .values({ name: `${name}-b`, holder: 'b', until })
          .execute();
        throw new Error('job b refuses');
      }),
      srv.deps.writeGroup.run(async (trx) => {
        await trx
          .insertInto('task_leases')
          .values({ name: `${name}-c`, holder: 'c', until })
          .execute();
        // What a count-then-insert (a lease's maxLeases) relies on: on SQLite the jobs of one batch run one
        // after the other in one transaction, so this one sees the first job's row (b's was rolled back). (A
        // job reads through its own transaction: on SQLite the batch's holds the one connection.)
        return (await holders(name, trx)).length;
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ message: 'job b refuses' });
    if (dialectName === 'sqlite') {
      // Read through the batch's transaction; on PostgreSQL the reads of parallel transactions may not see it.
      expect((results[2] as PromiseFulfilledResult<unknown>).value).toBe(2);
    }
    expect(await holders(name)).toEqual(['a', 'c']);
    if (dialectName === 'sqlite') expect(await synchronous()).toBe(2); // FULL
  });

  it.skipIf(dialectName !== 'sqlite')(
    'runs every job again alone when the shared COMMIT fails, so only the bad one fails (SQLite)',
    async () => {
      const { jwt } = await signupUser(srv, 'Writegroup');
      const p = await createProject(srv, jwt);
      const [ws] = await srv.db.db.selectFrom('projects').select('workspace_id').where('id', '=', p.id).execute();
      const name = `wg-${randomUUID()}`;
      const until = new Date().toISOString();
      const good = (holder: string) =>
        srv.deps.writeGroup.run(async (trx) => {
          await trx
            .insertInto('task_leases')
            .values({ name: `${name}-${holder}`, holder, until })
            .execute();
        });
      // A foreign key checked only at COMMIT: the job itself succeeds, the transaction carrying it fails.
      const failsAtCommit = srv.deps.writeGroup.run(async (trx) => {
        await sql`pragma defer_foreign_keys = on`.execute(trx);
        await trx
          .insertInto('audit_logs')
          .values(pullAuditRow(ws!.workspace_id, randomUUID(), 'orphan'))
          .execute();
      });
      const results = await Promise.allSettled([good('a'), failsAtCommit, good('c')]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/i);
      expect(await holders(name)).toEqual(['a', 'c']);
      // A COMMIT that failed leaves its transaction open: rolled back, and the level FULL again.
      expect(await synchronous()).toBe(2);
      // And the connection takes the next write: the row is there.
      await srv.db.db
        .insertInto('task_leases')
        .values({ name: `${name}-after`, holder: 'after', until })
        .execute();
      expect(await holders(`${name}-after`)).toEqual(['after']);
    },
  );
});
