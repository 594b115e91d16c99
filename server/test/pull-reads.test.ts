/**
 * ADR 0007: what a pull reads before it answers. On PostgreSQL a pull's token, project, environment and the
 * caller's role are one query (services/identity/authn.ts tokensWithGrant); on SQLite the epoch cache serves
 * them after one counter read (server/test/epoch-cache.test.ts). Every statement the server's PostgreSQL
 * clients send is recorded (observed, not replaced) while one pull runs. The permission semantics of the same
 * path, for every role, override and token kind, are server/test/authz-matrix.test.ts.
 */
import { operations as ops } from '@svcenv/contract/operations';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authnQueries } from '../src/runtime/credentials.js';
import {
  createProject,
  createToken,
  signupUser,
  startApp,
  TEST_DATABASE_URL,
  type TestApp,
  upsert,
} from './harness.js';

/**
 * The statements by which authentication and authorization read a pull's rows: the token (by prefix, with or
 * without its grant; the grant read of several pulls at once takes its prefixes from an array, `w`), the
 * project, the caller's role and overrides, the environment. Matched by their shapes, so a background job's
 * query of the same tables (the expiry-reminder scan) is not counted.
 */
const AUTH_READ =
  /"token_prefix" = (\$\d|"w"\."a0")|from "projects" where "id" = \$\d|"slug" = \$\d|from "project_members" where "project_id" = \$\d|from "env_permissions" where "project_id" = \$\d|from "environments" where "project_id" = \$\d and "name" = \$\d/;

describe.skipIf(!TEST_DATABASE_URL)('a pull reads its authorization in one query (PostgreSQL)', () => {
  let app: TestApp;
  /** Each statement sent while recording, with its arguments. */
  const sent: { text: string; values: unknown[] }[] = [];
  let recording = false;
  const query = pg.Client.prototype.query;
  beforeAll(async () => {
    // Before the app opens its pool: each pooled connection binds the method it finds (db/index.ts).
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const q = args[0] as string | { text?: string; values?: unknown[] };
      if (recording) {
        sent.push(
          typeof q === 'string'
            ? { text: q, values: (args[1] as unknown[] | undefined) ?? [] }
            : { text: q.text ?? '', values: q.values ?? [] },
        );
      }
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    app = await startApp();
  });
  afterAll(async () => {
    pg.Client.prototype.query = query;
    await app.stop();
  });

  /** The statements that read authorization rows while `run` runs. */
  async function authReads(run: () => Promise<unknown>) {
    return (await authReadsWithArgs(run)).map((r) => r.text);
  }

  /** authReads with each statement's arguments. */
  async function authReadsWithArgs(run: () => Promise<unknown>) {
    sent.length = 0;
    recording = true;
    try {
      await run();
    } finally {
      recording = false;
    }
    return sent.filter((r) => /^\s*select/i.test(r.text) && AUTH_READ.test(r.text));
  }

  it('one read for a pull by id, a 304, and an export; the rows are the usual ones', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt, { name: 'One Read' });
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: 'a', type: 'secret' }]);
    const { token } = await createToken(app, jwt, { scope: 'read' });
    const dev = { id: p.id, env: 'dev' };
    await app.call(ops.pull, { params: dev }, token); // resolved and cached
    let res!: Awaited<ReturnType<TestApp['request']>>;
    expect(await authReads(async () => (res = await app.call(ops.pull, { params: dev }, token)))).toHaveLength(1);
    expect(res.status).toBe(200);
    expect(res.text).toContain('SVCENV_PROJECT_NAME="One Read"');
    const etag = res.headers.get('etag')!;
    const reads = await authReads(
      async () => (res = await app.call(ops.pull, { params: dev, headers: { 'if-none-match': etag } }, token)),
    );
    expect(res.status).toBe(304);
    expect(reads).toHaveLength(1);
    expect(await authReads(async () => (res = await app.call(ops.exportVars, { params: dev }, token)))).toHaveLength(1);
    expect(res.status).toBe(200);
  });

  it('one read for a pull, a 304 and an export by the project slug (D58)', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt, { name: 'By Slug' });
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: 'a', type: 'secret' }]);
    const { token } = await createToken(app, jwt, { scope: 'read' });
    const path = `/v1/projects/${p.slug}/envs/dev`;
    let res!: Awaited<ReturnType<TestApp['request']>>;
    expect(await authReads(async () => (res = await app.request('GET', `${path}/pull`, { token })))).toHaveLength(1);
    expect(res.status).toBe(200);
    expect(res.text).toContain(`SVCENV_PROJECT=${p.id}\n`);
    const etag = res.headers.get('etag')!;
    const reads = await authReads(
      async () => (res = await app.request('GET', `${path}/pull`, { token, headers: { 'if-none-match': etag } })),
    );
    expect(res.status).toBe(304);
    expect(reads).toHaveLength(1);
    expect(await authReads(async () => (res = await app.request('GET', `${path}/export`, { token })))).toHaveLength(1);
    expect(res.status).toBe(200);
  });

  it('answers as before where the one read finds nothing: an unknown slug or environment, another workspace', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt, { name: 'Slugged' });
    const { token } = await createToken(app, jwt, { scope: 'read' });
    const missing = await app.request('GET', `/v1/projects/${p.id}/envs/nope/pull`, { token });
    expect(missing.status).toBe(404);
    expect((await app.request('GET', `/v1/projects/${p.slug}/envs/nope/pull`, { token })).status).toBe(404);
    expect((await app.request('GET', `/v1/projects/no-such-slug/envs/dev/pull`, { token })).status).toBe(404);
    const stranger = await signupUser(app, 'Stranger');
    const theirs = await createProject(app, stranger.jwt, { name: 'Theirs' });
    // D23: a project of another workspace is 404, whatever the token, by id or by slug.
    expect((await app.request('GET', `/v1/projects/${theirs.id}/envs/dev/pull`, { token })).status).toBe(404);
    expect((await app.request('GET', `/v1/projects/${theirs.slug}/envs/dev/pull`, { token })).status).toBe(404);
    // A token restricted to another project of the same workspace: 403 by slug as by id.
    const other = await createProject(app, jwt, { name: 'Elsewhere' });
    const restricted = await createToken(app, jwt, { scope: 'read', projectId: other.id });
    const bySlug = await app.request('GET', `/v1/projects/${p.slug}/envs/dev/pull`, { token: restricted.token });
    expect(bySlug.status).toBe(403);
  });

  it('sees a revocation and a project restriction on the very next pull', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt, { name: 'Revoked' });
    const other = await createProject(app, jwt, { name: 'Other' });
    const restricted = await createToken(app, jwt, { scope: 'read', projectId: other.id });
    expect((await app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token: restricted.token })).status).toBe(
      403,
    );
    const t = await createToken(app, jwt, { scope: 'read' });
    expect((await app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token: t.token })).status).toBe(200);
    expect((await app.request('DELETE', `/v1/tokens/${t.id}`, { token: jwt })).status).toBe(204);
    expect((await app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token: t.token })).status).toBe(401);
  });

  it('reads of pulls made at once go as one query, each answered with its own rows (db/hot-query.ts)', async () => {
    const { jwt, user } = await signupUser(app, 'Many');
    const [a, b] = [
      await createProject(app, jwt, { name: 'Many A' }),
      await createProject(app, jwt, { name: 'Many B' }),
    ];
    const mine = await createToken(app, jwt, { scope: 'read' });
    const restricted = await createToken(app, jwt, { scope: 'read', projectId: b.id });
    const stranger = await signupUser(app, 'ManyStranger');
    const theirs = await createProject(app, stranger.jwt, { name: 'Theirs' });
    const strangers = await createToken(app, stranger.jwt, { scope: 'read' });
    // Overrides, so that one call has several rows (one per override) and the rows must not mix.
    const envs = await app.db.db
      .selectFrom('environments')
      .select(['id', 'name'])
      .where('project_id', '=', a.id)
      .execute();
    await app.db.db
      .insertInto('env_permissions')
      .values(
        envs.map((e) => ({ project_id: a.id, user_id: user.id, environment_id: e.id, permission: 'read' as const })),
      )
      .execute();
    const prefix = (t: string) => t.slice(0, 16);
    const tuples: [string, string, string][] = [];
    for (const t of [mine, restricted, strangers])
      for (const p of [a, b, theirs])
        for (const env of ['dev', 'prod', 'nope']) tuples.push([prefix(t.token), p.id, env]);
    tuples.push([prefix(mine.token), 'no-such-project', 'dev'], ['tok_live_nothing', a.id, 'dev']);
    const { tokensWithGrant } = app.deps.authn.queries;
    // The same reads, one by one, through Kysely in a transaction (the rows the coalesced read must match).
    const alone = await app.db.db.transaction().execute(async (trx) => {
      const q = authnQueries(trx);
      const out = [];
      for (const t of tuples) out.push(await q.tokensWithGrant(...t));
      return out;
    });
    let together: Awaited<ReturnType<typeof tokensWithGrant>>[] = [];
    const reads = await authReads(async () => (together = await Promise.all(tuples.map((t) => tokensWithGrant(...t)))));
    expect(reads).toHaveLength(1);
    const sorted = (rows: readonly { o_environment_id: string | null }[]) =>
      [...rows].sort((x, y) => String(x.o_environment_id).localeCompare(String(y.o_environment_id)));
    expect(together.map(sorted)).toEqual(alone.map(sorted));
    expect(together[0]!.length).toBe(envs.length); // mine, project a, dev: one row per override
    expect(together.at(-1)).toEqual([]);
    // At most 64 calls a query: 130 calls made at once are three.
    const many = Array.from({ length: 130 }, (_, i) => tuples[i % tuples.length]!);
    let answers: unknown[] = [];
    expect(
      await authReads(async () => (answers = await Promise.all(many.map((t) => tokensWithGrant(...t))))),
    ).toHaveLength(3);
    expect(answers.map((rows) => (rows as []).length)).toEqual(many.map((_, i) => together[i % tuples.length]!.length));
    // Calls with the same arguments are read once and get the same rows, each in an array of its own.
    const twice = [tuples[0]!, tuples[1]!, tuples[0]!, tuples[0]!, tuples[1]!];
    let shared: Awaited<ReturnType<typeof tokensWithGrant>>[] = [];
    const [read] = await authReadsWithArgs(
      async () => (shared = await Promise.all(twice.map((t) => tokensWithGrant(...t)))),
    );
    expect(read!.values[0]).toEqual([tuples[0]![0], tuples[1]![0]]);
    expect(read!.values[1]).toEqual([tuples[0]![1], tuples[1]![1]]);
    const [t0, t1] = [together[0]!, together[1]!];
    expect(shared.map(sorted)).toEqual([t0, t1, t0, t0, t1].map(sorted));
    expect(shared[0]!.length).toBeGreaterThan(0);
    expect(shared[2]).not.toBe(shared[0]);
    // A call PostgreSQL refuses (a NUL in a text) fails alone; the calls made with it are answered.
    const withNul = await Promise.allSettled([
      tokensWithGrant(prefix(mine.token), a.id, 'dev'),
      tokensWithGrant(prefix(mine.token), a.id, 'd\u0000v'),
      tokensWithGrant(prefix(restricted.token), b.id, 'dev'),
    ]);
    expect(withNul.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);

    // Over HTTP, pulls sent at once each get their own answer, whatever reads they shared.
    const pulls = [
      { token: mine.token, p: a, status: 200 },
      { token: mine.token, p: b, status: 200 },
      { token: restricted.token, p: a, status: 403 },
      { token: restricted.token, p: b, status: 200 },
      { token: strangers.token, p: a, status: 404 },
      { token: strangers.token, p: theirs, status: 200 },
      { token: mine.token, p: theirs, status: 404 },
    ];
    const answered = await Promise.all(
      [...pulls, ...pulls, ...pulls].map((x) =>
        app.request('GET', `/v1/projects/${x.p.id}/envs/dev/pull`, { token: x.token }),
      ),
    );
    for (const [i, res] of answered.entries()) {
      const want = pulls[i % pulls.length]!;
      expect(res.status, `pull ${i}`).toBe(want.status);
      if (want.status === 200) expect(res.text).toContain(`SVCENV_PROJECT=${want.p.id}\n`);
    }
  });

  it('a pull of a malformed environment name is refused as such, not read (400, not 500)', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt, { name: 'Nul' });
    const { token } = await createToken(app, jwt, { scope: 'read' });
    for (const env of ['d%00v', 'dev%00', '%00']) {
      const res = await app.request('GET', `/v1/projects/${p.id}/envs/${env}/pull`, { token });
      expect(res.status, env).toBe(400);
      expect(res.error).toMatchObject({ code: 'VALIDATION', field: 'env' });
    }
  });
});
