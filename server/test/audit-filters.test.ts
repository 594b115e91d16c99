/**
 * Audit entries name their actor, and both audit endpoints filter on the server by action, actor and time
 * (D36, ADR 0015), with the cursor paging the filtered list; over HTTP on SQLite and PostgreSQL.
 */
import { auditPage, sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';

type Entry = (typeof auditPage)['_output']['logs'][number];

describe(`audit names and filters (${dialectName})`, () => {
  let app: TestApp;
  const clock = new ManualClock(new Date('2026-12-01T10:00:00.000Z'));
  let owner: { jwt: string; id: string };
  let dev: { jwt: string; id: string };
  let projectId: string;
  let tokenId: string;
  let tokenName: string;

  const get = async (url: string, token = owner.jwt) => {
    const res = await app.request('GET', url, { token, schema: auditPage });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  /** Every entry of a filtered list, page by page with `limit`; also returns the page sizes. */
  const all = async (base: string, query: Record<string, string>, limit: number) => {
    const logs: Entry[] = [];
    const sizes: number[] = [];
    let cursor = '';
    do {
      const q = new URLSearchParams({ ...query, limit: String(limit), ...(cursor ? { cursor } : {}) });
      const page = await get(`${base}?${q}`);
      logs.push(...page.logs);
      sizes.push(page.logs.length);
      cursor = page.nextCursor;
    } while (cursor);
    return { logs, sizes };
  };

  beforeAll(async () => {
    app = await startApp({ clock, env: { DEFAULT_PLAN: 'team' } });
    const o = await signupUser(app, 'Olivia');
    owner = { jwt: o.jwt, id: o.user.id };
    const session = await app.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    const workspaceId = session.body.user.workspaceId;
    const p = await createProject(app, owner.jwt, { name: 'shop', envs: ['dev', 'prod'] });
    projectId = p.id;

    // A Developer in the workspace and the project.
    const d = await signupUser(app, 'Dana');
    expect(
      (
        await app.request('POST', '/v1/workspace/invites', {
          token: owner.jwt,
          body: { email: d.email, wsRole: 'Member' },
        })
      ).status,
    ).toBe(200);
    const sw = await app.request('POST', '/v1/auth/switch-workspace', {
      token: d.jwt,
      body: { workspaceId },
      schema: switchWorkspaceResponse,
    });
    dev = { jwt: sw.body.token, id: d.user.id };
    const added = await app.request('PUT', `/v1/projects/${projectId}/members/${dev.id}`, {
      token: owner.jwt,
      body: { role: 'Developer' },
    });
    expect(added.status).toBe(200);

    // Day 1 (Dec 1): the owner writes twice; day 2 (Dec 2): the developer writes three times, the owner once;
    // day 3 (Dec 3): a token pulls.
    await upsert(app, owner.jwt, projectId, ['dev'], [{ key: 'A', value: '1', type: 'plain' }]);
    clock.advance(60_000);
    await upsert(app, owner.jwt, projectId, ['dev'], [{ key: 'B', value: '2', type: 'plain' }]);
    clock.set(new Date('2026-12-02T09:00:00.000Z'));
    for (const key of ['C', 'D', 'E']) {
      await upsert(app, dev.jwt, projectId, ['dev'], [{ key, value: 'x', type: 'plain' }]);
      clock.advance(60_000);
    }
    const del = await app.request('DELETE', `/v1/projects/${projectId}/envs/dev/vars/A`, { token: owner.jwt });
    expect(del.status).toBe(204);
    clock.set(new Date('2026-12-03T23:30:00.000Z'));
    const tok = await createToken(app, owner.jwt, { name: 'ci-deploy', scope: 'read' });
    tokenId = tok.id;
    tokenName = tok.name;
    const pulled = await app.request('GET', `/v1/projects/${projectId}/envs/dev/pull`, { token: tok.token });
    expect(pulled.status).toBe(200);
    await app.deps.auditBatcher.drain();
  });
  afterAll(async () => {
    await app?.stop();
  });

  for (const where of ['project', 'workspace'] as const) {
    const base = () => (where === 'project' ? `/v1/projects/${projectId}/audit` : '/v1/workspace/audit');

    it(`names each actor: a user by name, a token as token:<name> (${where} log)`, async () => {
      const { logs } = await get(`${base()}?limit=200`);
      const byAction = (a: string) => logs.filter((l) => l.action === a);
      expect(byAction('vars.pull')).toEqual([
        expect.objectContaining({ actorType: 'token', actorId: tokenId, actorName: `token:${tokenName}` }),
      ]);
      const upserts = byAction('vars.bulk_upsert').map((l) => [l.actorId, l.actorName]);
      expect(upserts).toEqual([
        [dev.id, 'Dana'],
        [dev.id, 'Dana'],
        [dev.id, 'Dana'],
        [owner.id, 'Olivia'],
        [owner.id, 'Olivia'],
      ]);
      // Every entry with an actor has a name.
      expect(logs.filter((l) => l.actorId !== null && l.actorName === null)).toEqual([]);
    });

    it(`names each entry's project, and none for workspace entries (${where} log)`, async () => {
      const { logs } = await get(`${base()}?limit=200`);
      const shop = { id: projectId, name: 'shop', slug: 'shop' };
      expect(logs.filter((l) => l.action === 'vars.bulk_upsert').map((l) => l.project)).toEqual(Array(5).fill(shop));
      expect(logs.find((l) => l.action === 'vars.pull')?.project).toEqual(shop);
      if (where === 'workspace') {
        expect(logs.find((l) => l.action === 'token.create')?.project).toBeNull();
        expect(logs.find((l) => l.action === 'member.add')?.project).toBeNull();
      }
    });

    it(`filters by action and by actor on the server, the cursor paging the filtered list (${where} log)`, async () => {
      const upserts = await all(base(), { action: 'vars.bulk_upsert' }, 2);
      expect(upserts.logs.map((l) => l.action)).toEqual(Array(5).fill('vars.bulk_upsert'));
      // Full pages although other actions lie between the matches: 2, 2, 1.
      expect(upserts.sizes).toEqual([2, 2, 1]);
      const ids = upserts.logs.map((l) => l.id);
      expect(ids).toEqual([...ids].sort((a, b) => b - a));

      const byDev = await all(base(), { actor: dev.id }, 2);
      expect(byDev.logs.length).toBe(3);
      expect(byDev.logs.every((l) => l.actorId === dev.id)).toBe(true);

      const both = await get(`${base()}?${new URLSearchParams({ action: 'var.delete', actor: owner.id })}`);
      expect(both.logs.map((l) => [l.action, l.targetKey])).toEqual([['var.delete', 'A']]);
      expect(both.nextCursor).toBe('');

      const byToken = await get(`${base()}?actor=${tokenId}`);
      expect(byToken.logs.map((l) => l.action)).toEqual(['vars.pull']);

      const none = await get(`${base()}?action=webhook.create`);
      expect(none).toEqual({ logs: [], nextCursor: '' });
    });

    it(`filters by time: days are whole UTC days, date-times exact, both ends inclusive (${where} log)`, async () => {
      const day2 = await all(base(), { from: '2026-12-02', to: '2026-12-02' }, 200);
      expect(day2.logs.map((l) => l.action).sort()).toEqual([
        'var.delete',
        'vars.bulk_upsert',
        'vars.bulk_upsert',
        'vars.bulk_upsert',
      ]);
      expect(day2.logs.every((l) => l.createdAt.startsWith('2026-12-02'))).toBe(true);

      // Date-times with an offset: 10:01 on Dec 2 in +01:00 is 09:01Z, the second developer write.
      const exact = await get(
        `${base()}?${new URLSearchParams({ from: '2026-12-02T10:01:00+01:00', to: '2026-12-02T09:01:00.000Z' })}`,
      );
      expect(exact.logs.map((l) => [l.action, l.createdAt])).toEqual([
        ['vars.bulk_upsert', '2026-12-02T09:01:00.000Z'],
      ]);

      // Only `to`: everything up to the end of Dec 1; only `from`: Dec 3 on, with the filter and the cursor together.
      const upToDay1 = await all(base(), { to: '2026-12-01', action: 'vars.bulk_upsert' }, 1);
      expect(upToDay1.logs.map((l) => l.actorId)).toEqual([owner.id, owner.id]);
      expect(upToDay1.sizes).toEqual([1, 1]);
      const fromDay3 = await get(`${base()}?from=2026-12-03`);
      expect(fromDay3.logs.every((l) => l.createdAt >= '2026-12-03')).toBe(true);
      expect(fromDay3.logs.map((l) => l.action)).toContain('vars.pull');
      expect(fromDay3.logs.map((l) => l.action)).not.toContain('vars.bulk_upsert');

      // An empty range is an empty list, not an error; so is one at the ends of the years a time may have.
      expect((await get(`${base()}?from=2026-12-05&to=2026-12-04`)).logs).toEqual([]);
      expect((await get(`${base()}?from=9999-12-31T23:59:59.999Z`)).logs).toEqual([]);
      expect((await get(`${base()}?to=0001-01-01`)).logs).toEqual([]);
    });

    it(`refuses a bad filter with 400 VALIDATION naming the field (${where} log)`, async () => {
      const cases: [string, string][] = [
        ['from=yesterday', 'from'],
        ['from=2026-02-30', 'from'],
        ['to=2026-12-01T10:00:00', 'to'], // no time zone
        ['to=2026-13-01', 'to'],
        ['action=var', 'action'],
        ['action=VAR.UPDATE', 'action'],
        ['actor=someone', 'actor'],
        ['limit=0', 'limit'],
        ['since=2026-12-01', 'since'],
        // Years PostgreSQL's timestamptz cannot compare with (found by server/test/fuzz.test.ts: a 500 there).
        ['from=0000-01-01T00:00:00.000Z', 'from'],
        ['from=0000-06-01', 'from'],
        [`from=${encodeURIComponent('0001-01-01T00:30:00+01:00')}`, 'from'],
        [`to=${encodeURIComponent('9999-12-31T23:59:59.999-14:00')}`, 'to'],
        [`cursor=${Buffer.from('0000-01-01T00:00:00.000Z~1').toString('base64url')}`, 'cursor'],
      ];
      for (const [query, field] of cases) {
        const res = await app.request('GET', `${base()}?${query}`, { token: owner.jwt });
        expect(res.status, `${query}: ${res.text}`).toBe(400);
        expect(res.error, query).toMatchObject({ code: 'VALIDATION', field });
      }
    });
  }

  it('keeps who may read each log: the project log is for project Admins, the workspace log for Owners', async () => {
    const proj = await app.request('GET', `/v1/projects/${projectId}/audit?action=vars.bulk_upsert`, {
      token: dev.jwt,
    });
    expect(proj.status).toBe(403);
    const ws = await app.request('GET', `/v1/workspace/audit?actor=${dev.id}`, { token: dev.jwt });
    expect(ws.status).toBe(403);
  });

  it('keeps the project log to its project, whatever the filter', async () => {
    const other = await createProject(app, owner.jwt, { name: 'other', envs: ['dev'] });
    await upsert(app, owner.jwt, other.id, ['dev'], [{ key: 'Z', value: '1', type: 'plain' }]);
    const mine = await all(`/v1/projects/${projectId}/audit`, { action: 'vars.bulk_upsert', actor: owner.id }, 200);
    expect(mine.logs.length).toBe(2);
    const ws = await all('/v1/workspace/audit', { action: 'vars.bulk_upsert', actor: owner.id }, 200);
    expect(ws.logs.length).toBe(3);
  });
  it('names the people a detail names by id, a removed member too, in one look-up per page (detailNames)', async () => {
    const r = await signupUser(app, 'Rob');
    const inv = await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: r.email, wsRole: 'Member' },
    });
    expect(inv.status).toBe(200);
    const set = await app.request('PUT', `/v1/projects/${projectId}/members/${r.user.id}`, {
      token: owner.jwt,
      body: { role: 'Developer' },
    });
    expect(set.status).toBe(200);
    const perm = await app.request('PUT', `/v1/projects/${projectId}/members/${r.user.id}/envs/prod`, {
      token: owner.jwt,
      body: { permission: 'none' },
    });
    expect(perm.status).toBe(200);
    const removed = await app.request('DELETE', `/v1/workspace/members/${r.user.id}`, { token: owner.jwt });
    expect(removed.status).toBe(204);

    const { logs } = await get('/v1/workspace/audit?limit=200');
    const about = logs.filter((l) => (l.detail as { userId?: string } | null)?.userId === r.user.id);
    expect(about.map((l) => l.action).sort()).toEqual([
      'env_permission.set',
      'member.add',
      'member.remove',
      'project_member.set',
    ]);
    for (const l of about) expect(l.detailNames).toEqual({ [r.user.id]: 'Rob' });
    // Dana's own additions name her; entries whose detail names nobody carry no detailNames.
    expect(logs.find((l) => l.action === 'project_member.set' && l.detailNames?.[dev.id])?.detailNames).toEqual({
      [dev.id]: 'Dana',
    });
    expect(logs.filter((l) => l.action === 'vars.bulk_upsert').every((l) => l.detailNames === undefined)).toBe(true);
    // The project log says the same.
    const project = await get(`/v1/projects/${projectId}/audit?action=env_permission.set&limit=200`);
    expect(project.logs.map((l) => l.detailNames)).toContainEqual({ [r.user.id]: 'Rob' });
  });
});
