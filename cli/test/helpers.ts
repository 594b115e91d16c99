/** Runs the compiled svcenv as a user would: its own HOME, working directory and environment. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostBinary } from './global-setup.js';

export { hostBinary };

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function tempDir(prefix = 'svcenv-cli-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface Spawned {
  child: ChildProcess;
  /** Output so far. */
  out(): { stdout: string; stderr: string };
  done: Promise<CliRun>;
}

export function spawnCli(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; input?: string; binary?: string } = {},
): Spawned {
  const child = spawn(opts.binary ?? hostBinary, args, {
    cwd: opts.cwd,
    // A clean environment: nothing of the test runner's own SVCENV_* or GITHUB_* leaks in.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => {
    stdout += d;
  });
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  // A command that exits at once may close its stdin before this write lands: not a failure of the test.
  child.stdin!.on('error', () => {});
  child.stdin!.end(opts.input ?? '');
  const done = new Promise<CliRun>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, out: () => ({ stdout, stderr }), done };
}

export function runCli(args: string[], opts: Parameters<typeof spawnCli>[1] = {}): Promise<CliRun> {
  return spawnCli(args, opts).done;
}

export async function waitFor(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Single-quoted for sh, whatever it holds. */
const shq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

export interface InTerminal {
  /** Everything the terminal showed so far (stdout and stderr together, and whatever it echoed). */
  screen(): string;
  /** Types `text` (a key press per character, `\r` for Enter). */
  type(text: string): void;
  done: Promise<{ code: number | null; screen: string }>;
}

/**
 * The compiled svcenv with a terminal for its standard input, output and error: util-linux `script` runs it
 * in a pseudo-terminal and passes what the test types on to it (the terminal echoes it unless svcenv turns
 * echo off). Only the environment given reaches it, as with runCli.
 */
export function runInTerminal(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; binary?: string } = {},
): InTerminal {
  const line = [opts.binary ?? hostBinary, ...args].map(shq).join(' ');
  const child = spawn('script', ['-qec', line, '/dev/null'], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'dumb', ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  child.stdout!.on('data', (d) => {
    screen += d;
  });
  child.stderr!.on('data', (d) => {
    screen += d;
  });
  child.stdin!.on('error', () => {});
  const done = new Promise<{ code: number | null; screen: string }>((resolve) =>
    child.on('close', (code) => {
      resolve({ code, screen });
    }),
  );
  return { screen: () => screen, type: (text) => child.stdin!.write(text), done };
}

/**
 * SIGKILL of the CLI and of every process under it. SIGKILL of the CLI alone leaves its command running (it
 * cannot forward a signal it never sees), and a command that ignores SIGTERM would then outlive the suite.
 * Linux (/proc); elsewhere only the CLI itself.
 */
export function killTree(child: ChildProcess): void {
  const under = (pid: number): number[] => {
    let kids: number[] = [];
    try {
      for (const task of readdirSync(`/proc/${pid}/task`)) {
        const list = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
        if (list) kids = kids.concat(list.split(' ').map(Number));
      }
    } catch {
      // Gone already, or no /proc.
    }
    return kids.flatMap((k) => [k, ...under(k)]);
  };
  const all = child.pid === undefined ? [] : under(child.pid);
  child.kill('SIGKILL');
  for (const pid of all) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Ended meanwhile.
    }
  }
}
