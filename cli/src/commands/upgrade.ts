import { Api } from '../api.js';
import { fs, path } from '../builtins.js';
import type { Command } from '../command.js';
import { resolveSettings } from '../config.js';
import { CliError } from '../errors.js';
import { randomHex } from '../files.js';
import { isCompiled } from '../platform.js';

export const upgradeCommand: Command = {
  name: 'upgrade',
  summary: 'Install the latest svcenv from the API server, or only check with --check',
  usage: 'svcenv upgrade [--check] [--api-url <url>]',
  flags: {
    check: { type: 'boolean', description: 'only report whether a newer version exists' },
    'api-url': {
      type: 'string',
      description:
        'API server to upgrade from (default: $SVCENV_API_URL, then the config file, then http://127.0.0.1:8080)',
    },
  },
  details:
    'Reads the release manifest of the configured API server (GET /v1/cli/latest), downloads the binary\n' +
    'for this machine, verifies its SHA-256 and that it runs, then atomically replaces this executable.',
  async run(args, ctx) {
    const settings = resolveSettings({ apiUrl: args.flags['api-url'] }, ctx.env, ctx.cwd);
    const api = new Api(settings.apiUrl, undefined);
    const { operations: ops } = await import('../schemas.js');
    const manifest = await api.json(ops.cliLatest);
    if (compareVersions(manifest.version, ctx.version) <= 0) {
      return { stdout: `svcenv ${ctx.version} is up to date\n` };
    }
    if (args.flags.check) return { stdout: `svcenv ${manifest.version} is available (installed: ${ctx.version})\n` };

    const os = process.platform;
    const arch = process.arch;
    const asset = manifest.assets.find((a) => a.os === os && a.arch === arch);
    if (!asset) throw new CliError('NOT_FOUND', `the server has no svcenv ${manifest.version} for ${os}-${arch}`);
    if (!isCompiled()) {
      throw new CliError('UPGRADE', 'upgrade replaces the compiled svcenv executable; this is running from source');
    }
    const { chmodSync, realpathSync, renameSync, rmSync, statSync } = fs();
    const { basename, dirname, join } = path();
    const self = realpathSync(process.execPath);
    const tmp = join(dirname(self), `.${basename(self)}.${randomHex(6)}.new`);
    try {
      await download(api, asset.url, asset.sha256, tmp);
      chmodSync(tmp, statSync(self).mode & 0o777);
      // A binary that cannot start here (wrong libc, truncated) must not replace a working one.
      // node:child_process is loaded here, not at start-up: importing it costs every command ~1 ms under Bun.
      const { spawnSync } = await import('node:child_process');
      const probe = spawnSync(tmp, ['version'], { encoding: 'utf8', timeout: 30_000 });
      if (probe.status !== 0 || !probe.stdout.includes(manifest.version)) {
        throw new CliError('UPGRADE', `the downloaded svcenv ${manifest.version} does not run on this machine`);
      }
      renameSync(tmp, self);
    } catch (err) {
      rmSync(tmp, { force: true });
      if ((err as NodeJS.ErrnoException).code === 'EACCES') {
        throw new CliError('UPGRADE', `no permission to replace ${self}`, 'run the upgrade as the owner of that file');
      }
      throw err;
    }
    return { stdout: `upgraded svcenv ${ctx.version} -> ${manifest.version} (${self})\n` };
  },
};

async function download(api: Api, url: string, sha256: string, dest: string): Promise<void> {
  // The manifest's url is a path under the API; an absolute URL is checked like the API URL (D4).
  const target = new URL(url, `${api.baseUrl}/`);
  const res = await new Api(target.origin, undefined).fetchPath(target.pathname + target.search, { auth: false });
  if (!res.body) throw new CliError('UPGRADE', 'empty download');
  // Imported here: node:crypto costs milliseconds at start under Bun, and only upgrade needs it.
  const { createHash } = await import('node:crypto');
  const hash = createHash('sha256');
  const { closeSync, fsyncSync, openSync, writeSync } = fs();
  const fd = openSync(dest, 'wx', 0o700);
  try {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      writeSync(fd, chunk);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (hash.digest('hex') !== sha256) {
    throw new CliError('UPGRADE', 'the download does not match the SHA-256 of the release manifest', 'try again');
  }
}

/** Compares dotted numeric versions; a pre-release (`1.0.0-rc.1`) sorts before its release. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [core = '', pre] = v.replace(/^v/, '').split('-', 2);
    return { nums: core.split('.').map((n) => Number.parseInt(n, 10) || 0), pre };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < Math.max(x.nums.length, y.nums.length); i++) {
    const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  if (x.pre === y.pre) return 0;
  if (x.pre === undefined) return 1;
  if (y.pre === undefined) return -1;
  return x.pre < y.pre ? -1 : 1;
}
