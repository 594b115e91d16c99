/**
 * The pinned runtime: the README's two commands (`npm ci && npm start`, `npm ci && npm test`) run on Node 24
 * whatever Node started npm. The root package depends on the npm registry's `node` package at one exact
 * version; `npm ci` installs it (its preinstall fetches that platform's Node binary, also from the registry)
 * and links node_modules/.bin/node, which every npm script finds first on its PATH. The server's own
 * `engines` stays the truth of what it runs on, and the server refuses an older Node with a sentence
 * instead of the segmentation fault better-sqlite3 13 gives it. .ci/run runs the two commands with the
 * machine's Node (20 on this kind of machine) on PATH.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nodeSupported, SUPPORTED_NODE } from '../../server/src/lib/node-version.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const readJson = (f: string) => JSON.parse(readFileSync(join(root, f), 'utf8'));
const rootPkg = readJson('package.json') as { dependencies: Record<string, string>; engines?: unknown };
const pinned = rootPkg.dependencies.node!;

describe('the pinned Node', () => {
  it('is one exact Node 24 version, installed by npm ci as node_modules/.bin/node', () => {
    expect(pinned).toMatch(/^24\.\d+\.\d+$/);
    const bin = join(root, 'node_modules', '.bin', 'node');
    expect(existsSync(bin)).toBe(true);
    expect(execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()).toBe(`v${pinned}`);
  });

  it('runs npm scripts: `npm test` runs this file on it', () => {
    // Under npm (npm_lifecycle_event set) the tests must be on the pinned Node, whatever Node ran npm.
    if (process.env.npm_lifecycle_event === 'test') expect(process.versions.node).toBe(pinned);
    // And npm run puts node_modules/.bin ahead of the rest of PATH, so a script's `node` is the pinned one.
    const out = execFileSync('npm', ['exec', '--', 'node', '-p', 'process.versions.node'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(out.trim()).toBe(pinned);
  });

  it('satisfies the server\'s own "engines", which the root does not restate', () => {
    expect(readJson('server/package.json').engines).toEqual({ node: SUPPORTED_NODE });
    expect(rootPkg.engines).toBeUndefined(); // the install runs on any Node that runs npm
    expect(nodeSupported(pinned)).toBe(true);
  });
});

describe('the server on an unsupported Node', () => {
  it('knows which versions it supports', () => {
    for (const v of ['22.12.0', '22.23.5', '24.0.0', '24.21.0', '26.10.0']) expect(nodeSupported(v), v).toBe(true);
    for (const v of ['18.20.8', '20.20.2', '21.7.3', '22.11.0', '23.11.1']) expect(nodeSupported(v), v).toBe(false);
  });

  // A Node older than the server supports, on the PATH npm was started with (this machine's own Node is 20);
  // without one the check above is the whole test.
  const older = (process.env.PATH ?? '')
    .split(delimiter)
    .map((d) => join(d, 'node'))
    .find((f) => {
      if (!existsSync(f)) return false;
      const v = spawnSync(f, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout?.trim();
      return Boolean(v) && !nodeSupported(v);
    });

  it.skipIf(!older)('refuses to start with a sentence, not a crash (the compiled server and admin)', () => {
    for (const entry of ['main.mjs', 'admin.mjs']) {
      const r = spawnSync(older!, [join(root, 'dist', 'server', entry), 'verify'], {
        env: { PATH: process.env.PATH ?? '', DATA_DIR: mkdtempSync(join(tmpdir(), 'svcenv-oldnode-')), PORT: '0' },
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(r.status, `${entry}: ${r.stderr}`).toBe(1);
      expect(r.stderr).toContain('cannot run the server (it needs Node ^22.12.0 || >=24.0.0)');
      expect(r.stderr).toContain('npm start');
    }
  });
});
