/**
 * D75 with the compiled svcenv against the real server: `vars set --personal` sets one's own value of a key,
 * `vars --personal` lists them (masked unless --reveal), `vars unset --personal` removes one; `svcenv run`
 * with a token its owner created gets the override, a token created by someone else does not (ADR 0031).
 */
import { sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
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

let server: ServerProcess;
let project: { id: string };
/** The override's owner (a Developer) and the project's creator, each with a write token of their own. */
let mine: Record<string, string>;
let theirs: Record<string, string>;

beforeAll(async () => {
  server = await startServer();
  const owner = await signupUser(server, 'Olga');
  const { workspaceId } = (
    await server.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse })
  ).body.user;
  project = await createProject(server, owner.jwt, { name: 'Personal' }); // dev, staging, prod (protected)
  await upsert(server, owner.jwt, project.id, ['dev', 'prod'], [{ key: 'API_URL', value: 'shared', type: 'plain' }]);
  const dev = await signupUser(server, 'Dana');
  const inv = await server.request('POST', '/v1/workspace/invites', {
    token: owner.jwt,
    body: { email: dev.email, wsRole: 'Member' },
  });
  expect(inv.status, inv.text).toBe(200);
  const devJwt = (
    await server.request('POST', '/v1/auth/switch-workspace', {
      token: dev.jwt,
      body: { workspaceId },
      schema: switchWorkspaceResponse,
    })
  ).body.token;
  const added = await server.request('PUT', `/v1/projects/${project.id}/members/${dev.user.id}`, {
    token: owner.jwt,
    body: { role: 'Developer' },
  });
  expect(added.status, added.text).toBe(200);
  const base = { SVCENV_API_URL: server.url, SVCENV_PROJECT: project.id, SVCENV_ENV: 'dev' };
  mine = {
    ...base,
    SVCENV_TOKEN: (await createToken(server, devJwt, { scope: 'write', projectId: project.id })).token,
    HOME: tempDir('svcenv-home-'),
  };
  theirs = {
    ...base,
    SVCENV_TOKEN: (await createToken(server, owner.jwt, { scope: 'write', projectId: project.id })).token,
    HOME: tempDir('svcenv-home-'),
  };
});

afterAll(async () => {
  await server?.stop();
});

const check = (value: string) => ['run', '--all', '--', 'sh', '-c', `test "$API_URL" = "${value}"`];

describe('vars --personal (D75)', () => {
  it('sets, lists and unsets one own override; run applies it for its owner only', async () => {
    const set = await runCli(['vars', 'set', '--personal', 'API_URL=http://localhost:3000', 'NOPE=x'], { env: mine });
    expect([set.code, set.stderr]).toEqual([0, '']);
    expect(set.stdout).toBe(
      'set personal API_URL\nset personal NOPE (orphaned: no such variable in this environment, not applied)\n',
    );
    const masked = await runCli(['vars', '--personal'], { env: mine });
    expect(masked.code).toBe(0);
    expect(masked.stdout).toBe('KEY      ORPHANED  VALUE\nAPI_URL  no        ***\nNOPE     yes       ***\n');
    const shown = await runCli(['vars', '--personal', '--reveal'], { env: mine });
    expect(shown.stdout).toContain('API_URL  no        http://localhost:3000\n');
    // The shared listing marks the key whose value is the owner's own, and only for them.
    expect((await runCli(['vars'], { env: mine })).stdout).toContain(
      'API_URL  plain, personal  http://localhost:3000\n',
    );
    expect((await runCli(['vars'], { env: theirs })).stdout).toMatch(/^API_URL +plain +shared$/m);
    // Someone else lists none of them.
    expect((await runCli(['vars', '--personal'], { env: theirs })).stdout).toBe('no personal overrides in dev\n');

    expect((await runCli(check('http://localhost:3000'), { env: mine })).code).toBe(0);
    expect((await runCli(check('shared'), { env: theirs })).code).toBe(0);

    const unset = await runCli(['vars', 'unset', '--personal', 'API_URL'], { env: mine });
    expect([unset.code, unset.stdout]).toEqual([0, 'removed personal API_URL\n']);
    expect((await runCli(check('shared'), { env: mine })).code).toBe(0);
    const again = await runCli(['vars', 'unset', '--personal', 'API_URL'], { env: mine });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('NOT_FOUND');
  });

  it('refuses a protected environment and the flags of shared writes', async () => {
    const prod = await runCli(['vars', 'set', '--personal', 'API_URL=x', '-e', 'prod'], { env: theirs });
    expect(prod.code).toBe(1);
    expect(prod.stderr).toContain('protected');
    // The hint is about protection, not about the token's scope (which is write).
    expect(prod.stderr).toContain('personal values exist only in unprotected environments');
    expect(prod.stderr).not.toContain('write-scope token');
    const secret = await runCli(['vars', 'set', '--personal', '--secret', 'API_URL=x'], { env: mine });
    expect(secret.code).not.toBe(0);
    expect(secret.stderr).toContain('--secret does not apply with --personal');
    const get = await runCli(['vars', 'get', '--personal', 'API_URL'], { env: mine });
    expect(get.code).not.toBe(0);
  });
});
