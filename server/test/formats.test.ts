import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditPage, renderDocker, renderJson, renderShell } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { render } from '../src/lib/formats.js';
import { createProject, createToken, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';

/**
 * D55: the json, shell and docker renderings of pull and export. Each format is checked byte for byte on
 * values that break naive writers, and the shell one is also run by real shells.
 */

/* biome-ignore-start lint/suspicious/noTemplateCurlyInString: shell text, not templates */
/** Values sorted by key as pull lists them; none holds a line break, so every format carries them all. */
const NASTY: [string, string][] = [
  ['A_QUOTE', `it's "quoted"`],
  ['B_DOLLAR', '$HOME $(touch pwned) `touch pwned` !! ~ *'],
  ['C_BACKSLASH', 'C:\\new\\\\path\\'],
  ['D_SPACES', '  two  spaces  '],
  ['E_EQUALS', 'a=b==c'],
  ['F_UNICODE', 'héllo ☃ 🚀 \u2028'],
  ['G_EMPTY', ''],
  ['H_HASH', '#not a comment'],
  ['I_BREAKOUT', "'; touch pwned; '"],
];
/* biome-ignore-end lint/suspicious/noTemplateCurlyInString: shell text, not templates */
const MULTI = 'line1\nline2\r\nend\n';

const SHELL_BODY = [
  `export A_QUOTE='it'\\''s "quoted"'`,
  "export B_DOLLAR='$HOME $(touch pwned) `touch pwned` !! ~ *'",
  "export C_BACKSLASH='C:\\new\\\\path\\'",
  "export D_SPACES='  two  spaces  '",
  "export E_EQUALS='a=b==c'",
  "export F_UNICODE='héllo ☃ 🚀 \u2028'",
  "export G_EMPTY=''",
  "export H_HASH='#not a comment'",
  `export I_BREAKOUT=''\\''; touch pwned; '\\'''`,
  '',
].join('\n');

const DOCKER_BODY = [
  `A_QUOTE=it's "quoted"`,
  'B_DOLLAR=$HOME $(touch pwned) `touch pwned` !! ~ *',
  'C_BACKSLASH=C:\\new\\\\path\\',
  'D_SPACES=  two  spaces  ',
  'E_EQUALS=a=b==c',
  'F_UNICODE=héllo ☃ 🚀 \u2028',
  'G_EMPTY=',
  'H_HASH=#not a comment',
  "I_BREAKOUT='; touch pwned; '",
  '',
].join('\n');

const JSON_BODY = [
  '{',
  '  "A_QUOTE": "it\'s \\"quoted\\"",',
  '  "B_DOLLAR": "$HOME $(touch pwned) `touch pwned` !! ~ *",',
  '  "C_BACKSLASH": "C:\\\\new\\\\\\\\path\\\\",',
  '  "D_SPACES": "  two  spaces  ",',
  '  "E_EQUALS": "a=b==c",',
  '  "F_UNICODE": "héllo ☃ 🚀 \u2028",',
  '  "G_EMPTY": "",',
  '  "H_HASH": "#not a comment",',
  '  "I_BREAKOUT": "\'; touch pwned; \'"',
  '}',
  '',
].join('\n');

const shells = ['sh', 'bash', 'dash'].filter((s) => existsSync(`/bin/${s}`) || existsSync(`/usr/bin/${s}`));

/**
 * Runs `script` (which sources or evals the file) in `shell` in a scratch directory and returns the values of
 * `keys` as the shell holds them, NUL-separated so that any other byte comes back as it is.
 */
function shellValues(shell: string, body: string, keys: string[], how: 'source' | 'eval'): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'svcenv-fmt-'));
  try {
    writeFileSync(join(dir, 'vars.sh'), body);
    const load = how === 'source' ? '. ./vars.sh' : 'eval "$(cat ./vars.sh)"';
    // The values are also read from the environment of a child process: they were exported.
    const print = `${load} && printenv ${keys.join(' ')} >/dev/null && printf '%s\\0' ${keys.map((k) => `"$${k}"`).join(' ')}`;
    const out = execFileSync(shell, ['-c', print], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH } });
    expect(existsSync(join(dir, 'pwned')), 'the file ran a command it holds').toBe(false);
    return out.split('\0').slice(0, -1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('renderers (contract/src/formats.ts)', () => {
  it('writes each format byte for byte', () => {
    expect(renderShell(NASTY)).toBe(SHELL_BODY);
    expect(renderDocker(NASTY)).toBe(DOCKER_BODY);
    expect(renderJson(NASTY)).toBe(JSON_BODY);
    expect(renderJson([])).toBe('{}\n');
    expect(renderShell([])).toBe('');
    expect(renderDocker([])).toBe('');
    // A key that means something to objects stays an ordinary key.
    expect(JSON.parse(renderJson([['__proto__', 'x']]))).toEqual(JSON.parse('{"__proto__":"x"}'));
  });

  it('gives every value back through JSON.parse, line breaks and control characters included', () => {
    const all: [string, string][] = [
      ...NASTY,
      ['MULTI', MULTI],
      ['CONTROL', Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('')],
    ];
    expect(Object.entries(JSON.parse(renderJson(all)))).toEqual(all);
  });

  it.each(shells)('round-trips every value through %s, by source and by eval, running nothing', (shell) => {
    // Every byte but NUL, and a multi-line value, on top of the named ones.
    const ascii = Array.from({ length: 127 }, (_, i) => String.fromCharCode(i + 1)).join('');
    const all: [string, string][] = [...NASTY, ['MULTI', MULTI], ['ASCII', ascii], ['QUOTES', "''''\\'"]];
    const keys = all.map(([k]) => k);
    const values = all.map(([, v]) => v);
    expect(shellValues(shell, renderShell(all), keys, 'source')).toEqual(values);
    expect(shellValues(shell, renderShell(all), keys, 'eval')).toEqual(values);
  });

  it('refuses what a format cannot carry with FORMAT_UNSUPPORTED naming the key, never the value', () => {
    const refused = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return err as { code: string; field: string; status: number; message: string };
      }
      throw new Error('not refused');
    };
    for (const value of ['a\nb', 'a\rb', 'trailing\r', 'nul\0byte']) {
      const err = refused(() =>
        render('docker', '', [
          ['OK', 'fine'],
          ['BAD', value],
        ]),
      );
      expect([err.code, err.status, err.field]).toEqual(['FORMAT_UNSUPPORTED', 422, 'BAD']);
      expect(err.message).not.toContain(value);
    }
    const nul = refused(() => render('shell', '', [['BAD', 'nul\0byte']]));
    expect([nul.code, nul.field]).toEqual(['FORMAT_UNSUPPORTED', 'BAD']);
    // Keys are checked on write (D24); the shell writer checks again because its output is run.
    expect(refused(() => render('shell', '', [['A;B', 'x']])).field).toBe('A;B');
    expect(renderShell([['M', MULTI]])).toBe(`export M='${MULTI}'\n`);
  });
});

describe(`pull and export formats (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  async function setup(items: object[], projectName = 'Fmt App') {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt, { name: projectName });
    if (items.length) await upsert(app, jwt, p.id, ['dev'], items);
    const { token } = await createToken(app, jwt, { scope: 'read' });
    return { jwt, p, token, base: `/v1/projects/${p.id}/envs/dev` };
  }
  const nastyItems = (type = 'secret') => NASTY.map(([key, value]) => ({ key, value, type }));

  it('pulls json, shell and docker byte for byte with their content types (D55)', async () => {
    const { token, base } = await setup(nastyItems());
    const expected = [
      ['json', 'application/json; charset=utf-8', JSON_BODY],
      ['shell', 'text/plain; charset=utf-8', SHELL_BODY],
      ['docker', 'text/plain; charset=utf-8', DOCKER_BODY],
    ] as const;
    for (const [format, type, body] of expected) {
      const res = await app.request('GET', `${base}/pull?format=${format}&metadata=false`, { token });
      expect(res.status, format).toBe(200);
      expect(res.headers.get('content-type'), format).toBe(type);
      expect(res.text, format).toBe(body);
      expect(res.headers.get('x-svcenv-context'), format).toBeNull();
    }
    const bad = await app.request('GET', `${base}/pull?format=xml`, { token });
    expect(bad.status).toBe(400);
    expect(bad.error.field).toBe('format');
  });

  it.each(shells)('pulls a shell file that %s sources back to the exact values, multi-line included', async (shell) => {
    const items = [...nastyItems(), { key: 'M_MULTI', value: MULTI, type: 'secret' }];
    const { token, base, p } = await setup(items);
    const res = await app.request('GET', `${base}/pull?format=shell`, { token });
    const keys = [...items.map((i) => i.key), 'SVCENV_PROJECT', 'SVCENV_ENV', 'SVCENV_PROJECT_NAME'];
    const values = [...items.map((i) => i.value), p.id, 'dev', 'Fmt App'];
    expect(shellValues(shell, res.text, keys, 'source')).toEqual(values);
  });

  it('adds the context variables to every format unless metadata=false, a user variable winning (D28a)', async () => {
    const { token, base, p } = await setup([
      { key: 'A', value: '1', type: 'plain' },
      { key: 'SVCENV_ENV', value: 'mine', type: 'plain' },
    ]);
    const pulled = async (format: string, metadata = '') =>
      (await app.request('GET', `${base}/pull?format=${format}${metadata}`, { token })).text;
    expect(JSON.parse(await pulled('json'))).toEqual({
      A: '1',
      SVCENV_ENV: 'mine',
      SVCENV_PROJECT: p.id,
      SVCENV_PROJECT_NAME: 'Fmt App',
    });
    expect(await pulled('shell')).toBe(
      `export A='1'\nexport SVCENV_ENV='mine'\nexport SVCENV_PROJECT='${p.id}'\nexport SVCENV_PROJECT_NAME='Fmt App'\n`,
    );
    expect(await pulled('docker')).toBe(`A=1\nSVCENV_ENV=mine\nSVCENV_PROJECT=${p.id}\nSVCENV_PROJECT_NAME=Fmt App\n`);
    expect(JSON.parse(await pulled('json', '&metadata=false'))).toEqual({ A: '1', SVCENV_ENV: 'mine' });
    expect(await pulled('shell', '&metadata=false')).toBe("export A='1'\nexport SVCENV_ENV='mine'\n");
    expect(await pulled('docker', '&metadata=false')).toBe('A=1\nSVCENV_ENV=mine\n');
  });

  it('gives each format its own strong ETag and answers If-None-Match with 304 (D29)', async () => {
    const { jwt, p, token, base } = await setup([{ key: 'A', value: '1', type: 'plain' }]);
    const etags = new Set<string>();
    for (const format of ['dotenv', 'k8s', 'json', 'shell', 'docker']) {
      const one = await app.request('GET', `${base}/pull?format=${format}`, { token });
      const etag = one.headers.get('etag')!;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      etags.add(etag);
      const again = await app.request('GET', `${base}/pull?format=${format}`, { token });
      expect(again.headers.get('etag')).toBe(etag);
      const cond = await app.request('GET', `${base}/pull?format=${format}`, {
        token,
        headers: { 'if-none-match': etag },
      });
      expect([cond.status, cond.text]).toEqual([304, '']);
      // The bare body has another ETag: a client that switches metadata off gets the new body.
      const bare = await app.request('GET', `${base}/pull?format=${format}&metadata=false`, {
        token,
        headers: { 'if-none-match': etag },
      });
      expect(bare.status).toBe(200);
    }
    expect(etags.size).toBe(5);
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: '2', type: 'plain' }]);
    const [first] = etags;
    const changed = await app.request('GET', `${base}/pull?format=dotenv`, {
      token,
      headers: { 'if-none-match': first! },
    });
    expect(changed.status).toBe(200);
  });

  it('refuses a docker pull of a multi-line value with 422 FORMAT_UNSUPPORTED naming the key (D55)', async () => {
    const { jwt, p, token, base } = await setup([
      { key: 'CERT', value: '-----BEGIN-----\nabc\n-----END-----', type: 'secret' },
      { key: 'OK', value: 'fine', type: 'plain' },
    ]);
    const before = (await app.request('GET', `/v1/projects/${p.id}/audit`, { token: jwt, schema: auditPage })).body;
    for (let i = 0; i < 2; i++) {
      const res = await app.request('GET', `${base}/pull?format=docker`, { token });
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(res.error.code).toBe('FORMAT_UNSUPPORTED');
      expect(res.error.field).toBe('CERT');
      expect(res.text).not.toContain('BEGIN');
      expect(res.headers.get('etag')).toBeNull();
    }
    // A carriage return alone is a line break too: `docker --env-file` drops one before a newline.
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'CERT', value: 'a\rb', type: 'secret' }]);
    expect((await app.request('GET', `${base}/pull?format=docker`, { token })).error.field).toBe('CERT');
    // The refused pulls read nothing, so they are not audited; the other formats still carry the value.
    const after = (await app.request('GET', `/v1/projects/${p.id}/audit`, { token: jwt, schema: auditPage })).body;
    expect(after.logs.filter((l) => l.action === 'vars.pull')).toEqual(
      before.logs.filter((l) => l.action === 'vars.pull'),
    );
    const shell = await app.request('GET', `${base}/pull?format=shell&metadata=false`, { token });
    expect(shell.text).toBe("export CERT='a\rb'\nexport OK='fine'\n");
  });

  it('exports json, shell and docker masked without reveal, revealed with write (D28, D55)', async () => {
    const { jwt, p, token, base } = await setup(
      [
        { key: 'PASS', value: "it's $ecret", type: 'secret' },
        { key: 'URL', value: 'x://${PASS}', type: 'plain' },
        { key: 'HOST', value: 'h', type: 'plain' },
        { key: 'KEY', value: 'multi\nline', type: 'secret' },
      ],
      'Exp Org',
    );
    const exported = (format: string, query: string, auth = jwt) =>
      app.request('GET', `${base}/export?format=${format}&metadata=false${query}`, { token: auth });

    const cases = [
      [
        'json',
        'application/json; charset=utf-8',
        'json',
        '{\n  "HOST": "h",\n  "KEY": "***",\n  "PASS": "***",\n  "URL": "***"\n}\n',
      ],
      [
        'shell',
        'text/plain; charset=utf-8',
        'sh',
        "export HOST='h'\nexport KEY='***'\nexport PASS='***'\nexport URL='***'\n",
      ],
      ['docker', 'text/plain; charset=utf-8', 'docker.env', 'HOST=h\nKEY=***\nPASS=***\nURL=***\n'],
    ] as const;
    for (const [format, type, ext, body] of cases) {
      // A read token exports masked, like the JWT; the multi-line secret is `***`, so docker has no line break.
      for (const auth of [jwt, token]) {
        const res = await exported(format, '', auth);
        expect(res.status, format).toBe(200);
        expect(res.headers.get('content-type'), format).toBe(type);
        expect(res.headers.get('content-disposition')).toBe(`attachment; filename="exp-org-dev.${ext}"`);
        expect(res.text, format).toBe(body);
      }
      // Reveal needs write: a read token is refused.
      const refused = await exported(format, '&reveal=true', token);
      expect([refused.status, refused.error.code]).toEqual([403, 'FORBIDDEN']);
    }

    const json = await exported('json', '&reveal=true');
    expect(JSON.parse(json.text)).toEqual({
      HOST: 'h',
      KEY: 'multi\nline',
      PASS: "it's $ecret",
      URL: "x://it's $ecret",
    });
    const shell = await exported('shell', '&reveal=true');
    expect(shell.text).toBe(
      "export HOST='h'\nexport KEY='multi\nline'\nexport PASS='it'\\''s $ecret'\nexport URL='x://it'\\''s $ecret'\n",
    );
    // Revealed, the multi-line secret cannot be written for docker.
    const docker = await exported('docker', '&reveal=true');
    expect([docker.status, docker.error.code, docker.error.field]).toEqual([422, 'FORMAT_UNSUPPORTED', 'KEY']);
    expect(docker.text).not.toContain('multi');

    // Export includes the context variables unless metadata=false.
    const withContext = await app.request('GET', `${base}/export?format=json`, { token: jwt });
    expect(JSON.parse(withContext.text)).toMatchObject({ SVCENV_ENV: 'dev', SVCENV_PROJECT: p.id });

    // Only the successful exports were audited, with their format; no value in any entry.
    const logs = (await app.request('GET', `/v1/projects/${p.id}/audit?limit=200`, { token: jwt, schema: auditPage }))
      .body.logs;
    const formats = logs.filter((l) => l.action === 'vars.export').map((l) => JSON.stringify(l));
    expect(formats).toHaveLength(9);
    expect(formats.join('')).not.toMatch(/ecret|multi/);
  });
});
