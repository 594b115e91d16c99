/**
 * `run`'s child plumbing on Node (the path `tsx cli/src/main.ts run` takes; the compiled executable's
 * Bun path is covered by e2e.test.ts): real children, real pipes, destinations that are plain streams
 * (so output goes through the stream path with backpressure, not blocking fd writes).
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { execScrubbed, skipBytes } from '../src/commands/run.js';
import { CliError } from '../src/errors.js';
import { ScrubAutomaton } from '../src/scrub.js';

const SECRET = 'pw-0123456789abcdef';

/** A destination that takes `delayMs` per write (and a small buffer), so the child must be paused. */
function collector(delayMs = 0) {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _enc, done) {
      chunks.push(Buffer.from(chunk));
      if (delayMs) setTimeout(done, delayMs);
      else done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString() };
}

async function exec(script: string, opts: { delayMs?: number; secrets?: string[] } = {}) {
  const out = collector(opts.delayMs);
  const err = collector();
  const status = await execScrubbed(
    ['sh', '-c', script],
    { PATH: process.env.PATH ?? '/usr/bin:/bin', SECRET },
    new ScrubAutomaton(opts.secrets ?? [SECRET]),
    { stdout: out.stream, stderr: err.stream },
  );
  return { status, stdout: out.text(), stderr: err.text() };
}

describe('execScrubbed (Node)', () => {
  it('scrubs stdout and stderr separately, also a value split across writes 10 ms apart', async () => {
    const script = `printf 'a=pw-01234'; sleep 0.01; printf '56789abcdef!\\n'; echo "e=$SECRET" >&2; echo short-pw-`;
    const r = await exec(script);
    expect(r).toEqual({ status: 0, stdout: 'a=***!\nshort-pw-\n', stderr: 'e=***\n' });
  });

  it('passes exit codes through, and 128+n for a child killed by signal n', async () => {
    expect((await exec('exit 42')).status).toBe(42);
    expect((await exec('kill -TERM $$')).status).toBe(128 + 15);
  });

  it('copies large output through a slow destination completely (backpressure)', async () => {
    // 500 KB of long lines, each ending with the secret.
    const script = `awk 'BEGIN { x = sprintf("%1000s", ""); gsub(/ /, "x", x); for (i = 0; i < 500; i++) print x, ENVIRON["SECRET"] }'`;
    const r = await exec(script, { delayMs: 1 });
    const line = `${'x'.repeat(1000)} ***\n`;
    expect(r.status).toBe(0);
    expect(r.stdout.length).toBe(line.length * 500);
    expect(r.stdout === line.repeat(500)).toBe(true);
  });

  it('reports a command that cannot start, before anything runs', async () => {
    const run = execScrubbed(['svcenv-no-such-command'], { PATH: '/nonexistent' }, new ScrubAutomaton([]), {
      stdout: collector().stream,
      stderr: collector().stream,
    });
    await expect(run).rejects.toBeInstanceOf(CliError);
    await expect(run).rejects.toMatchObject({ code: 'EXEC', hint: 'is it on PATH?' });
  });

  it('resumes after a partial writev at the right byte', () => {
    const parts = ['abc', '', '***', 'defgh'].map((p) => Buffer.from(p));
    const rest = (n: number) => Buffer.concat(skipBytes(parts, n)).toString();
    expect([0, 1, 3, 4, 6, 7, 10, 11].map(rest)).toEqual([
      'abc***defgh',
      'bc***defgh',
      '***defgh',
      '**defgh',
      'defgh',
      'efgh',
      'h',
      '',
    ]);
  });
});
