#!/usr/bin/env node
/**
 * The svcenv executable. The only place that prints results and errors and calls process.exit
 * (engineering guide #12; D37a: 0 on success, 1 on any error, API errors printed with their code).
 */
import { dispatch } from './cli.js';
import { CliError } from './errors.js';
import { VERSION } from './platform.js';

function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (!text) return resolve();
    stream.write(text, () => resolve());
  });
}

function describe(err: unknown): string {
  if (err instanceof CliError) {
    const prefix = err.code === 'USAGE' || err.code === 'CONFIG' || err.code === 'FILE' ? 'error' : err.code;
    return `${prefix}: ${err.message}\n${err.hint ? `hint: ${err.hint}\n` : ''}`;
  }
  // Unexpected: the message only, never a stack with arguments (which may hold values).
  return `error: ${err instanceof Error ? err.message : String(err)}\n`;
}

async function main(): Promise<number> {
  const ctx = {
    env: process.env,
    cwd: process.cwd(),
    version: VERSION,
    stdout: process.stdout,
    stderr: process.stderr,
  };
  try {
    const result = await dispatch(process.argv.slice(2), ctx);
    await write(process.stderr, result.stderr ?? '');
    await write(process.stdout, result.stdout ?? '');
    return result.exitCode ?? 0;
  } catch (err) {
    await write(process.stderr, describe(err));
    return 1;
  }
}

main().then((code) => process.exit(code));
