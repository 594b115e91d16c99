/**
 * Smoke test of the linux-arm64 executable under user-mode emulation (qemu-aarch64 with Debian's
 * arm64 C library, see .ci/run). Skipped only on a developer machine without qemu; in CI (CI=true) a
 * missing qemu fails the test instead of hiding the arm64 build.
 */
import { existsSync, statSync, writeFileSync } from 'node:fs';
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
import { build } from '../build.js';
import { hostBinary, runCli, tempDir } from './helpers.js';

const qemu = ['/usr/bin/qemu-aarch64', '/usr/local/bin/qemu-aarch64'].find((p) => existsSync(p));
const sysroot = '/usr/aarch64-linux-gnu';
const arm64Binary = join(hostBinary, '..', 'svcenv-linux-arm64');
const enabled = qemu !== undefined || process.env.CI === 'true';

describe.skipIf(!enabled)('linux-arm64 executable under qemu-aarch64', () => {
  let server: ServerProcess;
  let wrapper: string;

  beforeAll(async () => {
    if (!qemu) throw new Error('qemu-aarch64 is not installed (apt-get install qemu-user libc6-arm64-cross)');
    if (!existsSync(arm64Binary) || statSync(arm64Binary).mtimeMs < statSync(hostBinary).mtimeMs) {
      build({ targets: ['linux-arm64'] });
    }
    // A tiny launcher so the binary runs as a program would: argv, env and stdio all pass through.
    wrapper = join(tempDir(), 'svcenv-arm64');
    writeFileSync(wrapper, `#!/bin/sh\nexec ${qemu} -L ${sysroot} ${arm64Binary} "$@"\n`, { mode: 0o755 });
    server = await startServer();
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('prints its version and runs a command with a scrubbed variable from a live server', async () => {
    const version = await runCli(['version'], { binary: wrapper });
    expect(version.stdout).toMatch(/^svcenv \d+\.\d+\.\d+/);
    const { jwt } = await signupUser(server);
    const project = await createProject(server, jwt);
    const { token } = await createToken(server, jwt, { projectId: project.id });
    await upsert(server, jwt, project.id, ['dev'], [{ key: 'API_KEY', value: 'arm64-secret-value', type: 'secret' }]);
    const r = await runCli(['run', '--all', '--', 'sh', '-c', 'echo "key=$API_KEY"; exit 3'], {
      binary: wrapper,
      env: { SVCENV_API_URL: server.url, SVCENV_TOKEN: token, SVCENV_PROJECT: project.id, SVCENV_ENV: 'dev' },
    });
    expect([r.code, r.stdout, r.stderr]).toEqual([3, 'key=***\n', '']);
  }, 120_000);
});
