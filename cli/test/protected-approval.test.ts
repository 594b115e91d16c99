/**
 * The compiled svcenv against the real server, from an empty HOME: writes to a protected environment are
 * shown and confirmed (a terminal, or --yes), and under D47 a write refused with APPROVAL_REQUIRED becomes a
 * change request, which `svcenv requests` lists, shows, approves, rejects and withdraws (ADR 0028).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  changeRequestsResponse,
  listEnvsResponse,
  listVarsResponse,
  sessionResponse,
  switchWorkspaceResponse,
} from '@svcenv/contract';
import { operations } from '@svcenv/contract/operations';
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
const NEW_SECRET = 'rotated-staple-battery';

let server: ServerProcess;
let owner: string;
/** A project Admin of the project: approves what the Owner's token proposes. */
let admin: string;
let project: { id: string; slug: string };
let token: string;

beforeAll(async () => {
  server = await startServer({ env: { DEFAULT_PLAN: 'team' } });
  ({ jwt: owner } = await signupUser(server, 'Olga'));
  const { workspaceId } = (await server.request('GET', '/v1/auth/session', { token: owner, schema: sessionResponse }))
    .body.user;
  const adele = await signupUser(server, 'Adele');
  const inv = await server.request('POST', '/v1/workspace/invites', {
    token: owner,
    body: { email: adele.email, wsRole: 'Member' },
  });
  expect(inv.status, inv.text).toBe(200);
  admin = (
    await server.request('POST', '/v1/auth/switch-workspace', {
      token: adele.jwt,
      body: { workspaceId },
      schema: switchWorkspaceResponse,
    })
  ).body.token;
  project = await createProject(server, owner, { name: 'Shop API' }); // dev, staging, prod (protected)
  const member = await server.request('PUT', `/v1/projects/${project.id}/members/${adele.user.id}`, {
    token: owner,
    body: { role: 'Admin' },
  });
  expect(member.status, member.text).toBe(200);
  token = (await createToken(server, owner, { name: 'laptop', scope: 'write', projectId: project.id })).token;
  for (const env of ['dev', 'staging', 'prod']) {
    await upsert(
      server,
      owner,
      project.id,
      [env],
      [
        { key: 'DB_HOST', value: 'db.internal', type: 'plain' },
        { key: 'DB_PASSWORD', value: SECRET, type: 'secret' },
        { key: 'LOG_LEVEL', value: 'info', type: 'plain' },
      ],
    );
  }
  // staging requires approval (D47); prod is protected and does not.
  const patched = await server.call(
    operations.updateEnv,
    { params: { id: project.id, env: 'staging' }, body: { requireApproval: true } },
    owner,
  );
  expect(patched.status, patched.text).toBe(200);
  const envs = (
    await server.request('GET', `/v1/projects/${project.id}/envs`, { token: owner, schema: listEnvsResponse })
  ).body.envs;
  expect(envs.find((e) => e.name === 'prod')).toMatchObject({ protected: true, requireApproval: false });
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

async function values(envName: string): Promise<Record<string, string>> {
  const r = await server.request('GET', `/v1/projects/${project.id}/envs/${envName}/vars?reveal=true`, {
    token: owner,
    schema: listVarsResponse,
  });
  return Object.fromEntries(r.body.vars.map((v) => [v.key, v.value]));
}

/** A directory whose .env changes DB_HOST and LOG_LEVEL and adds NEW_FEATURE (the user test's push). */
function workdir(): string {
  const cwd = tempDir();
  writeFileSync(join(cwd, '.env'), `DB_HOST=db.replica\nDB_PASSWORD=${SECRET}\nLOG_LEVEL=debug\nNEW_FEATURE=on\n`);
  return cwd;
}

const noValues = (out: string) => {
  for (const v of [SECRET, NEW_SECRET, 'db.replica', token]) expect(out).not.toContain(v);
};

describe('a protected environment', () => {
  it('push without a terminal and without --yes refuses, sends nothing and says to pass --yes', async () => {
    const before = await values('prod');
    const r = await runCli(['push', '-e', 'prod'], { env: env(), cwd: workdir() });
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toBe(
      'error: prod is a protected environment: this push would change 3 variables (created: NEW_FEATURE; updated: DB_HOST, LOG_LEVEL); nothing was sent\n' +
        'hint: confirm on a terminal, or pass --yes (-y) to change it without a terminal\n',
    );
    expect(await values('prod')).toEqual(before);
  });

  it('on a terminal push shows the keys and asks; "n" changes nothing, "y" pushes and names the keys', async () => {
    const before = await values('prod');
    const no = runInTerminal(['push', '-e', 'prod'], { env: env(), cwd: workdir() });
    await waitFor(() => no.screen().includes('Change protected prod? [y/N] '), 'the question');
    expect(no.screen()).toContain(
      'prod is a protected environment; this push changes 3 variables:\r\n  created: NEW_FEATURE\r\n  updated: DB_HOST, LOG_LEVEL\r\n',
    );
    no.type('n\r');
    const declined = await no.done;
    expect(declined.code).toBe(1);
    expect(declined.screen).toContain('error: not confirmed: nothing was changed in prod');
    expect(await values('prod')).toEqual(before);

    const yes = runInTerminal(['push', '-e', 'prod'], { env: env(), cwd: workdir() });
    await waitFor(() => yes.screen().includes('Change protected prod? [y/N] '), 'the question');
    yes.type('y\r');
    const pushed = await yes.done;
    expect(pushed.code, pushed.screen).toBe(0);
    expect(pushed.screen).toContain('1 created, 2 updated\r\ncreated: NEW_FEATURE\r\nupdated: DB_HOST, LOG_LEVEL\r\n');
    noValues(pushed.screen);
    expect(await values('prod')).toMatchObject({ DB_HOST: 'db.replica', LOG_LEVEL: 'debug', NEW_FEATURE: 'on' });
  });

  it('--yes (-y) pushes without asking; vars set and unset ask and refuse the same way', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, '.env'), 'LOG_LEVEL=warn\nEXTRA=1\n');
    const r = await runCli(['push', '-e', 'prod', '-y'], { env: env(), cwd });
    expect([r.code, r.stdout]).toEqual([0, '1 created, 1 updated\ncreated: EXTRA\nupdated: LOG_LEVEL\n']);

    const set = await runCli(['vars', 'set', 'LOG_LEVEL=error', '-e', 'prod'], { env: env() });
    expect(set.code).toBe(1);
    expect(set.stderr).toMatch(
      /^error: prod is a protected environment: this command would change 1 variable \(updated: LOG_LEVEL\); nothing was sent\n/,
    );
    const unset = await runCli(['vars', 'unset', 'EXTRA', '-e', 'prod'], { env: env() });
    expect(unset.stderr).toMatch(/\(deleted: EXTRA\); nothing was sent\nhint: .*--yes/);
    expect(await values('prod')).toMatchObject({ LOG_LEVEL: 'warn', EXTRA: '1' });

    const t = runInTerminal(['vars', 'unset', 'EXTRA', '-e', 'prod'], { env: env() });
    await waitFor(() => t.screen().includes('Change protected prod? [y/N] '), 'the question');
    expect(t.screen()).toContain('  deleted: EXTRA\r\n');
    t.type('y\r');
    expect((await t.done).screen).toContain('deleted EXTRA');
    const forced = await runCli(['vars', 'set', 'LOG_LEVEL=error', '-e', 'prod', '--yes'], { env: env() });
    expect([forced.code, forced.stdout]).toEqual([0, 'updated LOG_LEVEL (plain)\n']);
    expect(await values('prod')).not.toHaveProperty('EXTRA');
    // An environment that is not protected is written without a question, as before.
    const dev = await runCli(['vars', 'set', 'LOG_LEVEL=error', '-e', 'dev'], { env: env() });
    expect([dev.code, dev.stdout]).toEqual([0, 'updated LOG_LEVEL (plain)\n']);
  });
});

describe('D47: an environment that requires approval', () => {
  const page = () => `${server.url}/projects/${project.id}?tab=requests&env=staging`;
  async function openRequests() {
    const r = await server.request('GET', `/v1/projects/${project.id}/envs/staging/change-requests?status=open`, {
      token: owner,
      schema: changeRequestsResponse,
    });
    return r.body.changeRequests;
  }

  it('push opens a change request with the same changes, prints its id and its dashboard page', async () => {
    const before = await values('staging');
    const r = await runCli(['push', '-e', 'staging', '-m', 'point staging at the replica'], {
      env: env(),
      cwd: workdir(),
    });
    expect(r.code, r.stderr).toBe(0);
    const [cr] = await openRequests();
    expect(cr).toBeDefined();
    expect(r.stdout).toBe(
      '0 created, 0 updated\n' +
        `staging requires approval: opened change request ${cr!.id} (created: NEW_FEATURE; updated: DB_HOST, LOG_LEVEL); nothing changes until an Owner or project Admin approves it\n` +
        `review it in the dashboard: ${page()}&request=${cr!.id}\n` +
        `or: svcenv requests show ${cr!.id.slice(0, 8)} -p ${project.id} -e staging\n`,
    );
    noValues(r.stdout + r.stderr);
    expect(cr).toMatchObject({ message: 'point staging at the replica', author: 'token:laptop', status: 'open' });
    expect(cr!.changes.map((c) => [c.key, c.op, c.type])).toEqual([
      ['DB_HOST', 'set', 'plain'],
      ['LOG_LEVEL', 'set', 'plain'],
      ['NEW_FEATURE', 'set', 'secret'],
    ]);
    expect(await values('staging')).toEqual(before);

    // requests lists it; show gives its changes; approving with an access token is refused, plainly.
    const list = await runCli(['requests', '-e', 'staging'], { env: env() });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(
      new RegExp(
        `^ID +STATUS +OPENED +AUTHOR +CHANGES +MESSAGE\n${cr!.id.slice(0, 8)}  open +\\S+ \\S+ +token:laptop +DB_HOST, LOG_LEVEL, NEW_FEATURE +point staging at the replica\n$`,
      ),
    );
    expect(list.stderr).toBe(`in the dashboard: ${page()}\n`);
    const show = await runCli(['requests', 'show', cr!.id.slice(0, 6), '-e', 'staging'], { env: env() });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`id:      ${cr!.id}\nstatus:  open\n`);
    expect(show.stdout).toMatch(
      /changes:\n {2}set +DB_HOST +plain +db\.replica\n {2}set +LOG_LEVEL +plain +debug\n {2}set +NEW_FEATURE +secret +\*\*\*\n$/,
    );
    const approve = await runCli(['requests', 'approve', cr!.id.slice(0, 8), '-e', 'staging'], { env: env() });
    expect([approve.code, approve.stderr]).toEqual([
      1,
      "FORBIDDEN: approving a change request needs a dashboard session: it is a person's decision, which an access token cannot make\n" +
        `hint: an Owner or project Admin approves it in the dashboard: ${page()}\n`,
    ]);
    // With a dashboard session of a project Admin who is not its author, the same command applies it.
    const approved = await runCli(['requests', 'approve', cr!.id, '-e', 'staging', '--token', admin], { env: env() });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toMatch(
      new RegExp(`^approved change request ${cr!.id}: applied to staging as revision \\d+\n$`),
    );
    expect(await values('staging')).toMatchObject({ DB_HOST: 'db.replica', LOG_LEVEL: 'debug', NEW_FEATURE: 'on' });
    expect(await openRequests()).toEqual([]);
    const none = await runCli(['requests', '-e', 'staging'], { env: env() });
    expect([none.code, none.stdout, none.stderr]).toEqual([0, '', 'no open change requests in staging\n']);
  });

  it('vars set and unset open change requests; withdraw and reject close them', async () => {
    const set = await runCli(['vars', 'set', `DB_PASSWORD=-`, '-e', 'staging'], { env: env(), input: NEW_SECRET });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(
      /^staging requires approval: opened change request [0-9a-f-]{36} \(updated: DB_PASSWORD\); /,
    );
    noValues(set.stdout + set.stderr);
    const [cr] = await openRequests();
    expect(cr!.message).toBe('svcenv vars set: updated: DB_PASSWORD');
    const shown = await runCli(['requests', 'show', cr!.id, '-e', 'staging'], { env: env() });
    noValues(shown.stdout);
    const revealed = await runCli(['requests', 'show', cr!.id, '-e', 'staging', '--reveal'], { env: env() });
    expect(revealed.stdout).toContain(NEW_SECRET);

    const withdraw = await runCli(['requests', 'withdraw', cr!.id.slice(0, 8), '-e', 'staging'], { env: env() });
    expect([withdraw.code, withdraw.stdout]).toEqual([0, `withdrew change request ${cr!.id}\n`]);
    expect(await openRequests()).toEqual([]);

    const unset = await runCli(['vars', 'unset', 'LOG_LEVEL', '-e', 'staging', '-m', 'drop it'], { env: env() });
    expect(unset.code, unset.stderr).toBe(0);
    expect(unset.stdout).toContain('(deleted: LOG_LEVEL)');
    const [del] = await openRequests();
    expect(del).toMatchObject({ message: 'drop it', changes: [{ key: 'LOG_LEVEL', op: 'delete' }] });
    const refused = await runCli(['requests', 'reject', del!.id, '-e', 'staging'], { env: env() });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^FORBIDDEN: rejecting a change request needs a dashboard session/);
    const rejected = await runCli(
      ['requests', 'reject', del!.id, '-e', 'staging', '--token', admin, '--reason', 'still used'],
      { env: env() },
    );
    expect([rejected.code, rejected.stdout]).toEqual([0, `rejected change request ${del!.id}\n`]);
    const all = await runCli(['requests', '-e', 'staging', '--status', 'all'], { env: env() });
    expect(all.stdout.split('\n').filter((l) => / (applied|withdrawn|rejected) /.test(l))).toHaveLength(3);
    const gone = await runCli(['requests', 'show', 'ffffffff', '-e', 'staging'], { env: env() });
    expect([gone.code, gone.stderr]).toEqual([
      1,
      'NOT_FOUND: no change request "ffffffff" in staging\nhint: list them with `svcenv requests --status all`\n',
    ]);
    expect(await values('staging')).toMatchObject({ DB_PASSWORD: SECRET, LOG_LEVEL: 'debug' });
  });
});
