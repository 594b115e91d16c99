#!/usr/bin/env node
/**
 * The svcenv executable. The only place that prints results and errors and calls process.exit
 * (guide convention 12; D37a: 0 on success, 1 on any error, API errors printed with their code).
 */
import { fs } from './builtins.js';
import { dispatch } from './cli.js';
import type { Context } from './command.js';
import { CliError } from './errors.js';
import { VERSION } from './platform.js';

/**
 * Writes to fd 1 or 2 with blocking write(2) calls: process.stdout and process.stderr are created
 * only if the descriptor is non-blocking (EAGAIN), since creating them costs milliseconds of start-up
 * under Bun. Other errors (a closed pipe) drop the text, as a failed stream write did.
 */
function write(fd: 1 | 2, text: string): Promise<void> {
  if (!text) return Promise.resolve();
  const buf = Buffer.from(text);
  let off = 0;
  try {
    const { writeSync } = fs();
    while (off < buf.length) off += writeSync(fd, buf, off);
    return Promise.resolve();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return Promise.resolve();
    const stream = fd === 1 ? process.stdout : process.stderr;
    return new Promise((resolve) => stream.write(buf.subarray(off), () => resolve()));
  }
}

/** The CLI's own refusals, printed as `error:`; every other code is the API's (D37a) or names a failure kind. */
const LOCAL_CODES = new Set(['USAGE', 'CONFIG', 'FILE', 'CONFIRM']);

function describe(err: unknown): string {
  if (err instanceof CliError) {
    const prefix = LOCAL_CODES.has(err.code) ? 'error' : err.code;
    return `${prefix}: ${err.message}\n${err.hint ? `hint: ${err.hint}\n` : ''}`;
  }
  // Unexpected: the message only, never a stack with arguments (which may hold values).
  return `error: ${err instanceof Error ? err.message : String(err)}\n`;
}

async function main(): Promise<number> {
  const ctx: Context = {
    env: process.env,
    cwd: process.cwd(),
    version: VERSION,
    get stdout() {
      return process.stdout;
    },
    get stderr() {
      return process.stderr;
    },
    stdoutFd: 1,
    stderrFd: 2,
  };
  try {
    const result = await dispatch(process.argv.slice(2), ctx);
    await write(2, result.stderr ?? '');
    await write(1, result.stdout ?? '');
    return result.exitCode ?? 0;
  } catch (err) {
    await write(2, describe(err));
    return 1;
  }
}

main().then((code) => process.exit(code));
