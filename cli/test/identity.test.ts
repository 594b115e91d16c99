/**
 * D61: the compiled svcenv without a stored token, against the real server (D60) and a real OIDC issuer on
 * loopback: the platform's JWT from SVCENV_OIDC_TOKEN, a file, a GitHub Actions token endpoint or the
 * Kubernetes token file, exchanged once and reused from the sealed cache until 60 s before it expires.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { operations as ops } from '@svcenv/contract/operations';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  createToken,
  type ServerProcess,
  signupUser,
  startServer,
  upsert,
} from '../../server/test/harness.js';
import { startIssuer } from '../../server/test/oidc-issuer.js';
import { type CliRun, runCli, tempDir } from './helpers.js';

const AUD = 'svcenv-ci';
const SECRET = 'identity-secret-value-7';
const nowS = () => Math.floor(Date.now() / 1000);

let server: ServerProcess;
let issuer: Awaited<ReturnType<typeof startIssuer>>;
let jwt: string;
let projectId: string;
let identityId: string;
let shortId: string;
let storedToken: string;

async function makeIdentity(name: string, ttlSeconds: number): Promise<string> {
  const res = await server.call(
    ops.createIdentity,
    { body: { name, issuer: issuer.url, audience: AUD, envs: ['dev'], projectId, ttlSeconds } as never },
    jwt,
  );
  if (res.status !== 201) throw new Error(`create identity: ${res.status} ${res.text}`);
  return (res.body as { id: string }).id;
}

beforeAll(async () => {
  issuer = await startIssuer();
  server = await startServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  ({ jwt } = await signupUser(server));
  projectId = (await createProject(server, jwt, { name: 'Payments' })).id;
  await upsert(server, jwt, projectId, ['dev'], [{ key: 'DB_PASSWORD', value: SECRET, type: 'secret' }]);
  identityId = await makeIdentity('deploy', 900);
  shortId = await makeIdentity('short', 60);
  // A token that sees no project: output from it shows that it, not the identity, was used.
  storedToken = (await createToken(server, jwt, { scope: 'read', envs: ['staging'] })).token;
});

afterAll(async () => {
  await issuer?.stop();
  await server?.stop();
});

const sign = (over: Record<string, unknown> = {}) =>
  issuer.sign({ iss: issuer.url, aud: AUD, sub: 'repo:acme/payments', iat: nowS(), exp: nowS() + 300, ...over });

/** How many exchanges the server audited for an identity (each `POST /v1/auth/oidc` that issued a token). */
async function logins(name: string): Promise<number> {
  const res = await server.request('GET', '/v1/workspace/audit?action=identity.login&limit=200', { token: jwt });
  const logs = (res.body as { logs: { detail: { name?: string } }[] }).logs;
  return logs.filter((l) => l.detail.name === name).length;
}

/** An empty HOME and cache per user; no SVCENV_TOKEN unless given. */
function user(extra: Record<string, string> = {}) {
  const home = tempDir('svcenv-home-');
  const env: Record<string, string> = {
    HOME: home,
    SVCENV_CACHE_DIR: join(home, 'cache'),
    SVCENV_API_URL: server.url,
    SVCENV_PROJECT: projectId,
    SVCENV_ENV: 'dev',
    SVCENV_TEST_K8S_TOKEN_FILE: join(home, 'no-such-k8s-token'),
    ...extra,
  };
  return { home, env, cache: env.SVCENV_CACHE_DIR! };
}

const getVar = (env: Record<string, string>, args: string[] = []) =>
  runCli([...args, 'vars', 'get', 'DB_PASSWORD'], { env });

/** Nothing secret in what the command printed. */
function clean(r: CliRun, ...secrets: string[]) {
  for (const s of secrets) {
    expect(r.stdout).not.toContain(s);
    expect(r.stderr).not.toContain(s);
  }
  expect(`${r.stdout}${r.stderr}`).not.toMatch(/eyJ[\w-]+\.[\w-]+/);
  // The display prefix (whoami) is what the dashboard shows too; never more of a token.
  expect(`${r.stdout}${r.stderr}`).not.toMatch(/tok_live_[\w-]{12,}/);
}

describe('svcenv with a workload identity (D61)', () => {
  it('exchanges SVCENV_OIDC_TOKEN once, then reuses the sealed token from the cache', async () => {
    const platform = await sign();
    const u = user({ SVCENV_IDENTITY: identityId, SVCENV_OIDC_TOKEN: platform });
    const before = await logins('deploy');
    const first = await getVar(u.env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(`${SECRET}\n`);
    expect(await logins('deploy')).toBe(before + 1);
    const second = await getVar(u.env);
    expect(second.stdout).toBe(`${SECRET}\n`);
    expect(await logins('deploy')).toBe(before + 1);
    // Sealed: neither the JWT nor an access token is readable in any file of the cache or the home.
    for (const f of readdirSync(u.cache)) {
      const bytes = readFileSync(join(u.cache, f), 'latin1');
      expect(bytes).not.toContain('tok_live_');
      expect(bytes).not.toContain(platform.slice(0, 40));
    }
    expect(readdirSync(u.home).filter((f) => f !== 'cache')).toEqual([]);
  });

  it('reads the JWT from SVCENV_OIDC_TOKEN_FILE, and `--identity` works as SVCENV_IDENTITY does', async () => {
    const u = user();
    const file = join(u.home, 'jwt');
    writeFileSync(file, `${await sign()}\n`);
    const r = await getVar({ ...u.env, SVCENV_OIDC_TOKEN_FILE: file }, ['--identity', identityId]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`${SECRET}\n`);
    const k8s = join(u.home, 'k8s-token');
    writeFileSync(k8s, await sign());
    const u2 = user({ SVCENV_IDENTITY: identityId, SVCENV_TEST_K8S_TOKEN_FILE: k8s });
    expect((await getVar(u2.env)).stdout).toBe(`${SECRET}\n`);
    // After the command, too.
    const u3 = user({ SVCENV_OIDC_TOKEN_FILE: file });
    const after = await runCli(['vars', 'get', 'DB_PASSWORD', '--identity', identityId], { env: u3.env });
    expect(after.stdout).toBe(`${SECRET}\n`);
  });

  it('asks GitHub Actions for the JWT with the audience and the bearer token', async () => {
    const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
    const platform = await sign({ aud: 'https://svcenv.example.com' });
    const gh: Server = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ value: platform }));
    });
    await new Promise<void>((r) => gh.listen(0, '127.0.0.1', r));
    try {
      const ghUrl = `http://127.0.0.1:${(gh.address() as AddressInfo).port}/token?api-version=2.0`;
      const gha = { ACTIONS_ID_TOKEN_REQUEST_URL: ghUrl, ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'gh-request-bearer' };
      // Default audience: the API URL, which this identity does not accept: refused, with the server's reason.
      const u = user({ SVCENV_IDENTITY: identityId, ...gha });
      const refused = await getVar(u.env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('UNAUTHORIZED: audience does not match');
      clean(refused, platform, 'gh-request-bearer');
      const url = new URL(seen[0]!.url, 'http://x');
      expect(url.searchParams.get('api-version')).toBe('2.0');
      expect(url.searchParams.get('audience')).toBe(server.url);
      expect(seen[0]!.headers.authorization).toBe('bearer gh-request-bearer');
      // The audience the issuer is asked for is SVCENV_OIDC_AUDIENCE's.
      const good = await issuer.sign({ iss: issuer.url, aud: AUD, sub: 'x', exp: nowS() + 300 });
      gh.removeAllListeners('request');
      gh.on('request', (req, res) => {
        seen.push({ url: req.url ?? '', headers: req.headers });
        const aud = new URL(req.url ?? '', 'http://x').searchParams.get('audience');
        res.writeHead(200).end(JSON.stringify({ value: aud === AUD ? good : platform }));
      });
      const ok = await getVar({ ...u.env, SVCENV_OIDC_AUDIENCE: AUD });
      expect(ok.stderr).toBe('');
      expect(ok.stdout).toBe(`${SECRET}\n`);
      expect(new URL(seen[1]!.url, 'http://x').searchParams.get('audience')).toBe(AUD);
      // Cached: the next command asks neither GitHub nor the server for a new token.
      expect((await getVar({ ...u.env, SVCENV_OIDC_AUDIENCE: AUD })).stdout).toBe(`${SECRET}\n`);
      expect(seen).toHaveLength(2);
    } finally {
      gh.close();
    }
  });

  it('exchanges again at once when the cached token is refused because its identity changed', async () => {
    const u = user({ SVCENV_IDENTITY: identityId, SVCENV_OIDC_TOKEN: await sign() });
    expect((await getVar(u.env)).stdout).toBe(`${SECRET}\n`);
    const before = await logins('deploy');
    const patched = await server.call(
      ops.updateIdentity,
      { params: { id: identityId }, body: { ttlSeconds: 900 } as never },
      jwt,
    );
    expect(patched.status).toBe(200);
    const r = await getVar(u.env);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`${SECRET}\n`);
    expect(await logins('deploy')).toBe(before + 1);
  });

  it('exchanges again when the cached token is within 60 s of its expiry', async () => {
    // ttlSeconds 60: the token is already within 60 s of expiring when it arrives, so it is never reused.
    const u = user({ SVCENV_IDENTITY: shortId, SVCENV_OIDC_TOKEN: await sign() });
    const before = await logins('short');
    expect((await getVar(u.env)).stdout).toBe(`${SECRET}\n`);
    expect((await getVar(u.env)).stdout).toBe(`${SECRET}\n`);
    expect(await logins('short')).toBe(before + 2);
  });

  it('keeps the cached pull across exchanges: --offline and an unreachable server use it, with no exchange', async () => {
    const u = user({ SVCENV_IDENTITY: shortId, SVCENV_OIDC_TOKEN: await sign() });
    const pull = ['pull', '--stdout', '--format', 'dotenv', '--no-metadata'];
    const fresh = await runCli(pull, { env: u.env });
    expect(fresh.stderr).toBe('');
    expect(fresh.stdout).toContain(SECRET);
    const before = await logins('short');
    const offline = await runCli([...pull, '--offline'], { env: u.env });
    expect(offline.code).toBe(0);
    expect(offline.stdout).toBe(fresh.stdout);
    expect(await logins('short')).toBe(before);
    // A command after an exchange reads what the one before the exchange kept.
    expect((await runCli(pull, { env: u.env })).stdout).toBe(fresh.stdout);
    expect(await logins('short')).toBe(before + 1);
    const none = await runCli([...pull, '--offline'], { env: user({ SVCENV_IDENTITY: shortId }).env });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no access token of this identity is cached');
    // The server away: the exchange is not answered, the last token opens the cached pull (D42's warning).
    const port = new URL(server.url).port;
    await server.stop();
    try {
      const away = await runCli(pull, { env: u.env });
      expect(away.code).toBe(0);
      expect(away.stdout).toBe(fresh.stdout);
      expect(away.stderr).toMatch(/^warning: using the cached copy/);
    } finally {
      server = await startServer({ dataDir: server.dataDir, env: { PORT: port, WEBHOOK_ALLOW_PRIVATE: 'true' } });
    }
  });

  it('SVCENV_TOKEN beats the identity, and the identity beats the stored token', async () => {
    const u = user({ SVCENV_OIDC_TOKEN: await sign() });
    const login = await runCli(['login', '--token', '-'], { env: u.env, input: storedToken });
    expect(login.code).toBe(0);
    // Stored token alone: it cannot see the project.
    expect((await getVar(u.env)).code).toBe(1);
    const before = await logins('deploy');
    const withIdentity = await getVar({ ...u.env, SVCENV_IDENTITY: identityId });
    expect(withIdentity.stdout).toBe(`${SECRET}\n`);
    const envToken = await getVar({ ...u.env, SVCENV_IDENTITY: identityId, SVCENV_TOKEN: storedToken });
    expect(envToken.code).toBe(1);
    expect(await logins('deploy')).toBe(before + 1);
    // The config file still holds the stored token only.
    const config = JSON.parse(readFileSync(join(u.home, '.config', 'svcenv', 'config.json'), 'utf8'));
    expect(config.token).toBe(storedToken);
  });

  it('a refused exchange exits 1 with the server message and prints no token', async () => {
    const bad = await sign({ sub: 'x', aud: 'someone-else' });
    const u = user({ SVCENV_IDENTITY: identityId, SVCENV_OIDC_TOKEN: bad });
    const r = await getVar(u.env);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^UNAUTHORIZED: audience does not match\n/);
    clean(r, bad);
    const pasted = await getVar(user({ SVCENV_IDENTITY: bad, SVCENV_OIDC_TOKEN: bad }).env);
    expect(pasted.code).toBe(1);
    expect(pasted.stderr).toContain('is not an identity id');
    clean(pasted, bad);
    const none = await getVar(user({ SVCENV_IDENTITY: identityId }).env);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no identity token was found');
  });

  it('whoami names the identity and the expiry, never a token', async () => {
    const platform = await sign();
    const u = user({ SVCENV_IDENTITY: identityId, SVCENV_OIDC_TOKEN: platform });
    const r = await runCli(['whoami'], { env: u.env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^identity: +deploy \\(${identityId}\\)$`, 'm'));
    const expires = /^expires: +(\S+)$/m.exec(r.stdout)?.[1];
    expect(Date.parse(expires!) - Date.now()).toBeGreaterThan(800_000);
    clean(r, platform);
  });

  it('offers --identity in the help and the completion scripts', async () => {
    const help = await runCli(['pull', '--help'], { env: user().env });
    expect(help.stdout).toContain('--identity');
    expect((await runCli(['--help'])).stdout).toContain('SVCENV_IDENTITY');
    const bash = await runCli(['completion', 'bash']);
    expect(bash.stdout).toContain('--identity');
  });
});
