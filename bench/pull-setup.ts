/**
 * What the pull benchmarks share: starting a build's compiled server and seeding the same project, tokens
 * and Members by raw API calls every build since the first has answered alike (pull.bench.ts measures time,
 * pull-instructions.bench.ts counts instructions).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Client, freshPgSchema, repoRoot, startServer } from '../server/test/harness.js';

const DATABASE_URL = process.env.BENCH_DATABASE_URL;

/** `n` variables, half of them secrets, the first `refs` of them each referencing one further down. */
export function vars(n: number, refs: number) {
  return Array.from({ length: n }, (_, i) => ({
    key: `VAR_${i}`,
    value: i < refs ? `prefix-\${VAR_${i + refs}}-suffix` : `value-${i}-${'x'.repeat(20)}`,
    type: i % 2 ? 'plain' : 'secret',
  }));
}

/**
 * Starts a build's server: this checkout's compiled server, or the one in `dir` as its own package.json's
 * `start` says (builds before dist/server ran `node --import tsx server/src/main.ts`). On PostgreSQL each in a
 * fresh schema.
 */
export async function serve(
  dir: string | undefined,
  env: Record<string, string>,
  opts: { wrapper?: string[]; nodeFlags?: string[]; startTimeoutMs?: number } = {},
) {
  const pg = DATABASE_URL ? await freshPgSchema(DATABASE_URL) : null;
  const root = dir ?? repoRoot;
  const compiled = existsSync(join(root, 'server', 'scripts', 'build.mjs'));
  if (compiled) execFileSync(process.execPath, [join(root, 'server', 'scripts', 'build.mjs')], { stdio: 'inherit' });
  const args = compiled
    ? [...(opts.nodeFlags ?? []), join(root, 'dist', 'server', 'main.mjs')]
    : [...(opts.nodeFlags ?? []), '--import', 'tsx', join(root, 'server', 'src', 'main.ts')];
  const srv = await startServer({
    env: { ...env, ...(pg ? { DATABASE_URL: pg.url, MASTER_KEY: randomBytes(32).toString('base64') } : {}) },
    command: opts.wrapper
      ? { file: opts.wrapper[0], args: [...opts.wrapper.slice(1), process.execPath, ...args], cwd: root }
      : { args, cwd: root },
    startTimeoutMs: opts.startTimeoutMs,
  });
  return {
    srv,
    async stop() {
      await srv.stop();
      await pg?.drop();
    },
  };
}

let made = 0;
/**
 * A user, a project of 100 variables in `dev` and a read token, by the API calls every build since the first
 * has answered the same way (raw requests: the current contract's answer schemas would refuse an older build's
 * extra or missing fields).
 */
export async function seedPullSetup(c: Client) {
  const ok = async (res: Awaited<ReturnType<Client['request']>>, what: string) => {
    if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.text}`);
    return JSON.parse(res.text) as unknown;
  };
  const email = `bench-${Date.now()}-${made++}@example.test`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const { token: jwt } = (await ok(
    await c.request('POST', '/v1/auth/signup', { body: { name: 'Bench', email, password } }),
    'signup',
  )) as { token: string };
  const { id } = (await ok(
    await c.request('POST', '/v1/projects', { token: jwt, body: { name: 'bench' } }),
    'project',
  )) as {
    id: string;
  };
  const addProject = async (name: string, items: object[]) => {
    const p = (await ok(
      await c.request('POST', '/v1/projects', { token: jwt, body: { name, envs: ['dev'] } }),
      'project',
    )) as { id: string };
    await ok(
      await c.request('POST', `/v1/projects/${p.id}/vars`, { token: jwt, body: { envs: ['dev'], items } }),
      'vars',
    );
  };
  await ok(
    await c.request('POST', `/v1/projects/${id}/vars`, { token: jwt, body: { envs: ['dev'], items: vars(100, 10) } }),
    'vars',
  );
  const { token } = (await ok(
    await c.request('POST', '/v1/tokens', { token: jwt, body: { name: 'bench', envs: ['*'], scope: 'read' } }),
    'token',
  )) as { token: string };
  const path = `/v1/projects/${id}/envs/dev/pull`;
  const first = await c.request('GET', path, { token });
  if (first.status !== 200) throw new Error(`pull failed: ${first.status} ${first.text}`);
  const etag = first.headers.get('etag')!;
  const cond = await c.request('GET', path, { token, headers: { 'if-none-match': etag } });
  if (cond.status !== 304) throw new Error(`conditional pull answered ${cond.status}, not 304`);
  /**
   * D73: a Member of the workspace, a Developer of the project with `read` on dev as a per-environment
   * permission, that ends a day ahead (`temporary`) or never, and a read token that person created: its
   * pulls rest on that grant (D32), so the grant's expiry is judged on each of them.
   */
  const memberToken = async (temporary: boolean) => {
    const who = `bench-m-${Date.now()}-${made++}@example.test`;
    const { user, token: ownJwt } = (await ok(
      await c.request('POST', '/v1/auth/signup', { body: { name: 'Member', email: who, password } }),
      'member signup',
    )) as { token: string; user: { id: string } };
    const session = (await ok(await c.request('GET', '/v1/auth/session', { token: jwt }), 'session')) as {
      user: { workspaceId: string };
    };
    await ok(
      await c.request('POST', '/v1/workspace/invites', { token: jwt, body: { email: who, wsRole: 'Member' } }),
      'invite',
    );
    const { token: memberJwt } = (await ok(
      await c.request('POST', '/v1/auth/switch-workspace', {
        token: ownJwt,
        body: { workspaceId: session.user.workspaceId },
      }),
      'switch',
    )) as { token: string };
    await ok(
      await c.request('PUT', `/v1/projects/${id}/members/${user.id}`, { token: jwt, body: { role: 'Read-only' } }),
      'project role',
    );
    const expiresAt = temporary ? new Date(Date.now() + 86_400_000).toISOString() : undefined;
    await ok(
      await c.request('PUT', `/v1/projects/${id}/members/${user.id}/envs/dev`, {
        token: jwt,
        body: { permission: 'read', ...(expiresAt ? { expiresAt } : {}) },
      }),
      'env permission',
    );
    const { token: t } = (await ok(
      await c.request('POST', '/v1/tokens', { token: memberJwt, body: { name: 'member', envs: ['*'], scope: 'read' } }),
      'member token',
    )) as { token: string };
    const res = await c.request('GET', path, { token: t });
    if (res.status !== 200) throw new Error(`member pull failed: ${res.status} ${res.text}`);
    return { auth: { authorization: `Bearer ${t}` }, etag: res.headers.get('etag')! };
  };
  return {
    pullUrl: `${c.url}${path}`,
    auth: { authorization: `Bearer ${token}` },
    etag,
    body: first.text,
    addProject,
    memberToken,
  };
}
