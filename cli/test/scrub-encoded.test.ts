/**
 * D50 end to end: the compiled `svcenv run` scrubs the common encodings of an exposed value from its
 * child's output (spec run rule 8), against the real server (server/test/harness.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  createToken,
  type ServerProcess,
  signupUser,
  startServer,
  upsert,
} from '../../server/test/harness.js';
import { runCli, tempDir } from './helpers.js';

// Quote, slash, plus, space and non-ASCII: its JSON, percent and base64 forms all differ from it.
const SECRET = 'p@ss w/rd+"q"ä€-2026';
const SHORT = 'abcde';

let server: ServerProcess;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startServer();
  const { jwt } = await signupUser(server);
  const project = await createProject(server, jwt, { name: 'Encodings' });
  const { token } = await createToken(server, jwt, { scope: 'read', projectId: project.id });
  await upsert(
    server,
    jwt,
    project.id,
    ['dev'],
    [
      { key: 'DB_PASSWORD', value: SECRET, type: 'secret' },
      { key: 'SHORT', value: SHORT, type: 'secret' },
    ],
  );
  env = { SVCENV_API_URL: server.url, SVCENV_TOKEN: token, SVCENV_PROJECT: project.id, SVCENV_ENV: 'dev' };
});

afterAll(async () => {
  await server?.stop();
});

describe('run scrubs encodings of exposed values (D50)', () => {
  it('hides base64, base64url, hex, JSON-escaped and percent forms, also split across writes; 5 chars stay', async () => {
    const bytes = Buffer.from(SECRET);
    const forms: [string, string][] = [
      ['base64', bytes.toString('base64')],
      ['base64url', bytes.toString('base64url')],
      ['hex', bytes.toString('hex')],
      ['json', JSON.stringify(SECRET).slice(1, -1)],
      ['percent', encodeURIComponent(SECRET)],
    ];
    const shortForms = `${Buffer.from(SHORT).toString('base64')} ${Buffer.from(SHORT).toString('hex')}`;
    const hex = bytes.toString('hex');
    // Basic auth: the value inside a longer base64 text, 5 bytes in ("user:"), as the child prints it.
    expect(Buffer.from(`user:${SECRET}`).toString('base64')).toBe('dXNlcjpwQHNzIHcvcmQrInEiw6TigqwtMjAyNg==');
    const script = [
      'for f in "$@"; do printf "%s\\n" "$f"; done',
      // One form in two writes 10 ms apart: the first half must be held back, not printed.
      `printf 'split=%s' '${hex.slice(0, 17)}'`,
      'sleep 0.01',
      `printf '%s;\\n' '${hex.slice(17)}'`,
      // The child encodes the value itself, as a script would.
      'printf "%s" "$DB_PASSWORD" | base64 >&2',
      'printf "%s" "user:$DB_PASSWORD" | base64 >&2',
      `echo "short ${shortForms}" >&2`,
    ].join('; ');
    const args = forms.map(([name, form]) => `${name}=${form}`);
    const r = await runCli(['run', '--all', '--', 'sh', '-c', script, 'sh', ...args], {
      env: { ...env, HOME: tempDir('svcenv-home-') },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${forms.map(([name]) => `${name}=***\n`).join('')}split=***;\n`);
    // Characters 7 to 36 of that base64 hold the value's 23 bytes alone; "dXNlcjp" ("user:" and the value's
    // first 2 bits) and "g==" (its last 2 bits) stay.
    expect(r.stderr).toBe(`***\ndXNlcjp***g==\nshort ${shortForms}\n`);
    expect(r.stdout + r.stderr).not.toContain(hex.slice(0, 17));
  });
});
