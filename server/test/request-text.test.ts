import { type Operation, operations } from '@svcenv/contract/operations';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp } from './harness.js';

/**
 * Spec "Errors": text PostgreSQL cannot store (a NUL) or that is not UTF-8 is refused in every path parameter
 * and query value of every operation with 400 VALIDATION naming the parameter, never a 500, on SQLite and
 * PostgreSQL alike (server/src/http/operation.ts refuses it for every route it registers; http/body.ts in
 * bodies). The operations are walked from the contract's registry, so a route added later is covered the day
 * it is added.
 */
const PARAM = /\/:([A-Za-z]+)/g;
const paramNames = (op: Operation) => [...op.path.matchAll(PARAM)].map((m) => m[1]!);
const queryNames = (op: Operation) => Object.keys((op.query as { shape?: object } | undefined)?.shape ?? {});

/** A well-formed value of each path parameter, so that only the one under test is wrong. */
const fine = (name: string) =>
  ({ env: 'dev', key: 'SOME_KEY', os: 'linux', arch: 'x64' })[name] ?? '00000000-0000-4000-8000-000000000000';

/** The operation's path with `raw` (sent as it is, percent-encoding included) as `target`'s value. */
function pathWith(op: Operation, target: string | null, raw: string): string {
  return op.path.replace(PARAM, (_m, name: string) => `/${name === target ? raw : encodeURIComponent(fine(name))}`);
}

const withParams = Object.values(operations).filter((op) => paramNames(op).length > 0);
const withQuery = Object.values(operations).filter((op) => queryNames(op).length > 0);

describe(`unsafe text in params and queries (${dialectName})`, () => {
  let app: TestApp;
  let jwt: string;
  let token: string;
  const credential = (op: Operation) => (op.auth === 'token' ? token : jwt);
  const statuses: string[] = [];

  beforeAll(async () => {
    app = await startApp();
    ({ jwt } = await signupUser(app));
    token = (await createToken(app, jwt, { scope: 'write' })).token;
  });
  afterAll(async () => {
    await app?.stop();
  });

  async function expectRefused(op: Operation, path: string, field: string, message: string) {
    const res = await app.request(op.method, path, { token: credential(op) });
    statuses.push(`${res.status} ${op.method} ${path}`);
    expect(res.status, `${op.name} ${path}`).toBe(400);
    expect(res.error, `${op.name} ${path}`).toEqual({ code: 'VALIDATION', message, field });
  }

  it('walks enough of the registry to mean something', () => {
    expect(withParams.length).toBeGreaterThan(40);
    expect(withQuery.length).toBeGreaterThan(12);
    // The two found by the fault tests.
    expect(withQuery).toContain(operations.findProjectWorkspace);
    expect(withQuery).toContain(operations.ssoStart);
  });

  it('refuses a NUL in every path parameter of every operation, naming it', async () => {
    for (const op of withParams) {
      for (const name of paramNames(op)) {
        for (const raw of ['%00', `a%00b`, `${encodeURIComponent(fine(name))}%00`]) {
          await expectRefused(op, pathWith(op, name, raw), name, 'text may not contain a NUL character');
        }
      }
    }
  });

  it('refuses a NUL in every query parameter of every operation, and in one it does not know, naming it', async () => {
    for (const op of withQuery) {
      for (const name of [...queryNames(op), 'unknown_thing']) {
        for (const raw of ['%00', 'k8s%00', 'a%00b']) {
          const path = `${pathWith(op, null, '')}?${name}=${raw}`;
          await expectRefused(op, path, name, 'text may not contain a NUL character');
        }
      }
      // A NUL in a name: not echoed as one.
      await expectRefused(op, `${pathWith(op, null, '')}?a%00b=1`, '(unknown)', 'text may not contain a NUL character');
      // The same parameter repeated (a list, as `env` of the diff): any NUL in it.
      const [first] = queryNames(op);
      await expectRefused(
        op,
        `${pathWith(op, null, '')}?${first}=dev&${first}=%00`,
        first!,
        'text may not contain a NUL character',
      );
    }
  });

  it('refuses query text that is not percent-encoded UTF-8 (bad bytes, surrogates, overlong forms, a bare %)', async () => {
    for (const op of withQuery) {
      for (const name of queryNames(op)) {
        for (const raw of ['%ff', 'a%ed%a0%80', '%c0%80', '%e2%82', '100%', '%zz']) {
          await expectRefused(
            op,
            `${pathWith(op, null, '')}?${name}=${raw}`,
            name,
            'text must be percent-encoded UTF-8',
          );
        }
      }
    }
    // A credential-shaped name is not echoed.
    const pasted = ['ghp_', 'R4nd0mLooking', 'Secret1234567890abcdef'].join('');
    const res = await app.request('GET', `${operations.findProjectWorkspace.path}?${pasted}=%ff`, { token: jwt });
    expect(res.error).toMatchObject({ code: 'VALIDATION', field: '(unknown)' });
    expect(res.text).not.toContain(pasted);
  });

  it('refuses a path that is not UTF-8 before routing, in the error shape', async () => {
    for (const op of withParams) {
      const [name] = paramNames(op);
      for (const raw of ['%ff', '%ed%a0%80', '%c0%80']) {
        const path = pathWith(op, name!, raw);
        const res = await app.request(op.method, path, { token: credential(op) });
        statuses.push(`${res.status} ${op.method} ${path}`);
        expect(res.status, path).toBe(400);
        expect(res.error, path).toEqual({ code: 'VALIDATION', message: 'malformed URL path', field: 'path' });
      }
    }
  });

  it('still takes other text as it was sent: control characters, non-ASCII, an encoded %', async () => {
    const p = await createProject(app, jwt, { name: 'Text' });
    const q = (s: string) => app.request('GET', `${operations.findProjectWorkspace.path}?project=${s}`, { token: jwt });
    // Valid text reaches the route, which answers about it (404: no such project), on both databases.
    for (const raw of ['%01%1f%7f', '%e2%80%ae', '%ef%bf%bf', '%F0%9F%98%80', '100%25', 'a+b']) {
      const res = await q(raw);
      expect(res.status, raw).toBe(404);
    }
    expect((await q(p.slug)).status).toBe(200);
  });

  it('refuses a lone surrogate in a JSON body, which would be stored as U+FFFD in its place', async () => {
    const p = await createProject(app, jwt, { name: 'Surrogates' });
    const send = (path: string, raw: string) =>
      app.request('POST', path, { token: jwt, rawBody: raw, headers: { 'content-type': 'application/json' } });
    const message = 'text may not contain a lone surrogate (\\ud800-\\udfff): it is not a character';
    for (const [raw, field] of [
      ['{"name":"a\\ud800b"}', 'name'],
      ['{"name":"a\\uDC00"}', 'name'],
      ['{"name":"ok","desc":"\\udbff"}', 'desc'],
    ] as const) {
      const res = await send(operations.createProject.path, raw);
      expect(res.error, raw).toEqual({ code: 'VALIDATION', message, field });
    }
    const bulk = `/v1/projects/${p.id}/vars`;
    const res = await send(bulk, '{"envs":["dev"],"items":[{"key":"A","value":"x"},{"key":"B","value":"x\\ud800y"}]}');
    expect(res.error).toEqual({ code: 'VALIDATION', message, field: 'items.1.value' });
    // A pair is a character (U+1F600), stored and answered as sent.
    const pair = await send(bulk, '{"envs":["dev"],"items":[{"key":"A","value":"x\\ud83d\\ude00y"}]}');
    expect(pair.status).toBe(200);
    const vars = await app.request('GET', `/v1/projects/${p.id}/envs/dev/vars?reveal=true`, { token: jwt });
    expect(vars.text).toContain('"value":"x😀y"');
  });

  it('refuses a body that is not UTF-8, which would be read with U+FFFD in place of its bytes', async () => {
    const p = await createProject(app, jwt, { name: 'Bytes' });
    const send = (bytes: number[]) =>
      fetch(`${app.url}/v1/projects/${p.id}/vars`, {
        method: 'POST',
        headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
        body: new Uint8Array(bytes),
      });
    const json = (s: string) => [...Buffer.from(s)];
    const head = json('{"envs":["dev"],"items":[{"key":"A","value":"x');
    const tail = json('"}]}');
    for (const bad of [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const res = await send([...head, ...bad, ...tail]);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: { code: 'VALIDATION', message: 'request body is not UTF-8', field: 'body' },
      });
    }
    // UTF-8 itself, a byte order mark in front included, is taken as sent.
    const ok = await send([0xef, 0xbb, 0xbf, ...head, ...json('é😀'), ...tail]);
    expect(ok.status).toBe(200);
    const vars = await app.request('GET', `/v1/projects/${p.id}/envs/dev/vars?reveal=true`, { token: jwt });
    expect(vars.text).toContain('"value":"xé😀"');
  });

  it('finds a NUL or a lone surrogate at any depth, naming the start of its path (no stack overflow)', async () => {
    for (const [leaf, message] of [
      ['"\\u0000"', 'text may not contain a NUL character'],
      ['"\\ud800"', 'text may not contain a lone surrogate (\\ud800-\\udfff): it is not a character'],
    ] as const) {
      for (const n of [100, 200_000]) {
        const raw = `${'{"a":'.repeat(n)}${leaf}${'}'.repeat(n)}`;
        const res = await app.request('POST', operations.createProject.path, {
          token: jwt,
          rawBody: raw,
          headers: { 'content-type': 'application/json' },
        });
        expect(res.error).toEqual({ code: 'VALIDATION', message, field: `${Array(16).fill('a').join('.')}...` });
      }
    }
  });

  it('answered none of it with a 500, and logged no unhandled error', () => {
    expect(statuses.length).toBeGreaterThan(200);
    expect(statuses.filter((s) => s.startsWith('5'))).toEqual([]);
    expect(app.logs()).not.toContain('unhandled error');
  });
});
