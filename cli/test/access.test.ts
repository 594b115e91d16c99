/**
 * The compiled svcenv against the real server, from an empty HOME: D74's `svcenv access request`, `access
 * list` and `access withdraw`, with a Developer's token asking for the protected prod it cannot read.
 */
import { accessRequestsResponse, sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, createToken, type ServerProcess, signupUser, startServer } from '../../server/test/harness.js';
import { runCli, tempDir } from './helpers.js';

let server: ServerProcess;
let owner: string;
let project: { id: string; slug: string };
let token: string;

beforeAll(async () => {
  server = await startServer({ env: { DEFAULT_PLAN: 'team' } });
  ({ jwt: owner } = await signupUser(server, 'Olga'));
  const { workspaceId } = (await server.request('GET', '/v1/auth/session', { token: owner, schema: sessionResponse }))
    .body.user;
  const dev = await signupUser(server, 'Dora');
  const inv = await server.request('POST', '/v1/workspace/invites', {
    token: owner,
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
  project = await createProject(server, owner, { name: 'Shop API' }); // dev, staging, prod (protected)
  const member = await server.request('PUT', `/v1/projects/${project.id}/members/${dev.user.id}`, {
    token: owner,
    body: { role: 'Developer' },
  });
  expect(member.status, member.text).toBe(200);
  token = (await createToken(server, devJwt, { name: 'laptop', scope: 'read' })).token;
});

afterAll(async () => {
  await server?.stop();
});

const env = () => ({
  HOME: tempDir('svcenv-home-'),
  SVCENV_API_URL: server.url,
  SVCENV_TOKEN: token,
  SVCENV_PROJECT: project.id,
});

const requests = async () =>
  (
    await server.request('GET', `/v1/projects/${project.id}/access-requests`, {
      token: owner,
      schema: accessRequestsResponse,
    })
  ).body.accessRequests;

describe('svcenv access', () => {
  it('refuses a duration outside 5m..7d, or none, before any request', async () => {
    for (const [given, message] of [
      ['2m', 'error: --for "2m" is out of range\nhint: access is requested for 5m to 7d\n'],
      ['8d', 'error: --for "8d" is out of range\nhint: access is requested for 5m to 7d\n'],
      ['soon', 'error: --for "soon" is not a duration\nhint: a number and m, h or d: 30m, 1h, 1d, 7d\n'],
    ] as const) {
      const r = await runCli(
        ['access', 'request', '--env', 'prod', '--permission', 'read', '--for', given, '--reason', 'incident'],
        { env: env() },
      );
      expect([r.code, r.stdout, r.stderr]).toEqual([1, '', message]);
    }
    const noReason = await runCli(['access', 'request', '--env', 'prod', '--permission', 'read', '--for', '1h'], {
      env: env(),
    });
    expect(noReason.code).toBe(1);
    expect(noReason.stderr).toContain('needs --reason');
    expect(await requests()).toEqual([]);
  });

  it('requests access, lists it, shows the grant once approved, and withdraws another', async () => {
    const r = await runCli(
      ['access', 'request', '--env', 'prod', '--permission', 'read', '--for', '1h', '--reason', 'incident 42'],
      { env: env() },
    );
    expect(r.code, r.stderr).toBe(0);
    const id = /request ([0-9a-f-]{36}), status pending/.exec(r.stdout)?.[1];
    expect(r.stdout).toBe(`requested read on prod for 1h: request ${id}, status pending\n`);
    expect(r.stderr).toContain("the project's Admins and the workspace's Owners were notified");
    expect((await requests()).map((x) => [x.id, x.env, x.permission, x.status, x.durationSeconds])).toEqual([
      [id, 'prod', 'read', 'pending', 3600],
    ]);

    const listed = await runCli(['access', 'list'], { env: env() });
    expect(listed.code, listed.stderr).toBe(0);
    const [header, row] = listed.stdout.split('\n');
    expect(header).toMatch(/^ID\s+ENV\s+PERMISSION\s+STATUS\s+REQUESTER\s+TIME\s+REASON$/);
    expect(row).toMatch(
      new RegExp(`^${id!.slice(0, 8)}\\s+prod\\s+read\\s+pending\\s+Dora\\s+asks 1h, lapses .*incident 42$`),
    );

    const approved = await server.request('POST', `/v1/projects/${project.id}/access-requests/${id}/approve`, {
      token: owner,
      body: {},
    });
    expect(approved.status, approved.text).toBe(200);
    const after = await runCli(['access', 'list', '--status', 'approved'], { env: env() });
    expect(after.stdout).toMatch(/prod\s+read\s+approved\s+Dora\s+(59m|1h) left \(until /);
    const json = await runCli(['access', 'list', '--json'], { env: env() });
    expect(JSON.parse(json.stdout).accessRequests[0]).toMatchObject({ id, status: 'approved' });

    const second = await runCli(
      ['access', 'request', '--env', 'staging', '--permission', 'write', '--for', '30m', '--reason', 'deploy'],
      { env: env() },
    );
    // A Developer writes staging already: asking for access one has is CONFLICT (D73-D75, the details).
    expect(second.code).not.toBe(0);
    expect(second.stderr).toMatch(/^CONFLICT: you already have write access/);

    const third = await runCli(
      ['access', 'request', '--env', 'prod', '--permission', 'write', '--for', '30m', '--reason', 'hotfix'],
      { env: env() },
    );
    expect(third.code, third.stderr).toBe(0);
    const thirdId = /request ([0-9a-f-]{36})/.exec(third.stdout)![1]!;
    const withdrawn = await runCli(['access', 'withdraw', thirdId.slice(0, 8)], { env: env() });
    expect([withdrawn.code, withdrawn.stdout]).toEqual([0, `withdrew access request ${thirdId} (write on prod)\n`]);
    expect((await requests()).find((x) => x.id === thirdId)?.status).toBe('withdrawn');
  });

  it('names the subcommands', async () => {
    const r = await runCli(['access', 'lst'], { env: env() });
    expect([r.code, r.stderr]).toEqual([
      1,
      'error: unknown access command "lst"\nhint: did you mean `svcenv access list`?\n',
    ]);
    const help = await runCli(['access', '--help'], { env: env() });
    expect(help.stdout).toContain('svcenv access request --env prod --permission read --for 1h');
  });
});
