/** File writes that hold secrets. */
import { fs, path } from './builtins.js';
import { CliError } from './errors.js';

/**
 * Random hex for temporary names and delimiters, from Web Crypto: importing node:crypto costs several
 * milliseconds at start under Bun, on every command.
 */
export function randomHex(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex');
}

/**
 * Writes `data` to `path` with mode 0600: a new file created 0600 beside it, then renamed over the
 * target, so readers never see a half-written file and an existing file's looser mode is replaced.
 */
export function writeSecretFile(file: string, data: string | Uint8Array): void {
  const { chmodSync, renameSync, rmSync, writeFileSync } = fs();
  const { basename, dirname, join } = path();
  const tmp = join(dirname(file), `.${basename(file)}.${randomHex(6)}.tmp`);
  try {
    writeFileSync(tmp, data, { mode: 0o600, flag: 'wx' });
    chmodSync(tmp, 0o600);
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    // Named by the file the user gave, not by our temporary one beside it.
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new CliError(
      'FILE',
      `cannot write ${file} (${code})`,
      code === 'ENOENT' ? `create the directory ${dirname(file)} first` : undefined,
    );
  }
}

/**
 * D40: appends every variable to the GitHub Actions env file in the multi-line-safe form
 * `KEY<<DELIMITER\nvalue\nDELIMITER\n`, with a random delimiter that occurs in no value.
 */
export function appendGithubEnv(file: string, vars: ReadonlyMap<string, string>): void {
  let out = '';
  for (const [key, value] of vars) {
    let delimiter: string;
    do delimiter = `SVCENV_EOF_${randomHex(16)}`;
    while (value.includes(delimiter));
    out += `${key}<<${delimiter}\n${value}\n${delimiter}\n`;
  }
  fs().appendFileSync(file, out);
}

/**
 * A warning when `file` lies in a git work tree that does not ignore it: `git status` would list the
 * secrets file and `git add .` would commit it. Nothing when git ignores it, when it is outside a work tree,
 * or when git is not installed (`git check-ignore`: 0 ignored, 1 not ignored, 128 no repository).
 */
export function gitIgnoreWarning(file: string, cwd: string): string | undefined {
  const { basename, dirname, relative } = path();
  const dir = dirname(file);
  let status: number | null;
  try {
    const { spawnSync } = process.getBuiltinModule('node:child_process');
    ({ status } = spawnSync('git', ['check-ignore', '-q', '--', basename(file)], { cwd: dir, stdio: 'ignore' }));
  } catch {
    return undefined;
  }
  if (status !== 1) return undefined;
  const shell = (s: string) => (/^[\w./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);
  const where = relative(cwd, dir);
  const gitignore = where ? `${where}/.gitignore` : '.gitignore';
  const shown = relative(cwd, file);
  return (
    `warning: ${shown} is in a git work tree that does not ignore it (\`git status\` lists it, \`git add .\` would commit its values)\n` +
    `hint: ignore it: echo ${shell(basename(file))} >> ${shell(gitignore)}\n`
  );
}
