/**
 * D64: every filter of both audit endpoints is served by an index (the plan of each combination, on SQLite and
 * PostgreSQL), and the retention job deletes old entries in batches and records each run per workspace.
 */
import { randomUUID } from 'node:crypto';
import { auditPage, sessionResponse } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { presentAuditEntry, selectAuditEntries } from '../src/db/audit-entries.js';
import * as compactKeys from '../src/db/migrations/2026-11-29T00-audit-compact-keys.js';
import * as portableKeys from '../src/db/migrations/2026-12-03T00-portable-audit-keys.js';
import { pruneAudit } from '../src/jobs/audit-prune.js';
import { streamBatchQuery } from '../src/jobs/audit-streams.js';
import { DAY_MS, ManualClock } from '../src/lib/clock.js';
import { type AuditFilters, auditPageQuery } from '../src/services/core/audit.js';
import {
  createProject,
  createToken,
  dialectName,
  explainPlan,
  signupUser,
  startApp,
  type TestApp,
  upsert,
} from './harness.js';

const WS = '00000000-0000-4000-8000-000000000001';
const PROJECT = '00000000-0000-4000-8000-000000000002';
const ACTOR = '00000000-0000-4000-8000-000000000003';

/** Every combination the dashboard offers (Audit.tsx): action, actor, from, to, in a project or the workspace. */
function combinations(): {
  name: string;
  scope: { workspaceId: string; projectId?: string };
  filters: AuditFilters;
  index: string;
}[] {
  const out = [];
  for (const project of [false, true]) {
    for (const action of [false, true]) {
      for (const actor of [false, true]) {
        for (const from of [false, true]) {
          for (const to of [false, true]) {
            const filters: AuditFilters = {
              ...(action ? { action: 'var.update' } : {}),
              ...(actor ? { actor: ACTOR } : {}),
              ...(from ? { from: '2026-01-01T00:00:00.000Z' } : {}),
              ...(to ? { to: '2026-01-02T00:00:00.000Z' } : {}),
            };
            const index = `audit_logs_${project ? 'project' : 'ws'}${actor ? '_actor' : ''}${action ? '_action' : ''}_at`;
            out.push({
              name: `${project ? 'project' : 'workspace'} ${Object.keys(filters).join('+') || 'unfiltered'}`,
              scope: project ? { workspaceId: WS, projectId: PROJECT } : { workspaceId: WS },
              filters,
              index,
            });
          }
        }
      }
    }
  }
  return out;
}

describe(`audit search plans (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  for (const c of combinations()) {
    for (const paged of [false, true]) {
      it(`${c.name}${paged ? ', a later page' : ''}: read off ${c.index}, no sort, no scan`, async () => {
        const before = paged ? { createdAt: '2026-01-01T12:00:00.000Z', id: 1000 } : null;
        const plan = await explainPlan(app.db, auditPageQuery(app.db, c.scope, c.filters, 51, before), {
          forceIndexes: true,
        });
        if (app.db.dialect === 'sqlite') {
          expect(plan).toMatch(new RegExp(`SEARCH a USING INDEX ${c.index} \\(`));
          expect(plan).not.toMatch(/TEMP B-TREE|SCAN a\b/);
        } else {
          expect(plan).toMatch(new RegExp(`Index Scan Backward using ${c.index} on audit_logs a`));
          expect(plan).not.toMatch(/Sort|Seq Scan on audit_logs/);
        }
      });
    }
  }
});

describe(`audit stream reads (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  it("a stream's batch is read off audit_logs_ws_id in id order, no sort, no scan (D65)", async () => {
    const plan = await explainPlan(app.db, streamBatchQuery(app.db.db, app.db.dialect, WS, 1000, 2000), {
      forceIndexes: true,
    });
    if (app.db.dialect === 'sqlite') {
      expect(plan).toMatch(/SEARCH a USING INDEX audit_logs_ws_id \(<expr>=\? AND rowid>\? AND rowid<\?\)/);
      expect(plan).not.toMatch(/TEMP B-TREE|SCAN a\b/);
    } else {
      expect(plan).toMatch(/Index Scan using audit_logs_ws_id on audit_logs a/);
      expect(plan).not.toMatch(/Sort|Seq Scan on audit_logs/);
    }
  });
});

describe(`audit retention (${dialectName})`, () => {
  const t0 = new Date('2026-12-01T00:00:00.000Z');
  const clock = new ManualClock(t0);
  let app: TestApp;
  let owner: { jwt: string; workspaceId: string };
  let other: { jwt: string; workspaceId: string };
  /** The entries the signups wrote (at t0), per workspace. */
  const signups = { owner: 0, other: 0 };

  const entry = (workspaceId: string, at: Date, action = 'vars.pull') => ({
    workspace_id: workspaceId,
    project_id: null,
    action,
    target_key: null,
    target_env: 'prod',
    actor_id: null,
    actor_type: 'token' as const,
    detail: '{"format":"dotenv"}',
    created_at: at.toISOString(),
  });
  // A reader of audit_logs flushes the audit inbox first, as the server's readers do (ADR 0007).
  const count = async (workspaceId: string) => {
    await app.db.flushAuditInbox();
    const { n } = await app.db.db
      .selectFrom('audit_logs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirstOrThrow();
    return Number(n);
  };
  const prunes = async (jwt: string) => {
    const res = await app.request('GET', '/v1/workspace/audit?action=audit.prune', { token: jwt, schema: auditPage });
    expect(res.status, res.text).toBe(200);
    return res.body.logs;
  };

  beforeAll(async () => {
    app = await startApp({ clock, env: { AUDIT_RETENTION_DAYS: '1.5' } });
    // The runs are driven by runDue below, with the fake clock.
    await app.deps.jobs.stop();
    for (const [name, set] of [
      ['Olivia', (v: typeof owner) => (owner = v)],
      ['Oscar', (v: typeof owner) => (other = v)],
    ] as const) {
      const u = await signupUser(app, name);
      const s = await app.request('GET', '/v1/auth/session', { token: u.jwt, schema: sessionResponse });
      set({ jwt: u.jwt, workspaceId: s.body.user.workspaceId });
    }
    signups.owner = await count(owner.workspaceId);
    signups.other = await count(other.workspaceId);
    // Olivia's workspace: 1,203 entries a day old (more than two batches), then 7 half a day old; Oscar's: 3 old.
    const day1 = new Date(t0.getTime() + 60_000);
    await app.db.insertAuditRows(
      Array.from({ length: 1203 }, (_, i) => entry(owner.workspaceId, new Date(day1.getTime() + i))),
    );
    await app.db.insertAuditRows(Array.from({ length: 3 }, () => entry(other.workspaceId, day1)));
    const later = new Date(t0.getTime() + DAY_MS);
    await app.db.insertAuditRows(Array.from({ length: 7 }, () => entry(owner.workspaceId, later)));
  });
  afterAll(() => app.stop());

  it('keeps everything younger than the retention (a first run deletes nothing, records nothing)', async () => {
    clock.set(new Date(t0.getTime() + 1.5 * DAY_MS));
    const before = await count(owner.workspaceId);
    await app.deps.jobs.runDue();
    expect(await count(owner.workspaceId)).toBe(before);
    expect(await prunes(owner.jwt)).toEqual([]);
  });

  it('deletes older entries in batches and records one audit.prune per workspace with the count and cutoff', async () => {
    // 1.5 days after the old entries and a minute: the signups (at t0) and the 1,203 + 3 are past the cutoff.
    const now = new Date(t0.getTime() + 1.5 * DAY_MS + 2 * 60_000 + 5_000);
    clock.set(now);
    await app.deps.jobs.runDue();
    const cutoff = new Date(now.getTime() - 1.5 * DAY_MS).toISOString();
    // What is left: the 7 younger entries, and the record of the run.
    expect(await count(owner.workspaceId)).toBe(8);
    const [mine] = await prunes(owner.jwt);
    expect(mine).toMatchObject({
      action: 'audit.prune',
      actorId: null,
      detail: { deleted: 1203 + signups.owner, cutoff },
    });
    expect(mine!.createdAt).toBe(now.toISOString());
    const theirs = await prunes(other.jwt);
    expect(theirs.map((e) => e.detail)).toEqual([{ deleted: 3 + signups.other, cutoff }]);
  });

  it('runs once a minute across instances: a run within the lease of another does nothing', async () => {
    await app.db.insertAuditRows([entry(owner.workspaceId, t0)]);
    clock.advance(60_000);
    const deps = { handle: app.db, clock, retentionDays: 1.5, pauseMs: 0 };
    const first = await pruneAudit({ ...deps, holder: 'instance-a' });
    await app.db.insertAuditRows([entry(owner.workspaceId, t0)]);
    expect(await pruneAudit({ ...deps, holder: 'instance-b' })).toEqual([]);
    expect(first).toEqual([{ workspaceId: owner.workspaceId, deleted: 1 }]);
    clock.advance(60_000);
    expect(await pruneAudit({ ...deps, holder: 'instance-b' })).toEqual([
      { workspaceId: owner.workspaceId, deleted: 1 },
    ]);
  });
});

describe(`audit compact keys (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  it('entries written before migrations 2026-11-29T00-audit-compact-keys and 2026-12-03T00-portable-audit-keys read the same after them', async () => {
    const owner = await signupUser(app, 'Olivia');
    const p = await createProject(app, owner.jwt, { name: 'before' });
    await upsert(app, owner.jwt, p.id, ['dev'], [{ key: 'A', value: 'a', type: 'plain' }]);
    const { token } = await createToken(app, owner.jwt, { scope: 'read' });
    // A pull's entry (the group commit), then back to the text keys (and, on PostgreSQL, created_at as text
    // in the ISO form every writer used), as a database of before the migration.
    const pull = await app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token });
    expect(pull.status, pull.text).toBe(200);
    await app.db.flushAuditInbox(); // out of the audit inbox, as any reader of audit_logs has it
    await portableKeys.down(app.db.db, app.db.dialect);
    await compactKeys.down(app.db.db, app.db.dialect);
    // Entries written then, as the writers of then wrote them (one multi-row insert; today's PostgreSQL group
    // commit sends typed arrays for the migrated columns), with ties in time and no project or actor.
    const { workspace_id } = await app.db.db
      .selectFrom('projects')
      .select('workspace_id')
      .where('id', '=', p.id)
      .executeTakeFirstOrThrow();
    const at = '2026-02-03T04:05:06.789Z';
    await app.db.db
      .insertInto('audit_logs')
      .values(
        Array.from({ length: 5 }, (_, i) => ({
          workspace_id,
          project_id: i % 2 ? p.id : null,
          action: i % 2 ? 'var.update' : 'token.create',
          target_key: i % 2 ? 'A' : null,
          target_env: i % 2 ? 'dev' : null,
          actor_id: i === 4 ? null : owner.user.id,
          actor_type: 'user' as const,
          detail: i === 3 ? null : JSON.stringify({ i }),
          created_at: i < 3 ? at : new Date(Date.parse(at) + i).toISOString(),
        })),
      )
      .execute();
    const read = async () =>
      (await selectAuditEntries(app.db.db).where('a.workspace_id', '=', workspace_id).orderBy('a.id').execute()).map(
        presentAuditEntry,
      );
    const before = await read();
    expect(before.length).toBeGreaterThan(7);

    await compactKeys.up(app.db.db, app.db.dialect);
    expect(await read()).toEqual(before);
    await portableKeys.up(app.db.db, app.db.dialect);
    expect(await read()).toEqual(before);
    // And through the API, page by page, newest first by (createdAt, id), filters on the compact keys.
    const pages = async (query: string) => {
      const out: unknown[] = [];
      let cursor = '';
      do {
        const res = await app.request(
          'GET',
          `/v1/workspace/audit?limit=2${query}${cursor ? `&cursor=${cursor}` : ''}`,
          {
            token: owner.jwt,
            schema: auditPage,
          },
        );
        expect(res.status, res.text).toBe(200);
        out.push(...res.body.logs);
        cursor = res.body.nextCursor;
      } while (cursor);
      return out;
    };
    const newestFirst = [...before].sort((x, y) => y.createdAt.localeCompare(x.createdAt) || y.id - x.id);
    expect(await pages('')).toEqual(newestFirst);
    expect(await pages(`&actor=${owner.user.id}&from=${at}&to=2026-02-03T04:05:06.790Z`)).toEqual(
      newestFirst.filter(
        (e) => e.actorId === owner.user.id && e.createdAt <= '2026-02-03T04:05:06.790Z' && e.createdAt >= at,
      ),
    );
  });
});

describe(`audit ids that share their short key (${dialectName})`, () => {
  // On SQLite an id's index key is its last 8 characters (migration 2026-12-03T00-portable-audit-keys); the
  // whole text decides (db/audit-keys.ts auditIdIs). Twins of a workspace, its project and its owner, made to
  // share those 8 characters, never reach the real ones' pages, streams or pruning.
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  it('keeps each to its own entries: pages and filters, project pages, a stream, the pruning', async () => {
    const owner = await signupUser(app, 'Olivia');
    const s = await app.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    const ws = s.body.user.workspaceId;
    const p = await createProject(app, owner.jwt, { name: 'real' });
    const twin = (id: string) => `${randomUUID().slice(0, 28)}${id.slice(28)}`;
    const twinWs = twin(ws);
    const twinActor = twin(owner.user.id);
    const db = app.db.db;
    await db
      .insertInto('workspaces')
      .values({
        id: twinWs,
        name: 'Twin',
        slug: `twin-${twinWs.slice(0, 8)}`,
        plan: 'free',
        operator_last_sync: null,
        created_at: new Date().toISOString(),
      })
      .execute();
    const project = await db.selectFrom('projects').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow();
    const twinProject = twin(p.id);
    await db
      .insertInto('projects')
      .values({ ...project, id: twinProject, workspace_id: twinWs, name: 'twin', slug: 'twin' })
      .execute();
    for (const [a, b] of [
      [ws, twinWs],
      [p.id, twinProject],
      [owner.user.id, twinActor],
    ]) {
      expect(a!.slice(28)).toBe(b!.slice(28));
      expect(a).not.toBe(b);
    }
    const at = new Date(Date.now() - 1000).toISOString();
    const row = (workspaceId: string, projectId: string, actorId: string, action: string) => ({
      workspace_id: workspaceId,
      project_id: projectId,
      action,
      target_key: 'K',
      target_env: 'dev',
      actor_id: actorId,
      actor_type: 'user' as const,
      detail: null,
      created_at: at,
    });
    // The twins' entries: in the twin workspace and project, by the owner's twin; and one in the real workspace
    // by the owner's twin.
    await app.db.insertAuditRows([
      ...Array.from({ length: 5 }, () => row(twinWs, twinProject, twinActor, 'var.update')),
      row(twinWs, twinProject, owner.user.id, 'var.update'),
      row(ws, p.id, twinActor, 'var.update'),
      row(ws, p.id, owner.user.id, 'var.update'),
    ]);
    const logs = async (path: string) => {
      const res = await app.request('GET', path, { token: owner.jwt, schema: auditPage });
      expect(res.status, res.text).toBe(200);
      return res.body.logs;
    };
    const unfiltered = await logs('/v1/workspace/audit?limit=200');
    expect(unfiltered.length).toBeGreaterThan(2);
    const realCount = Number(
      (
        await db
          .selectFrom('audit_logs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('workspace_id', '=', ws)
          .executeTakeFirstOrThrow()
      ).n,
    );
    expect(unfiltered).toHaveLength(realCount);
    const byOwner = await logs(`/v1/workspace/audit?limit=200&action=var.update&actor=${owner.user.id}`);
    expect(byOwner.map((e) => [e.project?.id, e.actorId])).toEqual([[p.id, owner.user.id]]);
    // Upper case reads as the same id, as the 16-byte keys and PostgreSQL's uuid read it.
    const upper = await logs(`/v1/workspace/audit?limit=200&actor=${owner.user.id.toUpperCase()}&action=var.update`);
    expect(upper.map((e) => e.actorId)).toEqual([owner.user.id]);
    const inProject = await logs(`/v1/projects/${p.id}/audit?limit=200&action=var.update`);
    expect(inProject.map((e) => e.actorId).sort()).toEqual([owner.user.id, twinActor].sort());
    const projectByOwner = await logs(`/v1/projects/${p.id}/audit?limit=200&actor=${owner.user.id}`);
    expect(projectByOwner.every((e) => e.actorId === owner.user.id && e.project?.id === p.id)).toBe(true);
    const batch = await streamBatchQuery(db, app.db.dialect, ws, 0, Number.MAX_SAFE_INTEGER).execute();
    expect(batch).toHaveLength(realCount);
    expect(new Set(batch.map((e) => e.workspace_id))).toEqual(new Set([ws]));

    // Pruning everything of the real workspace leaves the twin's entries.
    const twinCount = async () =>
      Number(
        (
          await db
            .selectFrom('audit_logs')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('workspace_id', '=', twinWs)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(await twinCount()).toBe(6);
    const future = new Date(Date.now() + DAY_MS).toISOString();
    let deleted = 0;
    for (let n = -1; n !== 0; deleted += n) n = await app.db.pruneAuditBatch(ws, future, 3);
    expect(deleted).toBe(realCount);
    expect(await twinCount()).toBe(6);
  });
});

describe('AUDIT_RETENTION_DAYS', () => {
  it('is unset by default, a positive number of days (fractions allowed), refused otherwise', () => {
    expect(loadConfig({}).AUDIT_RETENTION_DAYS).toBeUndefined();
    expect(loadConfig({ AUDIT_RETENTION_DAYS: '0.25' }).AUDIT_RETENTION_DAYS).toBe(0.25);
    expect(loadConfig({ AUDIT_RETENTION_DAYS: '90' }).AUDIT_RETENTION_DAYS).toBe(90);
    for (const bad of ['0', '-1', 'abc', '1e9']) {
      expect(() => loadConfig({ AUDIT_RETENTION_DAYS: bad })).toThrow(/AUDIT_RETENTION_DAYS/);
    }
  });
});
