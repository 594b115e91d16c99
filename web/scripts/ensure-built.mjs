#!/usr/bin/env node
/**
 * Builds the dashboard into web/dist when it is missing or older than its sources, and does nothing
 * otherwise (a few milliseconds). Run by the root `postinstall` (so `npm ci` leaves a built dashboard),
 * by `prestart` (so `npm start` after editing web/ serves the new build) and by the test global setup.
 * `--force` always builds.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newestMtime } from '../../scripts/newest-mtime.mjs';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(web, '..');
const output = join(web, 'dist', 'index.html');

export async function ensureBuilt({ force = false } = {}) {
  const sources = Math.max(
    ...[
      join(web, 'src'),
      join(web, 'public'),
      join(web, 'index.html'),
      join(web, 'vite.config.ts'),
      join(web, 'package.json'),
      join(root, 'contract', 'src'),
    ].map(newestMtime),
  );
  if (!force && existsSync(output) && statSync(output).mtimeMs >= sources) return false;
  let build;
  try {
    ({ build } = await import('vite'));
  } catch {
    // An install without dev dependencies (npm ci --omit=dev) has no Vite: keep whatever build there is and
    // let the server explain at / that the dashboard is not built, rather than failing the install or start.
    console.warn(
      'web: Vite is not installed, so the dashboard was not (re)built; run `npm run build:web` with dev dependencies',
    );
    return false;
  }
  const started = Date.now();
  await build({ configFile: join(web, 'vite.config.ts'), logLevel: 'warn' });
  console.log(`web: dashboard built into web/dist in ${Date.now() - started} ms`);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  ensureBuilt({ force: process.argv.includes('--force') }).catch((e) => {
    console.error('web: dashboard build failed:', e?.message ?? e);
    process.exit(1);
  });
}
