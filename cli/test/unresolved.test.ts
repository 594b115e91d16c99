/**
 * D67 with the compiled svcenv against the real server: `vars set` and `push` validate, print each
 * unresolved key with its code and what is wrong, save nothing and exit 1; `--allow-unresolved` saves;
 * `run --only` pulls only its keys, so a broken value elsewhere in the environment does not stop it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { listVarsResponse } from '@svcenv/contract';
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

/* biome-ignore-start lint/suspicious/noTemplateCurlyInString: literal reference syntax */
let server: ServerProcess;
let jwt: string;
let project: { id: string };
let env: Record<string, string>;

beforeAll(async () => {
  server = await startServer();
  ({ jwt } = await signupUser(server));
  project = await createProject(server, jwt, { name: 'Refs' });
  const token = (await createToken(server, jwt, { scope: 'write', projectId: project.id })).token;
  await upsert(server, jwt, project.id, ['prod'], [{ key: 'DB_HOST', value: 'db.internal', type: 'plain' }]);
  await upsert(server, jwt, project.id, ['dev'], [{ key: 'DB_USER', value: 'app-user', type: 'plain' }]);
  env = {
    SVCENV_API_URL: server.url,
    SVCENV_TOKEN: token,
    SVCENV_PROJECT: project.id,
    SVCENV_ENV: 'dev',
    HOME: tempDir('svcenv-home-'),
  };
});

afterAll(async () => {
  await server?.stop();
});

const keys = async () =>
  (
    await server.request('GET', `/v1/projects/${project.id}/envs/dev/vars`, { token: jwt, schema: listVarsResponse })
  ).body.vars.map((v) => v.key);

describe('D67 in the CLI', () => {
  it('vars set refuses an unresolved reference with a guess, saves nothing; --allow-unresolved saves it', async () => {
    const refused = await runCli(['vars', 'set', 'OOPS=${prdo.DB_HOST}', '--plain'], { env });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      'UNRESOLVED_REFERENCES: nothing was saved: a value whose reference does not resolve:\n' +
        '  OOPS (REFERENCE_FORBIDDEN): the environment `prdo` does not exist or you cannot read it; did you mean `prod`?\n' +
        'hint: fix the reference, or pass --allow-unresolved to save anyway (a pull of a value that cannot resolve fails)\n',
    );
    expect(await keys()).toEqual(['DB_USER']);
    const saved = await runCli(['vars', 'set', 'OOPS=${prdo.DB_HOST}', '--plain', '--allow-unresolved'], { env });
    expect([saved.code, saved.stdout]).toEqual([0, 'created OOPS (plain)\n']);
    expect(await keys()).toEqual(['DB_USER', 'OOPS']);
    // A valid reference is saved without the flag.
    const ok = await runCli(['vars', 'set', 'HOST=${prod.DB_HOST}', '--plain'], { env });
    expect([ok.code, ok.stdout]).toEqual([0, 'created HOST (plain)\n']);
  });

  it('run --only is not failed by an unrelated broken key (the whole environment is)', async () => {
    await upsert(server, jwt, project.id, ['dev'], [{ key: 'BROKEN', value: '${nope.KEY}', type: 'plain' }]);
    const all = await runCli(['run', '--all', '--', 'true'], { env });
    expect(all.code).toBe(1);
    expect(all.stderr).toContain('REFERENCE_FORBIDDEN');
    // The hint says what may be wrong (a typo as much as access) and the two ways forward.
    expect(all.stderr).toContain('does not exist (a typo?) or that this token cannot read');
    expect(all.stderr).toContain('svcenv run --only');
    const only = await runCli(
      ['run', '--only', 'DB_USER', '--', 'sh', '-c', 'echo "user=$DB_USER broken=${BROKEN:-unset}"'],
      {
        env,
      },
    );
    expect(only.stderr).toBe('');
    expect([only.code, only.stdout]).toEqual([0, 'user=*** broken=unset\n']);
    // A key the environment lacks is still named by --only's own check.
    const missing = await runCli(['run', '--only', 'DB_USER,NOPE', '--', 'true'], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/NOPE/);
  });

  it('push lists every unresolved key and saves nothing; --allow-unresolved pushes', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, '.env'), 'A=${MISSING_KEY}\nB=${B2}\nB2=${B}\nC=fine\n');
    const before = await keys();
    const refused = await runCli(['push'], { env, cwd });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('nothing was saved: 3 values whose references do not resolve:\n');
    expect(refused.stderr).toContain('  A (REFERENCE_MISSING): `${MISSING_KEY}` names no variable of this environment');
    expect(refused.stderr).toContain('  B (CIRCULAR_REFERENCE): ');
    expect(refused.stderr).toContain('  B2 (CIRCULAR_REFERENCE): ');
    expect(refused.stderr).toContain('--allow-unresolved');
    expect(await keys()).toEqual(before);
    const pushed = await runCli(['push', '--allow-unresolved'], { env, cwd });
    expect([pushed.code, pushed.stdout]).toEqual([0, '4 created, 0 updated\ncreated: A, B, B2, C\n']);
  });

  it('--help and the completion scripts name --allow-unresolved', async () => {
    for (const cmd of ['push', 'vars']) {
      expect((await runCli([cmd, '--help'])).stdout).toContain('--allow-unresolved');
    }
    expect((await runCli(['completion', 'bash'])).stdout).toContain('--allow-unresolved');
  });
});
/* biome-ignore-end lint/suspicious/noTemplateCurlyInString: literal reference syntax */
