#!/usr/bin/env node
/**
 * Compiles the server into dist/server (main.mjs, admin.mjs and the audit writer worker) when that is
 * missing or older than what it is built from, and does nothing otherwise (a few milliseconds). `npm start`
 * and `npm run admin` run these files with plain Node: no TypeScript compiler and no resolution of hundreds
 * of package files at start-up, so the server answers sooner and holds less memory (bench/startup.bench.ts).
 * Run by the root `postinstall` (so `npm ci` leaves a built server, as it leaves a built dashboard), and by
 * `prestart`/`preadmin` (so a start after editing server/ or contract/, or after an install that changed
 * node_modules, runs the new code); `--force` always builds. The tests run the sources (server/test/harness.ts).
 *
 * One ES module per entry point, bundled by esbuild (already installed with tsx) with its dependencies,
 * except the packages with native addons, which stay imports resolved from node_modules at run time.
 * Whitespace and syntax are minified, names are kept: the parse is a third shorter and the idle heap ~15 MB
 * smaller than unminified, and a stack trace still names functions (`node --enable-source-maps` maps it to
 * the sources through the .map file, at ~40 MB of memory, so it is not the default).
 * dist/server sits two levels under the repository root, like server/src, so the paths the server derives
 * from its own location (web/dist, dist/cli, cli/package.json, the worker beside it) hold for both.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newestMtime } from '../../scripts/newest-mtime.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const server = join(here, '..');
const root = join(server, '..');
export const outDir = join(root, 'dist', 'server');
/** Entry points: output name under dist/server → source under server/src. */
const entries = { main: 'main.ts', admin: 'admin.ts' };
/** Loaded by path at run time (`new URL('./audit-writer.worker.mjs', import.meta.url)`), so copied beside. */
const worker = join('db', 'audit-writer.worker.mjs');
/** Packages with native addons (.node files found through their own package layout): never bundled. */
export const NATIVE = ['better-sqlite3', '@node-rs/argon2', '@node-rs/bcrypt'];
/**
 * Bundled files that name `__dirname`/`__filename`, which an ES module does not define: each use must be
 * one the server never reaches, or reaches inside a try that tolerates the ReferenceError. Any other file
 * fails the build, so a new dependency that finds its own files by path is noticed here, not in production.
 */
const DIRNAME_ALLOWED = {
  // readPackageJson() in a try, for the default OpenAPI `info`, which http/openapi.ts always sets.
  '@fastify/swagger/lib/util/read-package-json.js': 'caught; info is set by http/openapi.ts',
  // getPackageMeta() in a try (the library version sent with CLIENT SETINFO); Command's friendly stacks only
  // with showFriendlyErrorStack, which lib/rate-limit.ts does not set.
  'ioredis/built/utils/index.js': 'caught',
  'ioredis/built/Command.js': 'showFriendlyErrorStack only',
  // Worker files of pino transports; the server logs to a stream, never through a transport.
  'pino/lib/transport.js': 'transports only',
  'pino/lib/worker.js': 'transports only',
  'thread-stream/index.js': 'transports only',
};
/** What the build reads: a change to any of them makes the build stale. */
const inputs = [
  join(server, 'src'),
  join(server, 'package.json'),
  join(root, 'contract', 'src'),
  join(root, 'contract', 'package.json'),
  join(root, 'package-lock.json'),
  join(root, 'node_modules', '.package-lock.json'), // rewritten by every install that changes node_modules
  fileURLToPath(import.meta.url),
];
const outputs = () => [
  ...Object.keys(entries).map((n) => join(outDir, `${n}.mjs`)),
  join(outDir, 'audit-writer.worker.mjs'),
];

/** True when every output exists and none is older than the newest input. */
export function isFresh() {
  const sources = Math.max(...inputs.map(newestMtime));
  return outputs().every((f) => existsSync(f) && statSync(f).mtimeMs >= sources);
}

/** The native packages stay external; every bundled node_modules file is checked for __dirname. */
function plugin(dirnameUsers) {
  return {
    name: 'svcenv-server',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) =>
        NATIVE.some((p) => args.path === p || args.path.startsWith(`${p}/`))
          ? { path: args.path, external: true }
          : undefined,
      );
      b.onLoad({ filter: /[\\/]node_modules[\\/].*\.c?js$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        if (/\b__(dirname|filename)\b/.test(text)) {
          const rel = args.path.split(`${sep}node_modules${sep}`).pop().split(sep).join('/');
          if (!(rel in DIRNAME_ALLOWED)) dirnameUsers.add(relative(root, args.path));
        }
        return { contents: text, loader: 'js' };
      });
    },
  };
}

export async function buildServer({ force = false } = {}) {
  if (!force && isFresh()) return false;
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    // esbuild comes with tsx, a dependency of the server, so only a broken install lacks it: keep whatever
    // build there is, and say so.
    console.warn('server: esbuild is not installed, so dist/server was not (re)built');
    return false;
  }
  const started = Date.now();
  const dirnameUsers = new Set();
  // Built into a directory of its own, then each file renamed over its old version (atomic per file), so a
  // server starting meanwhile, or a second build running at once (two test files), never reads a half-written
  // file, and nothing is ever missing.
  const tmp = `${outDir}.tmp-${process.pid}-${started}`;
  mkdirSync(tmp, { recursive: true });
  try {
    await esbuild.build({
      entryPoints: Object.fromEntries(Object.entries(entries).map(([n, src]) => [n, join(server, 'src', src)])),
      outdir: tmp,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      // The oldest Node the server supports (package.json "engines").
      target: 'node22.12',
      // The bundled CommonJS packages call require() for Node's own modules (and pg for its optional
      // pg-native, inside a try): give the module one.
      banner: {
        js: "import { createRequire as __svcenvRequire } from 'node:module'; const require = __svcenvRequire(import.meta.url);",
      },
      minifyWhitespace: true,
      minifySyntax: true,
      sourcemap: 'linked',
      legalComments: 'none',
      logLevel: 'error',
      plugins: [plugin(dirnameUsers)],
    });
    if (dirnameUsers.size > 0) {
      throw new Error(
        `bundled files use __dirname/__filename, undefined in the bundle: ${[...dirnameUsers].join(', ')}; ` +
          'add the package to NATIVE (kept in node_modules) or, if that code is never reached, to DIRNAME_ALLOWED',
      );
    }
    copyFileSync(join(server, 'src', worker), join(tmp, 'audit-writer.worker.mjs'));
    mkdirSync(outDir, { recursive: true });
    // Dated at the start: a source saved while this build ran is newer, so the next check builds again.
    const at = new Date(started);
    for (const f of readdirSync(tmp)) {
      utimesSync(join(tmp, f), at, at);
      renameSync(join(tmp, f), join(outDir, f));
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  // stderr: `npm run admin -- reset-link ...` prints its answer on stdout.
  console.error(`server: compiled into dist/server in ${Date.now() - started} ms`);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildServer({ force: process.argv.includes('--force') }).catch((e) => {
    console.error('server: build failed:', e?.message ?? e);
    process.exit(1);
  });
}
