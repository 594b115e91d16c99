import { createHash, pbkdf2, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliReleaseManifest } from '@svcenv/contract';
import { operations } from '@svcenv/contract/operations';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliReleaseRoutes } from '../src/routes/cli-releases.js';
import { repoRoot, startApp } from './harness.js';

/**
 * D39/D41: the release manifest is made once per process and answered from memory; downloads serve the bytes
 * it describes. The real plugin on a server of its own over a release directory the test may change (the
 * app's own dist/cli is shared with the CLI tests), and the app itself over dist/cli, read only.
 */
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('the CLI release manifest (D39)', () => {
  let server: FastifyInstance;
  let url: string;
  let dist: string;
  const linux = randomBytes(3 * 1024 * 1024);
  const darwin = randomBytes(1024 * 1024);

  beforeAll(async () => {
    dist = mkdtempSync(join(tmpdir(), 'svcenv-release-'));
    writeFileSync(join(dist, 'svcenv-linux-x64'), linux);
    writeFileSync(join(dist, 'svcenv-darwin-arm64'), darwin);
    server = Fastify();
    await server.register(cliReleaseRoutes, { distDir: dist, version: '9.8.7' });
    url = await server.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dist, { recursive: true, force: true });
  });

  const latest = async () => {
    const res = await fetch(`${url}${operations.cliLatest.path}`);
    expect(res.status).toBe(200);
    return { text: await res.text() };
  };
  const download = async (os: string, arch: string) => {
    const res = await fetch(`${url}/v1/cli/download/${os}/${arch}`);
    return {
      status: res.status,
      checksum: res.headers.get('x-checksum-sha256'),
      bytes: Buffer.from(await res.arrayBuffer()),
    };
  };

  it('lists each binary with its SHA-256, the same text on every call', async () => {
    const first = await latest();
    expect(cliReleaseManifest.parse(JSON.parse(first.text))).toEqual({
      version: '9.8.7',
      assets: [
        { os: 'linux', arch: 'x64', url: '/v1/cli/download/linux/x64', sha256: sha256(linux) },
        { os: 'darwin', arch: 'arm64', url: '/v1/cli/download/darwin/arm64', sha256: sha256(darwin) },
      ],
    });
    const again = await Promise.all(Array.from({ length: 20 }, latest));
    for (const r of again) expect(r.text).toBe(first.text);
  });

  it('answers without touching a file: binaries replaced, rewritten, added or removed after start change nothing', async () => {
    const before = (await latest()).text;
    // A rebuild renamed into place (cli/build.ts does so), one rewritten in place, a new one, a removed one.
    const rebuilt = randomBytes(2 * 1024 * 1024);
    writeFileSync(join(dist, 'svcenv-linux-x64.tmp'), rebuilt);
    renameSync(join(dist, 'svcenv-linux-x64.tmp'), join(dist, 'svcenv-linux-x64'));
    writeFileSync(join(dist, 'svcenv-linux-arm64'), randomBytes(1024));
    rmSync(join(dist, 'svcenv-darwin-arm64'));
    expect((await latest()).text).toBe(before);
    // Even the directory gone: the manifest is memory.
    const moved = `${dist}-moved`;
    renameSync(dist, moved);
    try {
      expect(existsSync(dist)).toBe(false);
      expect((await latest()).text).toBe(before);
      // A download serves the bytes the manifest describes, not the rebuild, and the removed one still.
      const [l, d, a] = await Promise.all([
        download('linux', 'x64'),
        download('darwin', 'arm64'),
        download('linux', 'arm64'),
      ]);
      expect([l.status, l.checksum, sha256(l.bytes)]).toEqual([200, sha256(linux), sha256(linux)]);
      expect([d.status, d.checksum, sha256(d.bytes)]).toEqual([200, sha256(darwin), sha256(darwin)]);
      // Not in the manifest when the process read it: not served.
      expect(a.status).toBe(404);
    } finally {
      renameSync(moved, dist);
    }
    expect(readdirSync(dist).sort()).toEqual(['svcenv-linux-arm64', 'svcenv-linux-x64']);
  });

  it('serves many downloads at once from the one open file, each whole', async () => {
    const all = await Promise.all(Array.from({ length: 8 }, () => download('linux', 'x64')));
    for (const r of all) expect(sha256(r.bytes)).toBe(sha256(linux));
    expect((await download('windows', 'x64')).status).toBe(404);
  });

  it('keeps serving after clients go away mid-download (the fuzz test found the file closed under them)', async () => {
    for (let i = 0; i < 5; i++) {
      // The connection itself goes after the first bytes (fetch may keep reading to reuse it): the server's
      // stream is destroyed mid-file.
      await new Promise<void>((resolve, reject) => {
        const req = httpGet(`${url}/v1/cli/download/linux/x64`, { agent: false }, (res) => {
          expect(res.statusCode).toBe(200);
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? undefined : reject(e)));
      });
    }
    const after = await download('linux', 'x64');
    expect([after.status, sha256(after.bytes)]).toEqual([200, sha256(linux)]);
  });

  it('answers while every libuv thread is busy (bcrypt, file reads): it waits on no thread', async () => {
    // Four threads by default; eight long key derivations keep them all busy for a while.
    let busyUntil = 0;
    const busy = Array.from(
      { length: 8 },
      () =>
        new Promise<void>((resolve) =>
          pbkdf2('x', 'salt', 1_500_000, 64, 'sha512', () => {
            busyUntil ||= Date.now();
            resolve();
          }),
        ),
    );
    await new Promise((r) => setTimeout(r, 20));
    const asked = Date.now();
    await latest();
    const answered = Date.now();
    await Promise.all(busy);
    // Answered before the first derivation ended, so without waiting for a thread.
    expect(answered, `answered after ${answered - asked} ms, threads free after ${busyUntil - asked} ms`).toBeLessThan(
      busyUntil,
    );
  });
});

describe('the app serves dist/cli (D41)', () => {
  it('the manifest of the binaries next to the server, identical on every call', async () => {
    const app = await startApp();
    try {
      const texts = await Promise.all(
        Array.from({ length: 10 }, async () => (await app.call(operations.cliLatest)).text),
      );
      expect(new Set(texts).size).toBe(1);
      const manifest = cliReleaseManifest.parse(JSON.parse(texts[0]!));
      const dir = join(repoRoot, 'dist', 'cli');
      for (const a of manifest.assets) {
        expect(a.sha256).toBe(sha256(readFileSync(join(dir, `svcenv-${a.os}-${a.arch}`))));
      }
      expect(manifest.assets.length).toBe(readdirSync(dir).filter((f) => /^svcenv-[a-z]+-[a-z0-9]+$/.test(f)).length);
    } finally {
      await app.stop();
    }
  });
});
