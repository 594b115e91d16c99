import { type Operation, operations } from '@svcenv/contract/operations';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp } from './harness.js';

/**
 * Guide convention 5 and spec "Errors": whatever a client sends, the server answers in the error shape and never
 * 500. Every operation of the contract's registry (so a route added later is fuzzed the day it is added) gets
 * malformed path parameters, query strings and bodies: wrong types, huge strings, NUL, lone surrogates, bytes
 * that are not UTF-8, deep nesting, unknown and prototype-polluting fields, other content types. On SQLite and
 * PostgreSQL; a few seconds a database.
 */
const PARAM = /\/:([A-Za-z]+)/g;
const paramNames = (op: Operation) => [...op.path.matchAll(PARAM)].map((m) => m[1]!);

/** The keys of an object schema, through optional, nullable, default, pipe and refinements (zod 4). */
function keysOf(schema: unknown): string[] {
  let s = schema as { shape?: object; _zod?: { def?: Record<string, unknown> } } | undefined;
  for (let i = 0; i < 8 && s; i++) {
    if (s.shape) return Object.keys(s.shape);
    const def = s._zod?.def;
    s = (def?.innerType ?? def?.in ?? def?.schema) as typeof s;
  }
  return [];
}

const NIL = '00000000-0000-4000-8000-000000000000';
const big = (n: number) => 'x'.repeat(n);
const deep = (n: number, leaf: string) => `${'['.repeat(n)}${leaf}${']'.repeat(n)}`;
const deepObject = (n: number, leaf: string) => `${'{"a":'.repeat(n)}${leaf}${'}'.repeat(n)}`;

/** Path parameter values, as sent (percent-encoding included). */
const BAD_PARAMS = [
  '%00',
  'a%00b',
  '%ff',
  '%ed%a0%80',
  '%c0%80',
  big(600),
  big(400),
  '..%2F..%2Fetc',
  '%2e%2e',
  "'%20OR%201=1--",
  '__proto__',
  'constructor',
  '-1',
  '1e308',
  '%F0%9F%98%80',
  NIL.toUpperCase(),
  `${NIL}x`,
  '%25',
];
/** Query strings for one parameter `k` (the value part, or the whole pair where the form itself is the point). */
const BAD_QUERIES = (k: string) => [
  `${k}=%00`,
  `${k}=%ff`,
  `${k}=%ed%a0%80`,
  `${k}=${big(20_000)}`,
  `${k}=1&${k}=2&${k}=3`,
  `${k}[]=x`,
  `${k}[a]=1`,
  `${k}=`,
  k,
  `${k}=-1`,
  `${k}=1e999`,
  `${k}=true`,
  `${k}=%7B%22a%22%3A1%7D`,
  `__proto__=1&${k}=1`,
  `constructor[prototype][x]=1`,
];
/** Bodies sent as they are (content type application/json unless given). */
const BAD_BODIES: { raw: string | Buffer; type?: string }[] = [
  { raw: 'null' },
  { raw: '[]' },
  { raw: '1' },
  { raw: '"text"' },
  { raw: 'true' },
  { raw: '{' },
  { raw: '{"a":1,}' },
  { raw: '{"__proto__":{"admin":true}}' },
  { raw: '{"constructor":{"prototype":{"admin":true}}}' },
  { raw: deep(20_000, '1') },
  { raw: deep(20_000, '"\\u0000"') },
  { raw: deep(20_000, '"\\ud800"') },
  { raw: deepObject(5_000, '"\\u0000"') },
  { raw: `{"a":"${big(2 * 1024 * 1024)}"}` },
  { raw: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
  { raw: Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]) },
  { raw: '{}', type: 'text/plain' },
  { raw: 'a=1', type: 'application/x-www-form-urlencoded' },
  { raw: '{}', type: 'application/json; charset=latin1' },
  { raw: '{}', type: 'multipart/form-data; boundary=x' },
];
/** Values for each field of a body, one field at a time. */
const BAD_VALUES: unknown[] = [
  null,
  1,
  -1,
  1e308,
  0.5,
  true,
  [],
  {},
  [null],
  { __proto__: null, constructor: 'x' },
  big(100_000),
  'a\u0000b',
  'a\ud800b',
  '',
  ' ',
  '../../etc/passwd',
  "'; drop table users; --",
  '${A}${B}${C}',
  'https://169.254.169.254/latest/meta-data',
  NIL,
];

/** What the generator reads of a JSON schema (zod's `toJSONSchema` of an operation's input). */
interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  /** `false` after `prefixItems` (a tuple: nothing past its entries). */
  items?: JsonSchema | false;
  prefixItems?: JsonSchema[];
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
}
const inputSchema = (schema: unknown): JsonSchema | null => {
  if (!schema) return null;
  try {
    return z.toJSONSchema(schema as z.ZodType, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  } catch {
    return null;
  }
};
/** Texts that often match a field's pattern: names, keys, actions, colours, numbers, times. */
const CANDIDATES = [
  'dev',
  'SOME_KEY',
  'fuzz-slug',
  'var.update',
  '#336699',
  '30',
  '1',
  '123456',
  'true',
  'x',
  'Fuzz name',
  NIL,
];
function exampleString(s: JsonSchema): string {
  if (s.format === 'uuid') return NIL;
  if (s.format === 'email') return 'fuzz-target@example.test';
  if (s.format === 'uri' || s.format === 'url') return 'https://example.test/hook';
  if (s.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
  const re = s.pattern ? new RegExp(s.pattern) : null;
  const fits = (c: string) => (!re || re.test(c)) && c.length >= (s.minLength ?? 0) && c.length <= (s.maxLength ?? 1e9);
  return CANDIDATES.find(fits) ?? 'x'.repeat(Math.max(1, s.minLength ?? 1));
}
/** A value the schema accepts, as far as the generator can tell (checked against zod by the caller). */
function example(s: JsonSchema, all: boolean): unknown {
  if ('const' in s) return s.const;
  if (s.enum) return s.enum[0];
  const alt = s.anyOf ?? s.oneOf;
  if (alt) return example(alt.find((a) => a.type !== 'null') ?? alt[0]!, all);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  switch (type) {
    case 'object': {
      const keys = all ? Object.keys(s.properties ?? {}) : (s.required ?? []);
      return Object.fromEntries(keys.map((k) => [k, example(s.properties?.[k] ?? {}, all)]));
    }
    case 'array':
      // A tuple (Redis statements, the two users of an alternate rotation): one example per entry.
      if (s.prefixItems) return s.prefixItems.map((p) => example(p, all));
      return Array.from({ length: Math.max(1, s.minItems ?? 1) }, () => example(s.items || {}, all));
    case 'string':
      return exampleString(s);
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
  }
  return 'x';
}
/** The object schema inside a nullable body (`anyOf: [object, null]`). */
const objectOf = (s: JsonSchema | null): JsonSchema | null =>
  !s ? null : s.properties ? s : ((s.anyOf ?? []).find((a) => a.properties) ?? null);
/** Values of the right kind at the edges of what a field takes, and just past them. */
function edges(s: JsonSchema): unknown[] {
  const alt = s.anyOf ?? s.oneOf;
  if (alt) return [...alt.flatMap((a) => (a.type === 'null' ? [null] : edges(a)))];
  if (s.enum) return s.enum;
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  const max = s.maxLength;
  switch (type) {
    case 'string':
      return [
        '',
        ' ',
        exampleString(s),
        exampleString(s).toUpperCase(),
        ...(max !== undefined && max <= 70_000 ? ['x'.repeat(max), 'x'.repeat(max + 1), 'é'.repeat(max)] : []),
        '😀é\u202e\u0301',
        '\u0001\u001f\u007f\t\r\n',
        '${A}${B:-${C}}',
        "' or 1=1; --",
        '%00%ff',
        '../../etc/passwd',
        'https://127.0.0.1:1/x',
        'http://[::1]/x',
        'https://user:pw@example.test/x',
        NIL.toUpperCase(),
        'ffffffff-ffff-ffff-ffff-ffffffffffff',
        '9999-12-31T23:59:59.999Z',
        '1970-01-01T00:00:00.000Z',
        '2026-02-30T00:00:00.000Z',
        '+275760-09-13T00:00:00.000Z',
        '2147483648',
        '-1',
      ];
    case 'integer':
    case 'number':
      return [0, -1, 1.5, 2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 - 1, -(2 ** 53 - 1), s.minimum, s.maximum]
        .concat(s.maximum !== undefined ? [s.maximum + 1] : [])
        .filter((v) => v !== undefined);
    case 'boolean':
      return [true, false];
    case 'array': {
      if (s.prefixItems) {
        const whole = s.prefixItems.map((p) => example(p, true));
        return [
          [],
          whole.slice(0, -1),
          whole,
          [...whole, whole[0]],
          ...edges(s.prefixItems[0]!).map((v) => [v, ...whole.slice(1)]),
        ];
      }
      const one = s.items ? example(s.items, true) : 'x';
      const n = Math.min(s.maxItems ?? 200, 200);
      return [
        [],
        [one],
        [one, one],
        Array.from({ length: n }, () => one),
        ...(s.items ? edges(s.items).map((v) => [v]) : []),
      ];
    }
    case 'object':
      return [{}];
  }
  return [null, 'x', 1];
}
/** Query values (always text) at the edges: numbers, times, cursors a client could make up. */
const b64 = (t: string) => Buffer.from(t).toString('base64url');
const QUERY_EDGES = [
  '0',
  '1',
  '200',
  '201',
  '9999',
  '2147483647',
  '2147483648',
  '9007199254740993',
  '1e3',
  NIL,
  NIL.toUpperCase(),
  'dev',
  'true',
  'false',
  '9999-12-31T23:59:59.999Z',
  '2026-13-45T00:00:00.000Z',
  '0000-01-01T00:00:00.000Z',
  b64('2026-01-01T00:00:00.000Z~9007199254740991'),
  b64('2026-01-01T00:00:00.000Z~2147483648'),
  b64('9999-12-31T23:59:59.999Z~1'),
  b64('0000-01-01T00:00:00.000Z~1'),
  '0001-01-01T00:30:00+01:00',
  '9999-12-31T23:59:59.999-14:00',
  b64('2147483648'),
  b64('9007199254740991'),
  b64('-1'),
  b64('1e400'),
  b64('~'),
  'A,B,C',
  '😀',
];

describe(`fuzzing every operation (${dialectName})`, () => {
  let app: TestApp;
  let jwt: string;
  let token: string;
  let projectId: string;
  const answers: { status: number; upstream: boolean; what: string; ms: number }[] = [];

  beforeAll(async () => {
    // No DNS for the webhook, audit stream and issuer URLs a body names: refused at once.
    app = await startApp({
      resolve: async () => {
        throw Object.assign(new Error('no DNS in the fuzz test'), { code: 'ENOTFOUND' });
      },
    });
    ({ jwt } = await signupUser(app, 'Fuzz'));
    token = (await createToken(app, jwt, { scope: 'write' })).token;
    projectId = (await createProject(app, jwt, { name: 'fuzzed' })).id;
  });
  afterAll(async () => {
    await app?.stop();
  });

  /** A well-formed value of each path parameter; a DELETE never names a real thing. */
  const fine = (op: Operation, name: string) => {
    if (name === 'env') return 'dev';
    if (name === 'key') return 'SOME_KEY';
    if (name === 'os') return 'linux';
    if (name === 'arch') return 'x64';
    if (name === 'id' && op.path.startsWith('/v1/projects/') && op.method !== 'DELETE') return projectId;
    return NIL;
  };
  const pathWith = (op: Operation, target: string | null, raw: string) =>
    op.path.replace(PARAM, (_m, name: string) => `/${name === target ? raw : encodeURIComponent(fine(op, name))}`);

  /** Routes open to either credential are fuzzed with the access token while this is set. */
  let asToken = false;
  async function send(op: Operation, path: string, body?: string | Buffer, type = 'application/json') {
    const headers: Record<string, string> = {};
    const useToken = op.auth === 'token' || (op.auth === 'any' && asToken);
    if (op.auth !== 'none') headers.authorization = `Bearer ${useToken ? token : jwt}`;
    if (body !== undefined) headers['content-type'] = type;
    const t0 = performance.now();
    const res = await fetch(app.url + path, {
      method: op.method,
      headers,
      body: typeof body === 'string' || body === undefined ? body : new Uint8Array(body),
      redirect: 'manual',
    });
    // A binary (a CLI download) is not read: its headers are the answer.
    const binary = res.headers.get('content-type') === 'application/octet-stream';
    const text = binary ? '' : await res.text();
    if (binary) await res.body?.cancel();
    const what = `${op.name}: ${op.method} ${path.slice(0, 120)}${body === undefined ? '' : ` <${String(body).slice(0, 60)}>`}`;
    // A 502 UPSTREAM_FAILED is the managed database's answer, not ours (D70): the fuzz's connections name
    // hosts that its DNS never resolves, so `test`, `rotate-root` and a lease are refused by "upstream".
    const upstream = res.status === 502 && text.includes('"UPSTREAM_FAILED"');
    answers.push({ status: res.status, upstream, what, ms: performance.now() - t0 });
    if (!upstream) expect(res.status, `${what}\n${text.slice(0, 300)}`).toBeLessThan(500);
    if (res.status >= 400 && (res.headers.get('content-type') ?? '').includes('json')) {
      const parsed = JSON.parse(text) as { error?: unknown };
      // The one error shape (spec "Errors"; the flat pull reference error has a string `error`).
      expect(parsed.error, what).toBeDefined();
    }
  }

  /** Runs `jobs` a few at a time: the fuzz is sequential per operation, the operations side by side. */
  async function inTurns(ops: Operation[], job: (op: Operation) => Promise<void>) {
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < ops.length) await job(ops[next++]!);
      }),
    );
  }
  const all = Object.values(operations) as Operation[];
  const takesBody = (op: Operation) => op.method !== 'GET';

  it('path parameters', async () => {
    await inTurns(
      all.filter((op) => paramNames(op).length > 0),
      async (op) => {
        for (const name of paramNames(op)) for (const raw of BAD_PARAMS) await send(op, pathWith(op, name, raw));
      },
    );
  });

  it('query strings', async () => {
    await inTurns(all, async (op) => {
      for (const k of [...keysOf(op.query), 'unknown_field']) {
        for (const q of BAD_QUERIES(k)) await send(op, `${pathWith(op, null, '')}?${q}`);
      }
      await send(op, `${pathWith(op, null, '')}?%`);
      await send(op, `${pathWith(op, null, '')}?&&&=&=`);
    });
  });

  it('bodies', async () => {
    await inTurns(all.filter(takesBody), async (op) => {
      const path = pathWith(op, null, '');
      for (const b of BAD_BODIES) await send(op, path, b.raw, b.type);
      const keys = [...keysOf(op.body), 'unknown_field'];
      for (const k of keys) {
        for (const v of BAD_VALUES) await send(op, path, JSON.stringify({ [k]: v }));
      }
      // Every field wrong at once, and every field a huge string.
      for (const v of [1, null, [], big(70_000), 'a\u0000b']) {
        await send(op, path, JSON.stringify(Object.fromEntries(keys.map((k) => [k, v]))));
      }
    });
  });

  /** Path parameters that are well-formed, at the edges of what each takes. */
  const EDGE_PARAMS: Record<string, string[]> = {
    env: ['a', '_', '-', 'a'.repeat(64), 'prod'],
    key: ['A', '_', `A${'b'.repeat(255)}`, 'a1'],
    id: ['a', 'a'.repeat(63), 'fuzzed', NIL, 'ffffffff-ffff-ffff-ffff-ffffffffffff', NIL.toUpperCase()],
    os: ['darwin', 'windows'],
    arch: ['arm64', 'x86'],
  };

  it('path parameters and queries with an access token, on the routes that take one', async () => {
    asToken = true;
    try {
      await inTurns(
        all.filter((op) => op.auth === 'any'),
        async (op) => {
          for (const name of paramNames(op)) {
            for (const raw of BAD_PARAMS.slice(0, 8)) await send(op, pathWith(op, name, raw));
          }
          for (const k of keysOf(op.query))
            for (const q of BAD_QUERIES(k).slice(0, 6)) await send(op, `${pathWith(op, null, '')}?${q}`);
        },
      );
    } finally {
      asToken = false;
    }
  });

  it('path parameters at the edges of what they take', async () => {
    await inTurns(
      all.filter((op) => paramNames(op).length > 0 && op.method !== 'DELETE'),
      async (op) => {
        for (const name of paramNames(op)) {
          for (const v of EDGE_PARAMS[name] ?? EDGE_PARAMS.id!) {
            await send(op, pathWith(op, name, encodeURIComponent(v)));
          }
        }
      },
    );
  });

  let validBodies = 0;
  it('valid queries and bodies with one field at its edges', async () => {
    await inTurns(all, async (op) => {
      const path = pathWith(op, null, '');
      const query = objectOf(inputSchema(op.query));
      if (query) {
        const base = example(query, false) as Record<string, string>;
        for (const k of Object.keys(query.properties ?? {})) {
          for (const v of [...QUERY_EDGES, ...(edges(query.properties![k]!) as unknown[]).map(String)]) {
            await send(op, `${path}?${new URLSearchParams({ ...base, [k]: v })}`);
          }
        }
      }
      if (!takesBody(op)) return;
      const body = objectOf(inputSchema(op.body));
      if (!body) return;
      // The smallest body the generator can make, else every field: whichever the operation's schema takes.
      const base = [example(body, false), example(body, true)].find((b) => op.body!.safeParse(b).success);
      if (base === undefined) return;
      validBodies++;
      await send(op, path, JSON.stringify(base));
      for (const [k, field] of Object.entries(body.properties ?? {})) {
        for (const v of edges(field)) await send(op, path, JSON.stringify({ ...(base as object), [k]: v }));
      }
    });
    // The generator made a valid body for most operations that take one, so the edges reached the services.
    expect(validBodies).toBeGreaterThan(30);
  });

  it('a body over the limit, once', async () => {
    await send(operations.bulkUpsert, `/v1/projects/${projectId}/vars`, `{"a":"${big(17 * 1024 * 1024)}"}`);
  });

  it('answered thousands of requests, none with a 500, and logged no unhandled error', () => {
    expect(answers.length).toBeGreaterThan(3000);
    expect(answers.filter((a) => a.status >= 500 && !a.upstream)).toEqual([]);
    expect(app.logs()).not.toContain('unhandled error');
    // The session and the token still work: the fuzz ran as a real user throughout.
    return expect(
      Promise.all([
        app.request('GET', operations.getMe.path, { token: jwt }).then((r) => r.status),
        app.request('GET', `/v1/projects/${projectId}/envs/dev/pull`, { token }).then((r) => r.status),
      ]),
    ).resolves.toEqual([200, 200]);
  });
});
