/**
 * D49: references across environments (`${env.KEY}`) and projects (`${slug.env.KEY}`), resolved as their reader
 * may see them, over HTTP on SQLite and PostgreSQL (two instances on one PostgreSQL database too): each syntax,
 * REFERENCE_FORBIDDEN for every kind of reader that may not read a reached environment (and for a missing one,
 * with the same message), no forbidden value in any answer or log line, cycles, limits (D25) and masking (D26)
 * across environments, and pull bodies, ETags and long-polls (D43) that follow changes to referenced variables.
 */
import { randomBytes } from 'node:crypto';
import { flatReferenceErrorBody, listVarsResponse, sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Client,
  createProject,
  createToken,
  dialectName,
  freshPgSchema,
  signupUser,
  startApp,
  type TestApp,
  upsert,
} from './harness.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const since = (t: number) => Date.now() - t;
const uniq = () => randomBytes(4).toString('hex');

async function listing(c: Client, auth: string, projectId: string, env: string, reveal = false) {
  const res = await c.request('GET', `/v1/projects/${projectId}/envs/${env}/vars${reveal ? '?reveal=true' : ''}`, {
    token: auth,
    schema: listVarsResponse,
  });
  expect(res.status, res.text).toBe(200);
  return { text: res.text, byKey: Object.fromEntries(res.body.vars.map((v) => [v.key, v])) };
}

const pullPath = (projectId: string, env: string) => `/v1/projects/${projectId}/envs/${env}/pull?metadata=false`;

const FORBIDDEN_REASON = 'a reference names an environment that does not exist or that this reader may not read';

describe(`references across environments and projects (D49, ${dialectName})`, () => {
  let app: TestApp;
  let jwt: string;
  let workspaceId: string;
  /** Every answer a reader without access got, to look for forbidden values in. */
  const seen: string[] = [];

  beforeAll(async () => {
    app = await startApp({ env: { DEFAULT_PLAN: 'enterprise' } });
    ({ jwt } = await signupUser(app, 'Owner'));
    const session = await app.request('GET', '/v1/auth/session', { token: jwt, schema: sessionResponse });
    workspaceId = session.body.user.workspaceId;
  });
  afterAll(async () => {
    await app?.stop();
  });

  /** A member of this workspace with `role` in `projectId`. */
  async function member(projectId: string, role: 'Admin' | 'Developer' | 'Read-only') {
    const u = await signupUser(app, 'Member');
    const inv = await app.request('POST', '/v1/workspace/invites', {
      token: jwt,
      body: { email: u.email, wsRole: 'Member' },
    });
    expect(inv.status).toBe(200);
    const sw = await app.request('POST', '/v1/auth/switch-workspace', {
      token: u.jwt,
      body: { workspaceId },
      schema: switchWorkspaceResponse,
    });
    const added = await app.request('PUT', `/v1/projects/${projectId}/members/${u.user.id}`, {
      token: jwt,
      body: { role },
    });
    expect(added.status).toBe(200);
    return { id: u.user.id, jwt: sw.body.token };
  }

  async function pull(c: Client, token: string, projectId: string, env: string, headers: Record<string, string> = {}) {
    return c.request('GET', pullPath(projectId, env), { token, headers });
  }

  it('resolves ${KEY}, ${env.KEY} and ${slug.env.KEY}, with fallbacks; $${ stays literal; a missing key is ""', async () => {
    const shop = await createProject(app, jwt, { name: `shop ${uniq()}`, envs: ['dev', 'staging'] });
    const billing = await createProject(app, jwt, { name: `billing ${uniq()}`, envs: ['dev', 'prod'] });
    await upsert(app, jwt, billing.id, ['prod'], [{ key: 'API', value: 'billing-api', type: 'plain' }]);
    await upsert(app, jwt, shop.id, ['staging'], [{ key: 'HOST', value: 'staging-host', type: 'plain' }]);
    await upsert(
      app,
      jwt,
      shop.id,
      ['dev'],
      [
        { key: 'LOCAL', value: 'l', type: 'plain' },
        { key: 'SAME', value: '<${LOCAL}>', type: 'plain' },
        { key: 'ENV', value: 'http://${staging.HOST}/', type: 'plain' },
        { key: 'CROSS', value: `\${${billing.slug}.prod.API}`, type: 'plain' },
        { key: 'LIT', value: '$${staging.HOST}', type: 'plain' },
        { key: 'FB', value: '${staging.MISSING:-fallback}', type: 'plain' },
        { key: 'FB_REF', value: `\${staging.MISSING:-\${${billing.slug}.prod.API}}`, type: 'plain' },
        { key: 'GONE', value: '[${staging.NOPE}]', type: 'plain' },
        { key: 'SELF', value: '${dev.LOCAL}', type: 'plain' },
        { key: 'NOT_A_REF', value: '${Staging.HOST}', type: 'plain' },
      ],
    );
    const token = (await createToken(app, jwt, { scope: 'read' })).token;
    const res = await pull(app, token, shop.id, 'dev');
    expect(res.status, res.text).toBe(200);
    expect(res.text.split('\n').filter(Boolean).sort()).toEqual(
      [
        'CROSS=billing-api',
        'ENV=http://staging-host/',
        'FB=fallback',
        'FB_REF=billing-api',
        'GONE=[]',
        'LIT=${staging.HOST}',
        'LOCAL=l',
        'NOT_A_REF=${Staging.HOST}',
        'SAME=<l>',
        'SELF=l',
      ].sort(),
    );
    // The same through the project's slug in the path, and in the listing (resolvedValue; value is the literal).
    expect((await pull(app, token, shop.slug, 'dev')).text).toBe(res.text);
    const { byKey } = await listing(app, jwt, shop.id, 'dev');
    expect(byKey.CROSS).toMatchObject({ value: `\${${billing.slug}.prod.API}`, resolvedValue: 'billing-api' });
    expect(byKey.ENV?.resolvedValue).toBe('http://staging-host/');
    expect(byKey.FB_REF?.resolvedValue).toBe('billing-api');
    expect(byKey.NOT_A_REF?.resolvedValue).toBeUndefined();
  });

  it('refuses REFERENCE_FORBIDDEN to every reader that may not read a reached environment, revealing nothing', async () => {
    const secret = `prod-secret-${uniq()}-value`;
    const billingValue = `billing-dev-${uniq()}-value`;
    const shop = await createProject(app, jwt, { name: `shop ${uniq()}`, envs: ['dev', 'staging', 'prod'] });
    const billing = await createProject(app, jwt, { name: `billing ${uniq()}`, envs: ['qa'] });
    await upsert(app, jwt, billing.id, ['qa'], [{ key: 'B', value: billingValue, type: 'plain' }]);
    await upsert(app, jwt, shop.id, ['prod'], [{ key: 'S', value: secret, type: 'plain' }]);
    // Another workspace has a project of its own, with a slug of its own.
    const eve = await signupUser(app, 'Eve');
    const vault = await createProject(app, eve.jwt, { name: `vault ${uniq()}`, envs: ['prod'] });
    const eveValue = `eve-${uniq()}-value`;
    await upsert(app, eve.jwt, vault.id, ['prod'], [{ key: 'V', value: eveValue, type: 'plain' }]);
    await upsert(
      app,
      jwt,
      shop.id,
      ['dev'],
      [
        { key: 'OK', value: 'fine', type: 'plain' },
        { key: 'TO_PROD', value: 'x${prod.S}', type: 'plain' },
        { key: 'TO_BILLING', value: `\${${billing.slug}.qa.B}`, type: 'plain' },
        { key: 'TO_OTHER_WS', value: `\${${vault.slug}.prod.V:-fb}`, type: 'plain' },
        { key: 'TO_NO_PROJECT', value: '${no-such-project.prod.V}', type: 'plain' },
        { key: 'TO_NO_ENV', value: '${nope.S:-fb}', type: 'plain' },
      ],
    );
    const forbidden = (key: string) => `${key}: ${FORBIDDEN_REASON}`;
    /** The listing's outcome for each reference; `hidden`: the values this reader may not see anywhere in it. */
    const stateOf = async (auth: string, hidden: string[]) => {
      const { text, byKey } = await listing(app, auth, shop.id, 'dev');
      for (const h of hidden) expect(text).not.toContain(h);
      return Object.fromEntries(
        ['TO_PROD', 'TO_BILLING', 'TO_OTHER_WS', 'TO_NO_PROJECT', 'TO_NO_ENV'].map((k) => [
          k,
          byKey[k]?.resolveError ?? byKey[k]?.resolvedValue,
        ]),
      );
    };
    const missing = {
      TO_OTHER_WS: forbidden('TO_OTHER_WS'),
      TO_NO_PROJECT: forbidden('TO_NO_PROJECT'),
      TO_NO_ENV: forbidden('TO_NO_ENV'),
    };
    // The Owner reads every environment of the workspace, and only of it.
    expect(await stateOf(jwt, [eveValue])).toEqual({ TO_PROD: `x${secret}`, TO_BILLING: billingValue, ...missing });

    // A Developer: prod is protected (none), and not a member of billing.
    const dev = await member(shop.id, 'Developer');
    expect(await stateOf(dev.jwt, [secret, billingValue, eveValue])).toEqual({
      TO_PROD: forbidden('TO_PROD'),
      TO_BILLING: forbidden('TO_BILLING'),
      ...missing,
    });
    // An explicit `none` override on a readable environment, for a Read-only member of billing too.
    const reader = await member(shop.id, 'Read-only');
    await app.request('PUT', `/v1/projects/${billing.id}/members/${reader.id}`, {
      token: jwt,
      body: { role: 'Read-only' },
    });
    expect((await stateOf(reader.jwt, [eveValue])).TO_BILLING).toBe(billingValue);
    const none = await app.request('PUT', `/v1/projects/${shop.id}/members/${reader.id}/envs/prod`, {
      token: jwt,
      body: { permission: 'none' },
    });
    expect(none.status).toBe(200);
    expect((await stateOf(reader.jwt, [secret, eveValue])).TO_PROD).toBe(forbidden('TO_PROD'));

    // Tokens: one limited to dev; one restricted to the shop project; the Owner's workspace-wide one.
    const devOnly = (await createToken(app, jwt, { scope: 'read', envs: ['dev'] })).token;
    expect(await stateOf(devOnly, [secret, billingValue, eveValue])).toEqual({
      TO_PROD: forbidden('TO_PROD'),
      TO_BILLING: forbidden('TO_BILLING'),
      ...missing,
    });
    const shopOnly = (await createToken(app, jwt, { scope: 'read', projectId: shop.id })).token;
    expect(await stateOf(shopOnly, [billingValue, eveValue])).toEqual({
      TO_PROD: `x${secret}`,
      TO_BILLING: forbidden('TO_BILLING'),
      ...missing,
    });

    // Pull: the whole pull fails with the flat 422 naming the first key that cannot resolve.
    for (const token of [devOnly, shopOnly, (await createToken(app, dev.jwt, { scope: 'read' })).token]) {
      const res = await pull(app, token, shop.id, 'dev');
      seen.push(res.text);
      expect(res.status).toBe(422);
      const body = res.json(flatReferenceErrorBody);
      expect(body.error).toBe('REFERENCE_FORBIDDEN');
      expect(body.message).toBe(forbidden(body.key));
    }
    // Export (masked, and revealed by the Developer's write token on dev): the literal, never the target's value.
    const devWrite = (await createToken(app, dev.jwt, { scope: 'write' })).token;
    for (const reveal of [false, true]) {
      const res = await app.request('GET', `/v1/projects/${shop.id}/envs/dev/export?metadata=false&reveal=${reveal}`, {
        token: devWrite,
      });
      seen.push(res.text);
      expect(res.status).toBe(200);
      expect(res.text).toContain('TO_PROD=x${prod.S}\n');
    }
    // The same environment through a token of the other workspace: its project is not there at all.
    const eveToken = (await createToken(app, eve.jwt, { scope: 'read' })).token;
    const theirs = await pull(app, eveToken, shop.id, 'dev');
    seen.push(theirs.text);
    expect(theirs.status).toBe(404);

    for (const text of seen) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(billingValue);
      expect(text).not.toContain(eveValue);
    }
    expect(app.logs()).not.toContain(secret);
    expect(app.logs()).not.toContain(eveValue);
  });

  it('looks slugs up in the reader’s own workspace: the same slug elsewhere is another project', async () => {
    const name = `common ${uniq()}`;
    const mine = await createProject(app, jwt, { name, envs: ['dev'] });
    const eve = await signupUser(app, 'Eve');
    const hers = await createProject(app, eve.jwt, { name, envs: ['dev'] });
    expect(hers.slug).toBe(mine.slug);
    await upsert(app, jwt, mine.id, ['dev'], [{ key: 'WHO', value: 'mine', type: 'plain' }]);
    await upsert(app, eve.jwt, hers.id, ['dev'], [{ key: 'WHO', value: 'hers', type: 'plain' }]);
    const reader = await createProject(app, eve.jwt, { name: `reader ${uniq()}`, envs: ['dev'] });
    await upsert(app, eve.jwt, reader.id, ['dev'], [{ key: 'R', value: `\${${mine.slug}.dev.WHO}`, type: 'plain' }]);
    const token = (await createToken(app, eve.jwt, { scope: 'read' })).token;
    expect((await pull(app, token, reader.id, 'dev')).text).toBe('R=hers\n');
  });

  it('finds cycles across three environments and counts the D25 limits across environments', async () => {
    const p = await createProject(app, jwt, { name: `cyc ${uniq()}`, envs: ['dev', 'staging', 'qa'] });
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: '${staging.B}', type: 'plain' }]);
    await upsert(app, jwt, p.id, ['staging'], [{ key: 'B', value: '${qa.C}', type: 'plain' }]);
    await upsert(app, jwt, p.id, ['qa'], [{ key: 'C', value: 'c-${dev.A}', type: 'plain' }]);
    const token = (await createToken(app, jwt, { scope: 'read' })).token;
    const cyc = await pull(app, token, p.id, 'dev');
    expect(cyc.status).toBe(422);
    expect(cyc.json(flatReferenceErrorBody)).toEqual({
      error: 'CIRCULAR_REFERENCE',
      message: 'A: circular reference detected',
      key: 'A',
    });
    expect((await listing(app, jwt, p.id, 'staging')).byKey.B?.resolveError).toBe('B: circular reference detected');

    // A chain of 70 links alternating between two environments (each one alone has 35).
    const q = await createProject(app, jwt, { name: `chain ${uniq()}`, envs: ['dev', 'staging'] });
    const k = (i: number) => `V${String(i).padStart(2, '0')}`;
    const link = (i: number) => ({
      key: k(i),
      value: i === 69 ? 'end' : `\${${(i + 1) % 2 ? 'staging' : 'dev'}.${k(i + 1)}}`,
      type: 'plain',
    });
    const links = Array.from({ length: 70 }, (_, i) => link(i));
    await upsert(
      app,
      jwt,
      q.id,
      ['dev'],
      links.filter((_, i) => i % 2 === 0),
    );
    await upsert(
      app,
      jwt,
      q.id,
      ['staging'],
      links.filter((_, i) => i % 2 === 1),
    );
    const long = await pull(app, token, q.id, 'dev');
    expect(long.status).toBe(422);
    expect(long.json(flatReferenceErrorBody)).toMatchObject({ error: 'REFERENCE_LIMIT', key: 'V00' });

    // Over 1 MiB from values of 60 KiB in another environment.
    const r = await createProject(app, jwt, { name: `big ${uniq()}`, envs: ['dev', 'staging'] });
    await upsert(app, jwt, r.id, ['staging'], [{ key: 'H', value: 'h'.repeat(60 * 1024), type: 'plain' }]);
    await upsert(app, jwt, r.id, ['dev'], [{ key: 'BIG', value: '${staging.H}'.repeat(20), type: 'plain' }]);
    const big = await pull(app, token, r.id, 'dev');
    expect(big.status).toBe(422);
    expect(big.json(flatReferenceErrorBody)).toMatchObject({
      error: 'REFERENCE_LIMIT',
      key: 'BIG',
      message: 'BIG: resolved value larger than 1 MiB',
    });
  });

  it('masks a value that used a secret of another environment (D26), also for a reveal without write there', async () => {
    const secret = `s3cr3t-${uniq()}`;
    const p = await createProject(app, jwt, { name: `mask ${uniq()}`, envs: ['dev', 'staging'] });
    await upsert(
      app,
      jwt,
      p.id,
      ['staging'],
      [
        { key: 'S', value: secret, type: 'secret' },
        { key: 'P', value: 'plain-value', type: 'plain' },
      ],
    );
    await upsert(
      app,
      jwt,
      p.id,
      ['dev'],
      [
        { key: 'USES_SECRET', value: 'u:${staging.S}', type: 'plain' },
        { key: 'USES_PLAIN', value: 'u:${staging.P}', type: 'plain' },
      ],
    );
    const masked = await listing(app, jwt, p.id, 'dev');
    expect(masked.byKey.USES_SECRET?.resolvedValue).toBe('***');
    expect(masked.byKey.USES_PLAIN?.resolvedValue).toBe('u:plain-value');
    expect(masked.text).not.toContain(secret);
    expect((await listing(app, jwt, p.id, 'dev', true)).byKey.USES_SECRET?.resolvedValue).toBe(`u:${secret}`);
    // A Developer who writes dev but only reads staging reveals dev, not staging's secret through it.
    const dev = await member(p.id, 'Developer');
    await app.request('PUT', `/v1/projects/${p.id}/members/${dev.id}/envs/staging`, {
      token: jwt,
      body: { permission: 'read' },
    });
    const revealed = await listing(app, dev.jwt, p.id, 'dev', true);
    expect(revealed.byKey.USES_SECRET?.resolvedValue).toBe('***');
    expect(revealed.text).not.toContain(secret);
    const devWrite = (await createToken(app, dev.jwt, { scope: 'write' })).token;
    const exported = await app.request('GET', `/v1/projects/${p.id}/envs/dev/export?metadata=false&reveal=true`, {
      token: devWrite,
    });
    expect(exported.text).toBe('USES_PLAIN=u:plain-value\nUSES_SECRET=***\n');
    // Pull resolves for a reader who may read staging (a pull is plaintext, as a pull of staging would be).
    expect((await pull(app, (await createToken(app, dev.jwt, { scope: 'read' })).token, p.id, 'dev')).text).toContain(
      `USES_SECRET=u:${secret}`,
    );
  });

  it('never answers a stale body or 304 after a change in a referenced environment, nor to another reader', async () => {
    const p = await createProject(app, jwt, { name: `etag ${uniq()}`, envs: ['dev', 'staging', 'prod'] });
    await upsert(app, jwt, p.id, ['staging'], [{ key: 'X', value: 'one', type: 'plain' }]);
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'R', value: '${staging.X}', type: 'plain' }]);
    const token = (await createToken(app, jwt, { scope: 'read' })).token;
    const first = await pull(app, token, p.id, 'dev');
    expect(first.text).toBe('R=one\n');
    const etag = first.headers.get('etag')!;
    expect((await pull(app, token, p.id, 'dev', { 'if-none-match': etag })).status).toBe(304);
    const revisionOf = async (env: string) =>
      (await app.request('GET', `/v1/projects/${p.id}/envs/${env}/vars`, { token: jwt })).headers.get(
        'x-svcenv-revision',
      );
    const devRevision = await revisionOf('dev');

    await app.request('PUT', `/v1/projects/${p.id}/envs/staging/vars/X`, { token: jwt, body: { value: 'two' } });
    const after = await pull(app, token, p.id, 'dev', { 'if-none-match': etag });
    expect([after.status, after.text]).toEqual([200, 'R=two\n']);
    expect(after.headers.get('etag')).not.toBe(etag);
    // Revisions belong to the environment written (D49): dev did not move.
    expect(devRevision).not.toBeNull();
    expect(await revisionOf('dev')).toBe(devRevision);

    // A deleted referenced key resolves to "" (D25), and a new one is seen again.
    await app.request('DELETE', `/v1/projects/${p.id}/envs/staging/vars/X`, { token: jwt });
    expect((await pull(app, token, p.id, 'dev')).text).toBe('R=\n');
    await upsert(app, jwt, p.id, ['staging'], [{ key: 'X', value: 'three', type: 'plain' }]);
    expect((await pull(app, token, p.id, 'dev')).text).toBe('R=three\n');

    // The cached resolution of one reader is not another's: a dev-only token is refused, the first still served.
    const devOnly = (await createToken(app, jwt, { scope: 'read', envs: ['dev'] })).token;
    expect((await pull(app, devOnly, p.id, 'dev')).status).toBe(422);
    expect((await pull(app, token, p.id, 'dev')).text).toBe('R=three\n');
    expect((await pull(app, devOnly, p.id, 'dev')).status).toBe(422);
    // A permission taken away after a pull was cached: the next pull is refused, not served from the cache.
    const dev = await member(p.id, 'Developer');
    const devToken = (await createToken(app, dev.jwt, { scope: 'read' })).token;
    expect((await pull(app, devToken, p.id, 'dev')).text).toBe('R=three\n');
    await app.request('PUT', `/v1/projects/${p.id}/members/${dev.id}/envs/staging`, {
      token: jwt,
      body: { permission: 'none' },
    });
    const refused = await pull(app, devToken, p.id, 'dev');
    expect(refused.status).toBe(422);
    expect(refused.text).not.toContain('three');
  });

  it('wakes a held pull when a referenced environment changes (D43)', async () => {
    const p = await createProject(app, jwt, { name: `poll ${uniq()}`, envs: ['dev', 'staging'] });
    const q = await createProject(app, jwt, { name: `other ${uniq()}`, envs: ['prod'] });
    await upsert(app, jwt, p.id, ['staging'], [{ key: 'X', value: 'one', type: 'plain' }]);
    await upsert(app, jwt, q.id, ['prod'], [{ key: 'Y', value: 'y1', type: 'plain' }]);
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'R', value: `\${staging.X}-\${${q.slug}.prod.Y}`, type: 'plain' }]);
    const token = (await createToken(app, jwt, { scope: 'read' })).token;
    const first = await pull(app, token, p.id, 'dev');
    expect(first.text).toBe('R=one-y1\n');
    for (const [target, key, value, body] of [
      [`/v1/projects/${p.id}/envs/staging/vars/X`, 'X', 'two', 'R=two-y1\n'],
      [`/v1/projects/${q.id}/envs/prod/vars/Y`, 'Y', 'y2', 'R=two-y2\n'],
    ] as const) {
      const etag = (await pull(app, token, p.id, 'dev')).headers.get('etag')!;
      const held = app.request('GET', `${pullPath(p.id, 'dev')}&wait=30`, {
        token,
        headers: { 'if-none-match': etag },
      });
      await sleep(300);
      const t0 = Date.now();
      await app.request('PUT', target, { token: jwt, body: { value } });
      const res = await held;
      expect([res.status, res.text], key).toEqual([200, body]);
      expect(since(t0)).toBeLessThan(1000);
    }
  });
});

describe.skipIf(dialectName !== 'postgres')('references across two instances on PostgreSQL (D49)', () => {
  it('never serves a stale body or 304 from one instance after a referenced change on the other, and wakes its held pulls', async () => {
    const schema = await freshPgSchema();
    const masterKey = randomBytes(32);
    const a = await startApp({ databaseUrl: schema.url, masterKey });
    const b = await startApp({ databaseUrl: schema.url, masterKey });
    try {
      const { jwt } = await signupUser(a);
      const p = await createProject(a, jwt, { name: 'two', envs: ['dev', 'staging'] });
      await upsert(a, jwt, p.id, ['staging'], [{ key: 'X', value: 'one', type: 'plain' }]);
      await upsert(a, jwt, p.id, ['dev'], [{ key: 'R', value: '${staging.X}', type: 'plain' }]);
      const token = (await createToken(a, jwt)).token;
      const url = pullPath(p.id, 'dev');
      const first = await a.request('GET', url, { token });
      expect(first.text).toBe('R=one\n');
      const etag = first.headers.get('etag')!;
      expect((await a.request('GET', url, { token, headers: { 'if-none-match': etag } })).status).toBe(304);
      await b.request('PUT', `/v1/projects/${p.id}/envs/staging/vars/X`, { token: jwt, body: { value: 'two' } });
      const after = await a.request('GET', url, { token, headers: { 'if-none-match': etag } });
      expect([after.status, after.text]).toEqual([200, 'R=two\n']);

      const etag2 = after.headers.get('etag')!;
      const held = a.request('GET', `${url}&wait=30`, { token, headers: { 'if-none-match': etag2 } });
      await sleep(500);
      const t0 = Date.now();
      await b.request('PUT', `/v1/projects/${p.id}/envs/staging/vars/X`, { token: jwt, body: { value: 'three' } });
      const res = await held;
      expect([res.status, res.text]).toEqual([200, 'R=three\n']);
      expect(Date.now() - t0).toBeLessThan(1000);
    } finally {
      await a.stop();
      await b.stop();
      await schema.drop();
    }
  });
});
