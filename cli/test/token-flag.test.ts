/**
 * The compiled svcenv against the real server, from an empty HOME: `--token` and `--api-url` on every command
 * that talks to the server (D61: `--token` beats SVCENV_TOKEN, an identity and the stored token), `--token -`
 * from standard input and, on a terminal, asked for without echo; and a refused token said as such, with
 * where to make one (ADR 0028).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  createToken,
  type ServerProcess,
  signupUser,
  startServer,
  upsert,
} from '../../server/test/harness.js';
import { runCli, runInTerminal, tempDir, waitFor } from './helpers.js';

const SECRET = 'hunter2-correct-horse';

let server: ServerProcess;
let project: { id: string; name: string; slug: string };
let token: string;
let otherToken: string;

beforeAll(async () => {
  server = await startServer();
  const { jwt } = await signupUser(server);
  project = await createProject(server, jwt, { name: 'Token Flags' });
  token = (await createToken(server, jwt, { name: 'laptop', scope: 'write', projectId: project.id })).token;
  // A token of another workspace: it cannot see the project, so a command that used it would fail.
  const other = await signupUser(server, 'Eve');
  otherToken = (await createToken(server, other.jwt, { scope: 'read' })).token;
  await upsert(server, jwt, project.id, ['dev'], [{ key: 'DB_PASSWORD', value: SECRET, type: 'secret' }]);
});

afterAll(async () => {
  await server?.stop();
});

/** An empty HOME and no SVCENV_* at all. */
const empty = () => ({ HOME: tempDir('svcenv-home-') });

/** A HOME whose config file (as `svcenv login` writes it) holds `stored`. */
function storedHome(stored: string): Record<string, string> {
  const h = empty();
  const dir = join(h.HOME, '.config', 'svcenv');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ apiUrl: 'http://127.0.0.1:1', token: stored }), {
    mode: 0o600,
  });
  return h;
}

describe('D61: --token and --api-url', () => {
  it('every command that talks to the server takes them, from an empty HOME with no SVCENV_*', async () => {
    const target = ['--api-url', server.url, '-p', project.id, '-e', 'dev'];
    const pull = await runCli(['pull', '--token', token, ...target, '--stdout', '--no-metadata'], { env: empty() });
    expect([pull.code, pull.stderr]).toEqual([0, '']);
    expect(pull.stdout).toBe(`DB_PASSWORD=${SECRET}\n`);
    const cwd = tempDir();
    writeFileSync(join(cwd, '.env'), `DB_PASSWORD=${SECRET}\n`);
    for (const args of [
      ['projects'],
      ['whoami'],
      ['vars', '-p', project.id, '-e', 'dev'],
      ['diff', '-p', project.id, '-e', 'dev'],
      ['push', '-p', project.id, '-e', 'dev'],
      ['requests', '-p', project.id, '-e', 'dev'],
      ['run', '-p', project.id, '-e', 'dev', '--only', 'DB_PASSWORD', '--', 'sh', '-c', 'echo "$DB_PASSWORD"'],
    ]) {
      const r = await runCli([args[0]!, '--token', token, '--api-url', server.url, ...args.slice(1)], {
        env: empty(),
        cwd,
      });
      expect(r.code, `${args[0]}: ${r.stderr}`).toBe(0);
      expect(r.stdout + r.stderr, args[0]).not.toContain(token);
    }
    // Before the command, as --identity.
    const before = await runCli(['--token', token, '--api-url', server.url, 'projects'], { env: empty() });
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toContain(project.id);
    // The help names them, and a command that sends no token refuses them.
    expect((await runCli(['pull', '--help'])).stdout).toMatch(/--token <value> +access token/);
    const version = await runCli(['--token', token, 'version']);
    expect([version.code, version.stderr]).toEqual([1, 'error: version takes no --token\n']);
  });

  it('--token beats SVCENV_TOKEN, an identity and the stored token; --api-url beats SVCENV_API_URL', async () => {
    const target = ['-p', project.id, '-e', 'dev', '--stdout', '--no-metadata'];
    const env = {
      ...storedHome(otherToken),
      SVCENV_TOKEN: otherToken,
      // An identity that cannot be exchanged: using it would fail.
      SVCENV_IDENTITY: '00000000-0000-4000-8000-000000000000',
      SVCENV_OIDC_TOKEN: 'not-a-jwt',
      SVCENV_API_URL: 'http://127.0.0.1:1',
    };
    const r = await runCli(['pull', '--token', token, '--api-url', server.url, ...target], { env });
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toBe(`DB_PASSWORD=${SECRET}\n`);
    // Without the flags the same environment uses SVCENV_TOKEN over the identity, as before.
    const without = await runCli(['pull', ...target], { env: { ...env, SVCENV_API_URL: server.url } });
    expect(without.code).toBe(1);
    expect(without.stderr).toMatch(/^NOT_FOUND: /);
    const who = await runCli(['whoami', '--token', token, '--api-url', server.url], { env });
    expect(who.stdout).toMatch(/^token: +laptop \(tok_live_.*…\), from --token$/m);
  });

  it('--token - reads the token from standard input; whoami says so; it is never printed', async () => {
    const r = await runCli(['whoami', '--token', '-', '--api-url', server.url], { env: empty(), input: `${token}\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/from standard input \(--token -\)$/m);
    expect(r.stdout + r.stderr).not.toContain(token);
    const pulled = await runCli(
      ['pull', '--token', '-', '--api-url', server.url, '-p', project.id, '-e', 'dev', '--stdout'],
      {
        env: empty(),
        input: token,
      },
    );
    expect(pulled.code, pulled.stderr).toBe(0);
    const none = await runCli(['pull', '--token', '-', '--api-url', server.url], { env: empty(), input: '' });
    expect([none.code, none.stderr]).toEqual([
      1,
      'error: no token on standard input (--token -)\nhint: paste the access token, then Enter\n',
    ]);
    // Standard input holds the token: a value cannot come from it too.
    const both = await runCli(
      ['vars', 'set', 'X=-', '--token', '-', '--api-url', server.url, '-p', project.id, '-e', 'dev'],
      { env: empty(), input: token },
    );
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('--token - has read standard input already');
  });

  it('on a terminal, --token - asks for the token and does not echo it (login keeps its behaviour)', async () => {
    const h = empty();
    const t = runInTerminal(['login', '--token', '-', '--api-url', server.url], { env: h });
    await waitFor(() => t.screen().includes('access token (not shown): '), 'the prompt');
    t.type(`${token}\r`);
    const { code, screen } = await t.done;
    expect(code, screen).toBe(0);
    expect(screen).toContain(`logged in to ${server.url}`);
    expect(screen).not.toContain(token);
    expect(screen).not.toContain(token.slice(0, 12));
    // The stored token works.
    const r = await runCli(['projects'], { env: h });
    expect(r.code, r.stderr).toBe(0);
  });
});

describe('a token that is not accepted', () => {
  it('login with a bad token says the access token was not accepted and where to make one', async () => {
    const tokens = `${server.url}/tokens`;
    const bad = await runCli(['login', '--token', '-', '--api-url', server.url], {
      env: empty(),
      input: 'not-a-token\n',
    });
    expect([bad.code, bad.stderr]).toEqual([
      1,
      'UNAUTHORIZED: the credential from standard input (--token -) is not an access token (access tokens begin with tok_live_)\n' +
        `hint: make an access token on the dashboard's Tokens page (${tokens}), then \`svcenv login --token -\` and paste it (or pass --token, or set SVCENV_TOKEN)\n`,
    ]);
    expect(bad.stderr).not.toMatch(/session/);
    // A token of the right shape that the server does not know (a typo, one character off).
    const typo = `${token.slice(0, -1)}${token.endsWith('a') ? 'b' : 'a'}`;
    const wrong = await runCli(['login', '--token', '-', '--api-url', server.url], { env: empty(), input: typo });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(
      /^UNAUTHORIZED: the access token from standard input \(--token -\) was not accepted: invalid access token\n/,
    );
    expect(wrong.stderr).toContain(`Tokens page (${tokens})`);
    expect(wrong.stderr).not.toContain(typo);
  });

  it('pull with a revoked or mistyped token, or a dashboard session, names where it came from', async () => {
    const target = ['--api-url', server.url, '-p', project.id, '-e', 'dev', '--stdout'];
    const viaEnv = await runCli(['pull', ...target], { env: { ...empty(), SVCENV_TOKEN: 'tok_live_garbage' } });
    expect(viaEnv.code).toBe(1);
    expect(viaEnv.stderr).toMatch(/^UNAUTHORIZED: the access token from SVCENV_TOKEN was not accepted: /);
    expect(viaEnv.stderr).not.toMatch(/session/);
    const h = storedHome('garbage');
    const stored = await runCli(['pull', ...target], { env: h });
    expect(stored.stderr).toMatch(
      new RegExp(`^UNAUTHORIZED: the credential from ${h.HOME}/.config/svcenv/config.json is not an access token`),
    );
    const { jwt } = await signupUser(server, 'Sam');
    const session = await runCli(['pull', '--token', jwt, ...target], { env: empty() });
    expect(session.stderr).toMatch(
      /^UNAUTHORIZED: the credential from --token is a dashboard session, not an access token\n/,
    );
    expect(session.stderr).not.toContain(jwt);
  });
});
