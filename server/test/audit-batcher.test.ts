import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, dialectName, pullAuditRow, signupUser, startApp, type TestApp } from './harness.js';

/** The group commit of read audits (services/core/audit.ts) on the real database. */
describe(`audit group commit (${dialectName})`, () => {
  let srv: TestApp;
  beforeAll(async () => {
    srv = await startApp();
  });
  afterAll(async () => {
    await srv.stop();
  });

  it('commits rows appended together in one go, and one bad row fails only its own caller', async () => {
    const { jwt } = await signupUser(srv, 'Audit');
    const p = await createProject(srv, jwt);
    const [ws] = await srv.db.db.selectFrom('projects').select('workspace_id').where('id', '=', p.id).execute();
    const row = (projectId: string, key: string) => pullAuditRow(ws!.workspace_id, projectId, key);
    // A row the database refuses. SQLite: a project deleted between authorization and the audit write, whose
    // row breaks the inbox's foreign key. PostgreSQL's inbox has none (migration
    // 2026-11-29T20-audit-inbox-unchecked): a NUL character, which it refuses in any text.
    const bad = dialectName === 'postgres' ? row(p.id, 'bad\u0000') : row(randomUUID(), 'orphan');
    const results = await Promise.allSettled([
      srv.deps.auditBatcher.append(row(p.id, 'first')),
      srv.deps.auditBatcher.append(bad),
      srv.deps.auditBatcher.append(row(p.id, 'last')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    await srv.db.flushAuditInbox(); // as every reader of audit_logs does (the audit inbox, ADR 0007)
    const keys = await srv.db.db
      .selectFrom('audit_logs')
      .select('target_key')
      .where('project_id', '=', p.id)
      .where('action', '=', 'vars.pull')
      .execute();
    // After a failed batch each row is retried alone and, on PostgreSQL, concurrently: independent callers'
    // rows are both committed, in whichever order their retries reach the database.
    expect(keys.map((k) => k.target_key).sort()).toEqual(['first', 'last']);
  });

  it.skipIf(dialectName !== 'postgres')(
    'commits the entry of a project deleted meanwhile, which the move then drops with it (PostgreSQL)',
    async () => {
      const { jwt } = await signupUser(srv, 'Orphan');
      const p = await createProject(srv, jwt);
      const [ws] = await srv.db.db.selectFrom('projects').select('workspace_id').where('id', '=', p.id).execute();
      const gone = randomUUID();
      await srv.deps.auditBatcher.append(pullAuditRow(ws!.workspace_id, gone, 'orphan'));
      await srv.db.flushAuditInbox();
      expect(await srv.db.db.selectFrom('audit_logs').select('id').where('project_id', '=', gone).execute()).toEqual(
        [],
      );
    },
  );

  it('stores every text of a batch as given: quotes, backslashes, braces, commas, NULL-like text, empty', async () => {
    // PostgreSQL receives a batch as one array per column (db/index.ts): each element must arrive as written.
    const { jwt } = await signupUser(srv, 'Texts');
    const p = await createProject(srv, jwt);
    const [ws] = await srv.db.db.selectFrom('projects').select('workspace_id').where('id', '=', p.id).execute();
    const texts = ['a "quoted", {braced} \\ back\\slash', 'NULL', '', "it's ünïcødé ✓\nnew line", '{}', ' , '];
    const rows = texts.map((t, i) => ({
      workspace_id: ws!.workspace_id,
      project_id: p.id,
      action: 'texts.check',
      target_key: t,
      target_env: i % 2 ? null : t,
      actor_id: null,
      actor_type: 'token' as const,
      detail: i === 1 ? null : JSON.stringify({ t }),
      created_at: new Date(Date.UTC(2026, 10, 28, 1, 2, 3, i)).toISOString(),
    }));
    await srv.db.insertAuditRows(rows);
    await srv.db.flushAuditInbox();
    const back = await srv.db.db
      .selectFrom('audit_logs')
      .select(['target_key', 'target_env', 'detail', 'created_at', 'project_id'])
      .where('action', '=', 'texts.check')
      .orderBy('id')
      .execute();
    expect(back).toEqual(
      rows.map((r) => ({
        target_key: r.target_key,
        target_env: r.target_env,
        detail: r.detail,
        created_at: r.created_at,
        project_id: r.project_id,
      })),
    );
  });
});
