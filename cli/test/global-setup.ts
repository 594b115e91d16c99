/**
 * Vitest globalSetup: the end-to-end tests run the compiled executable, so build it for this machine
 * when it is missing or older than the sources (CI runs `npm ci && npm test` on a clean clone). Only
 * the host target, to keep `npm test` fast; `npm run build:cli` builds all four.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build, hostTarget } from '../build.js';

const repoRoot = join(import.meta.dirname, '..', '..');
export const hostBinary = join(repoRoot, 'dist', 'cli', `svcenv-${hostTarget}`);

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

export default function setup(): void {
  const sources = Math.max(newestSource(join(repoRoot, 'cli', 'src')), newestSource(join(repoRoot, 'contract', 'src')));
  if (existsSync(hostBinary) && statSync(hostBinary).mtimeMs >= sources) return;
  build({ targets: [hostTarget] });
}
