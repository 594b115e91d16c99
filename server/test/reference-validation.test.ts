/**
 * D67 over HTTP on SQLite and PostgreSQL: `validate=true` on the variable writes and on a change-request
 * submission refuses a value whose references do not resolve for the writer (each code), writes nothing
 * (listing, revision, history, audit unchanged), reads the environment as it would be after the write (bulk
 * cross-key, a cycle with an existing key), guesses only among environments and projects the writer can read;
 * and `pull?keys=` renders a subset that a broken value elsewhere does not fail, under its own ETag.
 */
import {
  auditPage,
  changeRequestsResponse,
  historyResponse,
  listVarsResponse,
  revisionsResponse,
  switchWorkspaceResponse,
  unresolvedReferencesBody,
} from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';

/* biome-ignore-start lint/suspicious/noTemplateCurlyInString: literal reference syntax */
describe(`reference validation on write, pull of a subset (D67, ${dialectName})`, () => {
  let app: TestApp;
  let owner: { jwt: string; workspaceId: string };

  beforeAll(async () => {
    app = await startApp({ env: { DEFAULT_PLAN: 'enterprise' } });
    const u = await signupUser(app, 'Owner');
    const s = await app.request('GET', '/v1/auth/session', { token: u.jwt });
    owner = { jwt: u.jwt, workspaceId: (s.body as { user: { workspaceId: string } }).user.workspaceId };
  });
  afterAll(async () => {
    await app?.stop();
  });

  /** Everything a refused write must leave as it was: the listing, the revision, the revision list, the audit. */
  async function snapshot(projectId: string, env: string) {
    const list = await app.request('GET', `/v1/projects/${projectId}/envs/${env}/vars?reveal=true`, {
      token: owner.jwt,
      schema: listVarsResponse,
    });
    const revs = await app.request('GET', `/v1/projects/${projectId}/envs/${env}/revisions`, {
      token: owner.jwt,
      schema: revisionsResponse,
    });
    const audit = await app.request('GET', `/v1/projects/${projectId}/audit?limit=200`, {
      token: owner.jwt,
      schema: auditPage,
    });
    return {
      vars: list.body.vars.map((v) => [v.key, v.value, v.updatedAt]),
      revision: list.headers.get('x-svcenv-revision'),
      revisions: revs.body.revisions.length,
      // Reads (the reveal above) are audited too; a refused write adds no change.
      changes: audit.body.logs.filter((l) => l.action !== 'var.reveal').length,
    };
  }

  function refused(res: { status: number; text: string }) {
    expect(res.status, res.text).toBe(422);
    return unresolvedReferencesBody.strict().parse(JSON.parse(res.text));
  }

  const bulk = (projectId: string, envs: string[], items: object[], validate = true) =>
    app.request('POST', `/v1/projects/${projectId}/vars${validate ? '?validate=true' : ''}`, {
      token: owner.jwt,
      body: { envs, items },
    });

  it('refuses a reference to a missing environment, names it with a guess, and writes nothing', async () => {
    const p = await createProject(app, owner.jwt);
    await upsert(app, owner.jwt, p.id, ['dev'], [{ key: 'DB_HOST', value: 'db.internal', type: 'plain' }]);
    const before = await snapshot(p.id, 'dev');
    const body = refused(
      await bulk(
        p.id,
        ['dev'],
        [
          { key: 'OK', value: 'plain', type: 'plain' },
          { key: 'OOPS', value: '${prdo.DB_HOST}', type: 'plain' },
        ],
      ),
    );
    expect(body.error.code).toBe('UNRESOLVED_REFERENCES');
    expect(body.error.field).toBe('OOPS');
    expect(body.unresolved.map(({ key, env, code }) => ({ key, env, code }))).toEqual([
      { key: 'OOPS', env: 'dev', code: 'REFERENCE_FORBIDDEN' },
    ]);
    expect(body.error.message).toBe(
      'OOPS: the environment `prdo` does not exist or you cannot read it; did you mean `prod`?',
    );
    expect(await snapshot(p.id, 'dev')).toEqual(before);
    // Without validate the write behaves as before D67.
    const plain = await bulk(p.id, ['dev'], [{ key: 'OOPS', value: '${prdo.DB_HOST}', type: 'plain' }], false);
    expect(plain.status, plain.text).toBe(200);
  });

  it('REFERENCE_MISSING for a missing key without fallback; a fallback or a key written alongside is fine', async () => {
    const p = await createProject(app, owner.jwt);
    await upsert(app, owner.jwt, p.id, ['dev'], [{ key: 'DB_HOSTNAME', value: 'h', type: 'plain' }]);
    const before = await snapshot(p.id, 'dev');
    const body = refused(await bulk(p.id, ['dev'], [{ key: 'URL', value: 'pg://${DB_HOST}/x', type: 'plain' }]));
    expect(body.unresolved).toEqual([
      {
        key: 'URL',
        env: 'dev',
        code: 'REFERENCE_MISSING',
        message: expect.stringContaining('`${DB_HOST}` names no variable of this environment'),
      },
    ]);
    expect(body.unresolved[0]!.message).toContain('did you mean `DB_HOSTNAME`?');
    expect(await snapshot(p.id, 'dev')).toEqual(before);
    for (const items of [
      [{ key: 'URL', value: 'pg://${DB_HOST:-localhost}/x', type: 'plain' }],
      // Validation sees the environment after the write: B is written by the same request.
      [
        { key: 'A', value: '${B}', type: 'plain' },
        { key: 'B', value: 'x', type: 'plain' },
      ],
      // ... in every environment it names: staging.C is written too.
      [
        { key: 'X', value: '${staging.C}', type: 'plain' },
        { key: 'C', value: 'c', type: 'plain' },
      ],
    ]) {
      const ok = await bulk(p.id, ['dev', 'staging'], items);
      expect(ok.status, ok.text).toBe(200);
    }
    // A missing key in another environment is missing too.
    const other = refused(await bulk(p.id, ['dev'], [{ key: 'Y', value: '${staging.NOPE}', type: 'plain' }]));
    expect(other.unresolved[0]).toMatchObject({ key: 'Y', code: 'REFERENCE_MISSING' });
    expect(other.unresolved[0]!.message).toContain('names no variable of `staging`');
  });

  it('PUT that closes a cycle with an existing key is CIRCULAR_REFERENCE, and writes nothing', async () => {
    const p = await createProject(app, owner.jwt);
    await upsert(
      app,
      owner.jwt,
      p.id,
      ['dev'],
      [
        { key: 'A', value: '1', type: 'plain' },
        { key: 'B', value: 'b-${A}', type: 'plain' },
      ],
    );
    const before = await snapshot(p.id, 'dev');
    const history = async () =>
      (
        await app.request('GET', `/v1/projects/${p.id}/envs/dev/vars/A/history`, {
          token: owner.jwt,
          schema: historyResponse,
        })
      ).body.history.length;
    const h = await history();
    const put = (value: string, validate = true) =>
      app.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/A${validate ? '?validate=true' : ''}`, {
        token: owner.jwt,
        body: { value },
      });
    const body = refused(await put('${B}'));
    expect(body.unresolved).toEqual([
      { key: 'A', env: 'dev', code: 'CIRCULAR_REFERENCE', message: expect.stringContaining('A: circular reference') },
    ]);
    expect(await snapshot(p.id, 'dev')).toEqual(before);
    expect(await history()).toBe(h);
    // D28b's 404 comes before validation.
    const missing = await app.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/NOPE?validate=true`, {
      token: owner.jwt,
      body: { value: '${NOPE2}' },
    });
    expect(missing.status, missing.text).toBe(404);
    // A valid value, and a type-only change, pass.
    expect((await put('${B2:-two}')).status).toBe(200);
    const typeOnly = await app.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/B?validate=true`, {
      token: owner.jwt,
      body: { type: 'secret' },
    });
    expect(typeOnly.status, typeOnly.text).toBe(200);
    // Without validate the cycle is written (pull reports it, as before).
    expect((await put('${B}', false)).status).toBe(200);
  });

  it('REFERENCE_LIMIT for a chain over 64 links written in one bulk request', async () => {
    const p = await createProject(app, owner.jwt);
    const items = Array.from({ length: 66 }, (_, i) => ({
      key: `K${i}`,
      value: i === 65 ? 'end' : `\${K${i + 1}}`,
      type: 'plain',
    }));
    const body = refused(await bulk(p.id, ['dev'], items));
    expect(body.unresolved.map((u) => u.code)).toContain('REFERENCE_LIMIT');
    expect(body.unresolved.find((u) => u.key === 'K0')?.code).toBe('REFERENCE_LIMIT');
    expect(body.unresolved.every((u) => u.code === 'REFERENCE_LIMIT')).toBe(true);
    expect((await bulk(p.id, ['dev'], items.slice(1))).status).toBe(200);
  });

  it('guesses only among environments and projects the writer can read', async () => {
    const p = await createProject(app, owner.jwt, { name: 'Shop' });
    const billing = await createProject(app, owner.jwt, { name: 'Billing' });
    await upsert(app, owner.jwt, billing.id, ['prod'], [{ key: 'KEY', value: 'k', type: 'plain' }]);
    await upsert(app, owner.jwt, p.id, ['prod'], [{ key: 'DB_HOST', value: 'h', type: 'plain' }]);
    // A Developer of the shop (not of billing), with no access to its prod.
    const u = await signupUser(app, 'Dev');
    const inv = await app.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: u.email, wsRole: 'Member' },
    });
    expect(inv.status, inv.text).toBe(200);
    const sw = await app.request('POST', '/v1/auth/switch-workspace', {
      token: u.jwt,
      body: { workspaceId: owner.workspaceId },
      schema: switchWorkspaceResponse,
    });
    const dev = sw.body.token;
    const add = await app.request('PUT', `/v1/projects/${p.id}/members/${u.user.id}`, {
      token: owner.jwt,
      body: { role: 'Developer' },
    });
    expect(add.status, add.text).toBe(200);
    const none = await app.request('PUT', `/v1/projects/${p.id}/members/${u.user.id}/envs/prod`, {
      token: owner.jwt,
      body: { permission: 'none' },
    });
    expect(none.status, none.text).toBe(200);
    const write = (auth: string, value: string) =>
      app.request('POST', `/v1/projects/${p.id}/vars?validate=true`, {
        token: auth,
        body: { envs: ['dev'], items: [{ key: 'OOPS', value, type: 'plain' }] },
      });
    const messageOf = async (auth: string, value: string) => refused(await write(auth, value)).unresolved[0]!;
    // The Owner reads prod and billing: guessed.
    expect((await messageOf(owner.jwt, '${prdo.DB_HOST}')).message).toContain('did you mean `prod`?');
    expect((await messageOf(owner.jwt, '${biling.prod.KEY}')).message).toBe(
      'OOPS: the project `biling` does not exist or you cannot read it; did you mean `billing`?',
    );
    // The Developer reads neither: no guess, and an unreadable environment reads exactly as a missing one.
    const typo = await messageOf(dev, '${prdo.DB_HOST}');
    expect(typo).toEqual({
      key: 'OOPS',
      env: 'dev',
      code: 'REFERENCE_FORBIDDEN',
      message: 'OOPS: the environment `prdo` does not exist or you cannot read it',
    });
    const real = await messageOf(dev, '${prod.DB_HOST}');
    expect(real.message).toBe('OOPS: the environment `prod` does not exist or you cannot read it');
    const slug = await messageOf(dev, '${biling.prod.KEY}');
    expect(slug.message).toBe('OOPS: the project `biling` does not exist or you cannot read it');
    const unreadable = await messageOf(dev, '${billing.prod.KEY}');
    expect(unreadable.message).toBe('OOPS: the project `billing` does not exist or you cannot read it');
    // What the Developer can read is guessed: staging.
    expect((await messageOf(dev, '${stagin.DB_HOST}')).message).toContain('did you mean `staging`?');
  });

  it('validates a change-request submission as the environment would be once applied', async () => {
    const p = await createProject(app, owner.jwt);
    await upsert(
      app,
      owner.jwt,
      p.id,
      ['dev'],
      [
        { key: 'A', value: 'a', type: 'plain' },
        { key: 'OLD', value: 'o', type: 'plain' },
      ],
    );
    const approval = await app.request('PATCH', `/v1/projects/${p.id}/envs/dev`, {
      token: owner.jwt,
      body: { requireApproval: true },
    });
    expect(approval.status, approval.text).toBe(200);
    const base = `/v1/projects/${p.id}/envs/dev/change-requests`;
    const list = async () =>
      (await app.request('GET', base, { token: owner.jwt, schema: changeRequestsResponse })).body.changeRequests.length;
    const before = await snapshot(p.id, 'dev');
    // OLD is deleted by the same request: a reference to it would be empty once applied.
    const body = refused(
      await app.request('POST', `${base}?validate=true`, {
        token: owner.jwt,
        body: { message: 'm', set: [{ key: 'URL', value: '${OLD}/${A}' }], delete: ['OLD'] },
      }),
    );
    expect(body.unresolved).toEqual([
      { key: 'URL', env: 'dev', code: 'REFERENCE_MISSING', message: expect.stringContaining('`${OLD}`') },
    ]);
    expect(await list()).toBe(0);
    expect(await snapshot(p.id, 'dev')).toEqual(before);
    const ok = await app.request('POST', `${base}?validate=true`, {
      token: owner.jwt,
      body: { message: 'm', set: [{ key: 'URL', value: '${A}' }], delete: ['OLD'] },
    });
    expect(ok.status, ok.text).toBe(201);
    expect(await list()).toBe(1);
  });

  it('the OpenAPI document describes validate and the 422 of each validated write', async () => {
    const doc = (await app.request('GET', '/v1/openapi.json')).body as {
      paths: Record<string, Record<string, { parameters?: { name: string }[]; responses: Record<string, unknown> }>>;
    };
    for (const [path, method] of [
      ['/v1/projects/{id}/vars', 'post'],
      ['/v1/projects/{id}/envs/{env}/vars/{key}', 'put'],
      ['/v1/projects/{id}/envs/{env}/change-requests', 'post'],
    ] as const) {
      const op = doc.paths[path]![method]!;
      expect(op.parameters?.map((p) => p.name)).toContain('validate');
      expect(JSON.stringify(op.responses['422'])).toContain('UNRESOLVED_REFERENCES');
    }
    const pull = doc.paths['/v1/projects/{id}/envs/{env}/pull']!.get!;
    expect(pull.parameters?.map((p) => p.name)).toContain('keys');
  });

  describe('pull?keys=', () => {
    let projectId: string;
    let token: string;
    const pull = (query: string, headers: Record<string, string> = {}) =>
      app.request('GET', `/v1/projects/${projectId}/envs/dev/pull?${query}`, { token, headers });

    beforeAll(async () => {
      const p = await createProject(app, owner.jwt);
      projectId = p.id;
      await upsert(
        app,
        owner.jwt,
        p.id,
        ['dev'],
        [
          { key: 'DB_USER', value: 'app', type: 'plain' },
          { key: 'DB_HOST', value: 'db.internal', type: 'plain' },
          { key: 'URL', value: 'pg://${DB_USER}@${DB_HOST}', type: 'secret' },
          { key: 'OOPS', value: '${prdo.DB_HOST}', type: 'plain' },
        ],
      );
      token = (await createToken(app, owner.jwt, { scope: 'read' })).token;
    });

    it('renders only the named keys, resolved, and the context variables; a broken other key fails only the full pull', async () => {
      const full = await pull('metadata=false');
      expect(full.status, full.text).toBe(422);
      const one = await pull('keys=DB_USER');
      expect(one.status, one.text).toBe(200);
      expect(one.text.split('\n').map((l) => l.split('=')[0])).toEqual([
        'DB_USER',
        'SVCENV_PROJECT',
        'SVCENV_ENV',
        'SVCENV_PROJECT_NAME',
        '',
      ]);
      // What a named key references is read, not rendered.
      const url = await pull('keys=URL&metadata=false');
      expect(url.text).toBe('URL=pg://app@db.internal\n');
      const audit = await app.request('GET', `/v1/projects/${projectId}/audit?limit=200`, {
        token: owner.jwt,
        schema: auditPage,
      });
      expect(audit.body.logs.find((l) => l.action === 'vars.pull')?.detail).toMatchObject({ keys: ['URL'] });
    });

    it('a key the environment lacks is 400 VALIDATION naming keys', async () => {
      const res = await pull('keys=DB_USER,NOPE');
      expect(res.status, res.text).toBe(400);
      expect(res.error).toMatchObject({ code: 'VALIDATION', field: 'keys' });
      expect(res.error.message).toContain('"NOPE"');
      expect((await pull('keys=DB_USER,,X')).error.field).toBe('keys');
      // A value typed where a key goes is counted, never repeated (`app` is DB_USER's value).
      const typed = await pull('keys=DB_USER,app,NOPE');
      expect(typed.error.message).toBe(
        'keys: no variable in this environment for "NOPE", one entry equal to a value (not repeated)',
      );
    });

    it('has its own ETag per set of keys, 304 only for that set', async () => {
      const a = await pull('keys=DB_USER&metadata=false');
      const ab = await pull('keys=DB_USER,DB_HOST&metadata=false');
      const ba = await pull('keys=DB_HOST,DB_USER&metadata=false');
      const etagA = a.headers.get('etag')!;
      expect(etagA).toMatch(/^"/);
      expect(ab.headers.get('etag')).not.toBe(etagA);
      expect(ba.headers.get('etag')).toBe(ab.headers.get('etag'));
      expect((await pull('keys=DB_USER&metadata=false', { 'if-none-match': etagA })).status).toBe(304);
      const other = await pull('keys=DB_USER,DB_HOST&metadata=false', { 'if-none-match': etagA });
      expect(other.status).toBe(200);
      expect(other.text).toBe('DB_HOST=db.internal\nDB_USER=app\n');
    });

    it('a held subset pull wakes when a named value changes, not for the others', async () => {
      const first = await pull('keys=URL&metadata=false');
      const etag = first.headers.get('etag')!;
      // Changing a key outside the subset (and outside what URL reads) leaves the held pull waiting.
      const start = Date.now();
      const held = pull('keys=URL&metadata=false&wait=3', { 'if-none-match': etag });
      await new Promise((r) => setTimeout(r, 300));
      await upsert(app, owner.jwt, projectId, ['dev'], [{ key: 'OTHER', value: 'o', type: 'plain' }]);
      const unchanged = await held;
      expect(unchanged.status).toBe(304);
      expect(Date.now() - start).toBeGreaterThan(2500);
      // Changing what URL references answers at once with the new body.
      const again = pull('keys=URL&metadata=false&wait=10', { 'if-none-match': etag });
      await new Promise((r) => setTimeout(r, 300));
      const t = Date.now();
      await upsert(app, owner.jwt, projectId, ['dev'], [{ key: 'DB_HOST', value: 'db2.internal', type: 'plain' }]);
      const changed = await again;
      expect(changed.status).toBe(200);
      expect(changed.text).toBe('URL=pg://app@db2.internal\n');
      expect(Date.now() - t).toBeLessThan(5000);
    });
  });
});
/* biome-ignore-end lint/suspicious/noTemplateCurlyInString: literal reference syntax */
