/**
 * Builds the single executables (D41) with `bun build --compile`:
 *   tsx cli/build.ts [--targets linux-x64,darwin-arm64] [--version 1.2.3] [--outdir dist/cli]
 *
 * Bun compiles for another platform by appending the bundle to that platform's Bun runtime. Left to
 * itself it downloads the runtime from the npm registry (@oven/bun-<os>-<arch>) into ~/.bun; here the
 * runtime is fetched with `npm pack` instead, so npm's own registry settings, proxy, CA file and
 * integrity check apply, and handed to bun with --compile-executable-path. The host's own runtime is the
 * one `npm ci` installed (the optional dependency of the `bun` package). ADR 0001-cli.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..');
const require = createRequire(import.meta.url);

export const ALL_TARGETS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64'] as const;
export type Target = (typeof ALL_TARGETS)[number];
export const hostTarget = `${process.platform}-${process.arch}` as Target;

/** Bun's runtime packages spell arm64 as aarch64. */
const runtimePackage = (t: string) => `@oven/bun-${t.replace('arm64', 'aarch64')}`;

function bunVersion(): string {
  return JSON.parse(readFileSync(require.resolve('bun/package.json'), 'utf8')).version;
}

/**
 * The Bun binary that runs the build: the host runtime installed by npm. It sits in the platform package,
 * unless the `bun` package's postinstall ran and moved it to bun/bin/bun.exe.
 */
export function hostBun(): string {
  const candidates = [
    join(dirname(require.resolve(`${runtimePackage(hostTarget)}/package.json`)), 'bin', 'bun'),
    join(dirname(require.resolve('bun/package.json')), 'bin', 'bun.exe'),
  ];
  const path = candidates.find((p) => existsSync(p) && statSync(p).size > 1_000_000);
  if (!path)
    throw new Error(
      `no Bun runtime at ${candidates.join(' or ')}: run npm ci (optional dependencies must not be omitted)`,
    );
  return path;
}

/** The runtime for a cross target, fetched once with `npm pack` and cached under node_modules/.cache. */
function crossRuntime(target: Target): string {
  const version = bunVersion();
  const cache = join(repoRoot, 'node_modules', '.cache', 'svcenv-bun-runtimes', `${target}-${version}`);
  const bin = join(cache, 'package', 'bin', 'bun');
  if (existsSync(bin)) return bin;
  mkdirSync(cache, { recursive: true });
  const out = execFileSync(
    'npm',
    ['pack', `${runtimePackage(target)}@${version}`, '--pack-destination', cache, '--json'],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const tgz = join(cache, JSON.parse(out)[0].filename as string);
  execFileSync('tar', ['-xzf', tgz, '-C', cache, 'package/bin/bun']);
  rmSync(tgz);
  return bin;
}

export function build(opts: { targets?: readonly Target[]; version?: string; outdir?: string } = {}): string[] {
  const targets = opts.targets ?? ALL_TARGETS;
  const version = opts.version ?? JSON.parse(readFileSync(join(here, 'package.json'), 'utf8')).version;
  const outdir = resolve(opts.outdir ?? join(repoRoot, 'dist', 'cli'));
  mkdirSync(outdir, { recursive: true });
  const bun = hostBun();
  const written: string[] = [];
  for (const target of targets) {
    const outfile = join(outdir, `svcenv-${target}`);
    const tmp = `${outfile}.tmp`;
    const args = [
      'build',
      join(here, 'src', 'main.ts'),
      '--compile',
      `--target=bun-${target}`,
      '--minify',
      // Code split: the zod schemas and the commands that need them are separate chunks inside the
      // executable, loaded only by the commands that import them. Merely carrying them in the entry
      // chunk cost every start (`version`, `run`) ~1.5-2 ms of loading (bench/cli.bench.ts).
      '--format=esm',
      '--splitting',
      // Precompiled bytecode: the executable skips parsing its bundle at start (cold start ~3x faster).
      '--bytecode',
      // A compiled svcenv must not read .env or bunfig.toml from the working directory on its own:
      // a .env there holds secrets (and could set SVCENV_TOKEN behind the user's back).
      '--no-compile-autoload-dotenv',
      '--no-compile-autoload-bunfig',
      `--define=SVCENV_BUILD_VERSION=${JSON.stringify(version)}`,
      `--outfile=${tmp}`,
    ];
    if (target !== hostTarget) args.push(`--compile-executable-path=${crossRuntime(target)}`);
    execFileSync(bun, args, { stdio: ['ignore', 'ignore', 'inherit'], cwd: repoRoot });
    // Renamed into place so a server serving dist/cli never hands out a half-written file.
    renameSync(tmp, outfile);
    written.push(outfile);
  }
  return written;
}

function cliArgs(argv: string[]): { targets?: Target[]; version?: string; outdir?: string } {
  const opts: { targets?: Target[]; version?: string; outdir?: string } = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--targets') {
      const list = value.split(',').map((t) => (t === 'host' ? hostTarget : t));
      for (const t of list) if (!ALL_TARGETS.includes(t as Target)) throw new Error(`unknown target ${t}`);
      opts.targets = list as Target[];
    } else if (flag === '--version') opts.version = value;
    else if (flag === '--outdir') opts.outdir = value;
    else throw new Error(`unknown flag ${flag}`);
    i++;
  }
  return opts;
}

/**
 * What `npm run build:cli` ends with: the executables written, which one is this machine's, and how to put it
 * on PATH (ADR 0028). Nothing else says where they are.
 */
export function installNote(written: readonly string[]): string {
  const lines = [
    '',
    `built ${written.length} svcenv executable${written.length === 1 ? '' : 's'}:`,
    ...written.map((f) => `  ${f}`),
  ];
  const mine = written.find((f) => f.endsWith(`svcenv-${hostTarget}`));
  if (mine) {
    lines.push(
      '',
      `this machine's (${hostTarget}): ${mine}`,
      'install it on your PATH (~/.local/bin must be on PATH; or sudo install ... /usr/local/bin/svcenv):',
      `  mkdir -p ~/.local/bin && install -m 0755 ${mine} ~/.local/bin/svcenv`,
      'then: svcenv version',
    );
  } else {
    lines.push('', `none of them is for this machine (${hostTarget}); copy the one for the target machine there`);
  }
  lines.push('the API server serves them too: GET /v1/cli/download/<linux|darwin>/<x64|arm64> (see README.md)');
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const written = build(cliArgs(process.argv.slice(2)));
  process.stdout.write(installNote(written));
}
