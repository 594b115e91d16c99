import { flatReferenceErrorBody } from '@svcenv/contract';
import { operations as ops } from '@svcenv/contract/operations';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';

describe(`pull and export (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  async function setup(projectName = 'My App') {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt, { name: projectName });
    const { token } = await createToken(app, jwt, { scope: 'read' });
    return { jwt, p, token, base: `/v1/projects/${p.id}/envs/dev`, dev: { id: p.id, env: 'dev' } };
  }

  it('pulls resolved dotenv with context variables, quoting multi-line values (spec variables rules 4-6, D28a, D30)', async () => {
    const { jwt, p, token, base, dev } = await setup();
    await upsert(
      app,
      jwt,
      p.id,
      ['dev'],
      [
        { key: 'HOST', value: 'db', type: 'plain' },
        { key: 'URL', value: 'pg://${HOST}', type: 'secret' },
        { key: 'CERT', value: 'line1\nline2 "q" \\ end', type: 'secret' },
        { key: 'SPACED', value: 'a b#c', type: 'plain' },
        { key: 'EMPTY', value: '', type: 'plain' },
      ],
    );
    const res = await app.call(ops.pull, { params: dev }, token);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.text).toBe(
      [
        'CERT="line1\\nline2 \\"q\\" \\\\ end"',
        'EMPTY=',
        'HOST=db',
        'SPACED="a b#c"',
        'URL=pg://db',
        `SVCENV_PROJECT=${p.id}`,
        'SVCENV_ENV=dev',
        'SVCENV_PROJECT_NAME="My App"',
        '',
      ].join('\n'),
    );
    const bare = await app.call(ops.pull, { params: dev, query: { metadata: 'false' } }, token);
    expect(bare.text).not.toContain('SVCENV_');
    expect((await app.request('GET', `${base}/pull?metadata=maybe`, { token })).status).toBe(400);
  });

  it('lets a user variable override a context variable (spec variables rule 5)', async () => {
    const { jwt, p, token, dev } = await setup();
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'SVCENV_ENV', value: 'custom', type: 'plain' }]);
    const res = await app.call(ops.pull, { params: dev }, token);
    expect(res.text.match(/^SVCENV_ENV=.*$/gm)).toEqual(['SVCENV_ENV=custom']);
    // The header names the context variables the server added, so a client can tell the user's apart.
    expect(res.headers.get('x-svcenv-context')).toBe('SVCENV_PROJECT, SVCENV_PROJECT_NAME');
    const bare = await app.call(ops.pull, { params: dev, query: { metadata: 'false' } }, token);
    expect(bare.headers.get('x-svcenv-context')).toBeNull();
  });

  it('answers a conditional pull with 304 and a stable strong ETag (D29)', async () => {
    const { jwt, p, token, dev } = await setup();
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: '1', type: 'plain' }]);
    const one = await app.call(ops.pull, { params: dev }, token);
    const etag = one.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const two = await app.call(ops.pull, { params: dev }, token);
    expect(two.headers.get('etag')).toBe(etag);
    const cond = await app.call(ops.pull, { params: dev, headers: { 'if-none-match': etag } }, token);
    expect(cond.status).toBe(304);
    expect(cond.text).toBe('');
    // RFC 9110 13.1.2: the comparison is weak (a cache may hand our ETag back as W/"..."), and * matches.
    for (const inm of [`W/${etag}`, '*', `"other", ${etag}`]) {
      const res = await app.call(ops.pull, { params: dev, headers: { 'if-none-match': inm } }, token);
      expect(res.status, inm).toBe(304);
    }
    const other = await app.call(ops.pull, { params: dev, headers: { 'if-none-match': '"other"' } }, token);
    expect(other.status).toBe(200);
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: '2', type: 'plain' }]);
    const changed = await app.call(ops.pull, { params: dev, headers: { 'if-none-match': etag } }, token);
    expect(changed.status).toBe(200);
    expect(changed.text).toContain('A=2');
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('rejects a JWT with 401 and fails a circular chain with the flat 422 body (spec variables rules 4, 8)', async () => {
    const { jwt, p, token, dev } = await setup();
    expect((await app.call(ops.pull, { params: dev }, jwt)).status).toBe(401);
    await upsert(
      app,
      jwt,
      p.id,
      ['dev'],
      [
        { key: 'A', value: '${B}', type: 'plain' },
        { key: 'B', value: '${A}', type: 'plain' },
        { key: 'C', value: 'fine', type: 'plain' },
      ],
    );
    const res = await app.call(ops.pull, { params: dev }, token);
    expect(res.status).toBe(422);
    expect(res.json(flatReferenceErrorBody)).toEqual({
      error: 'CIRCULAR_REFERENCE',
      message: 'A: circular reference detected',
      key: 'A',
    });
  });

  it('fails a pull over the chain limit with REFERENCE_LIMIT (D25)', async () => {
    const { jwt, p, token, dev } = await setup();
    const items = Array.from({ length: 70 }, (_, i) => ({
      key: `V${String(i).padStart(2, '0')}`,
      value: i === 69 ? 'x' : `\${V${String(i + 1).padStart(2, '0')}}`,
      type: 'plain',
    }));
    await upsert(app, jwt, p.id, ['dev'], items);
    const res = await app.call(ops.pull, { params: dev }, token);
    expect(res.status).toBe(422);
    expect(res.json(flatReferenceErrorBody)).toMatchObject({ error: 'REFERENCE_LIMIT', key: 'V00' });
  });

  it('records operator syncs shown as connections (spec variables rule 7, D18)', async () => {
    const { token, jwt, dev } = await setup();
    await app.call(ops.pull, { params: dev }, token);
    const session = await app.call(ops.getSession, {}, jwt);
    const wsId = session.body.user.workspaceId;
    const before = await app.db.db
      .selectFrom('workspaces')
      .select('operator_last_sync')
      .where('id', '=', wsId)
      .executeTakeFirstOrThrow();
    expect(before.operator_last_sync).toBeNull();
    await app.call(ops.pull, { params: dev, headers: { 'x-svcenv-client': 'operator' } }, token);
    const after = await app.db.db
      .selectFrom('workspaces')
      .select('operator_last_sync')
      .where('id', '=', wsId)
      .executeTakeFirstOrThrow();
    expect(after.operator_last_sync).not.toBeNull();
  });

  it('pulls a k8s Secret manifest with base64 values (D28, spec variables rule 9)', async () => {
    const { jwt, p, token, dev } = await setup('Billing API (EU)!');
    await upsert(
      app,
      jwt,
      p.id,
      ['dev'],
      [
        { key: 'PASS', value: 's3cret\nx', type: 'secret' },
        { key: 'EMPTY', value: '', type: 'plain' },
      ],
    );
    const res = await app.call(ops.pull, { params: dev, query: { format: 'k8s', metadata: 'false' } }, token);
    expect(res.status).toBe(200);
    // An empty value is `""` (base64 of nothing): a bare `EMPTY:` would be YAML null, refused by Kubernetes.
    expect(res.text).toBe(
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: billing-api-eu-dev\ntype: Opaque\ndata:\n  EMPTY: ""\n  PASS: ${Buffer.from('s3cret\nx').toString('base64')}\n`,
    );
  });

  it('exports dotenv or k8s as a download, masked unless reveal (D28)', async () => {
    const { jwt, p, dev } = await setup('exp');
    await upsert(
      app,
      jwt,
      p.id,
      ['dev'],
      [
        { key: 'PASS', value: 'topsecret', type: 'secret' },
        { key: 'URL', value: 'x://${PASS}', type: 'plain' },
        { key: 'HOST', value: 'h', type: 'plain' },
        { key: 'L1', value: '${L2}', type: 'plain' },
        { key: 'L2', value: '${L1}', type: 'plain' },
      ],
    );
    const masked = await app.call(ops.exportVars, { params: dev, query: { metadata: 'false' } }, jwt);
    expect(masked.status).toBe(200);
    expect(masked.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(masked.headers.get('content-disposition')).toBe('attachment; filename="exp-dev.env"');
    expect(masked.text).toBe('HOST=h\nL1=${L2}\nL2=${L1}\nPASS=***\nURL=***\n');
    const revealed = await app.call(ops.exportVars, { params: dev, query: { reveal: 'true' } }, jwt);
    expect(revealed.text).toContain('PASS=topsecret\n');
    expect(revealed.text).toContain('URL=x://topsecret\n');
    expect(revealed.text).toContain('SVCENV_ENV=dev\n');
    const k8s = await app.call(
      ops.exportVars,
      { params: dev, query: { format: 'k8s', reveal: 'true', metadata: 'false' } },
      jwt,
    );
    expect(k8s.headers.get('content-type')).toBe('application/yaml');
    expect(k8s.text).toContain(`  PASS: ${Buffer.from('topsecret').toString('base64')}\n`);
    expect(k8s.text).toContain('  name: exp-dev\n');
  });

  it('audits every pull and export before answering (D36)', async () => {
    const { jwt, p, token, dev } = await setup();
    await app.call(ops.pull, { params: dev }, token);
    await app.call(ops.exportVars, { params: dev }, jwt);
    const logs = (await app.call(ops.projectAudit, { params: { id: p.id } }, jwt)).body.logs;
    expect(logs.slice(0, 2).map((l) => [l.action, l.actorType, l.targetEnv])).toEqual([
      ['vars.export', 'user', 'dev'],
      ['vars.pull', 'token', 'dev'],
    ]);
  });
});

describe(`writes under pull load (${dialectName})`, () => {
  it('answers every write and every pull while audit rows are being committed (no 500 from a busy database)', async () => {
    const app = await startApp();
    try {
      const { jwt } = await signupUser(app);
      const p = await createProject(app, jwt, { name: 'busy' });
      const { token } = await createToken(app, jwt, { scope: 'read' });
      const dev = { id: p.id, env: 'dev' };
      // Pulls keep the audit writer committing; each write's transaction reads, then writes (bulk upsert
      // checks the existing keys first), so on SQLite it must wait for the writer's lock, not fail.
      const statuses: number[] = [];
      let writing = true;
      const pulls = Array.from({ length: 8 }, async () => {
        while (writing) {
          statuses.push((await app.call(ops.pull, { params: dev }, token)).status);
        }
      });
      for (let i = 0; i < 60; i++) {
        const res = await app.call(
          ops.bulkUpsert,
          {
            params: { id: p.id },
            body: { envs: ['dev'], items: [{ key: `K${i}`, value: `value-${i}`, type: 'secret' }] },
          },
          jwt,
        );
        statuses.push(res.status);
      }
      writing = false;
      await Promise.all(pulls);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      const pulled = await app.call(ops.pull, { params: dev, query: { metadata: 'false' } }, token);
      expect(pulled.text.trim().split('\n')).toHaveLength(60);
    } finally {
      await app.stop();
    }
  });
});
