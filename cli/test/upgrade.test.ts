/**
 * D39 upgrade: an older build of svcenv replaces itself with the newer one that the real
 * cliReleaseRoutes plugin serves, verifying the SHA-256; a bad download leaves the old binary working.
 */
import { copyFileSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliReleaseManifest, errorBody } from '@svcenv/contract';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliReleaseRoutes } from '../../server/src/routes/cli-releases.js';
import { build, hostTarget } from '../build.js';
import { hostBinary, runCli, tempDir } from './helpers.js';

const newVersion = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')).version;
let app: FastifyInstance;
let url: string;
let distDir: string;
let oldBinary: string;

beforeAll(async () => {
  distDir = tempDir('svcenv-dist-');
  copyFileSync(hostBinary, join(distDir, `svcenv-${hostTarget}`));
  const oldDir = tempDir('svcenv-old-');
  [oldBinary] = build({ targets: [hostTarget], version: '0.0.1', outdir: oldDir }) as [string];
  app = Fastify();
  await app.register(cliReleaseRoutes, { distDir, version: newVersion });
  url = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
});

describe('cliReleaseRoutes', () => {
  it('serves the manifest and binaries without a credential; 404 for a missing asset', async () => {
    const manifest = cliReleaseManifest.parse(await (await fetch(`${url}/v1/cli/latest`)).json());
    expect(manifest.version).toBe(newVersion);
    expect(manifest.assets).toHaveLength(1);
    const [os, arch] = hostTarget.split('-');
    expect(manifest.assets[0]).toMatchObject({ os, arch, url: `/v1/cli/download/${os}/${arch}` });
    const missing = await fetch(`${url}/v1/cli/download/darwin/arm64`);
    expect(missing.status).toBe(404);
    expect(errorBody.parse(await missing.json()).error.code).toBe('NOT_FOUND');
    expect((await fetch(`${url}/v1/cli/download/windows/x64`)).status).toBe(404);
  });
});

describe('svcenv upgrade', () => {
  it('--check reports, upgrade replaces the executable atomically, then it is up to date', async () => {
    const dir = tempDir();
    const self = join(dir, 'svcenv');
    copyFileSync(oldBinary, self);
    const env = { HOME: dir, SVCENV_API_URL: url };
    expect((await runCli(['version'], { binary: self })).stdout).toBe('svcenv 0.0.1\n');
    const check = await runCli(['upgrade', '--check'], { binary: self, env });
    expect([check.code, check.stdout]).toEqual([0, `svcenv ${newVersion} is available (installed: 0.0.1)\n`]);
    expect((await runCli(['version'], { binary: self })).stdout).toBe('svcenv 0.0.1\n');
    const up = await runCli(['upgrade'], { binary: self, env });
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toContain(`upgraded svcenv 0.0.1 -> ${newVersion}`);
    expect((await runCli(['version'], { binary: self })).stdout).toBe(`svcenv ${newVersion}\n`);
    const again = await runCli(['upgrade'], { binary: self, env });
    expect(again.stdout).toBe(`svcenv ${newVersion} is up to date\n`);
  });

  it('a download that does not match the manifest leaves the old binary in place and working', async () => {
    const dir = tempDir();
    const self = join(dir, 'svcenv');
    copyFileSync(oldBinary, self);
    // A second server whose manifest hash is right for the file it hashed, but the file changes under it.
    const badDist = tempDir('svcenv-dist-bad-');
    const asset = join(badDist, `svcenv-${hostTarget}`);
    copyFileSync(hostBinary, asset);
    // Whole seconds, so the mtime can be put back exactly after the file is corrupted below.
    utimesSync(asset, 1_700_000_000, 1_700_000_000);
    const bad = Fastify();
    await bad.register(cliReleaseRoutes, { distDir: badDist, version: '99.0.0' });
    const badUrl = await bad.listen({ host: '127.0.0.1', port: 0 });
    try {
      const manifest = cliReleaseManifest.parse(await (await fetch(`${badUrl}/v1/cli/latest`)).json());
      expect(manifest.version).toBe('99.0.0');
      // Same size and mtime are what the cache keys on, so it keeps the old hash: a corrupted download.
      const bytes = readFileSync(asset);
      bytes[bytes.length - 1] = (bytes.at(-1) ?? 0) ^ 0xff;
      writeFileSync(asset, bytes);
      utimesSync(asset, 1_700_000_000, 1_700_000_000);
      const up = await runCli(['upgrade'], { binary: self, env: { HOME: dir, SVCENV_API_URL: badUrl } });
      expect(up.code).toBe(1);
      expect(up.stderr).toMatch(/SHA-256/);
      expect((await runCli(['version'], { binary: self })).stdout).toBe('svcenv 0.0.1\n');
      expect(readdirSync(dir).filter((f) => f.endsWith('.new'))).toEqual([]);
    } finally {
      await bad.close();
    }
  });
});
