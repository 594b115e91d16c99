import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logSink } from '../src/lib/log-sink.js';

/** lib/log-sink.ts on a real file descriptor: what reaches the file, in which order, and when. */
describe('the log sink', () => {
  const file = () => join(mkdtempSync(join(tmpdir(), 'svcenv-log-')), 'out.log');
  const line = (level: number, msg: string) => `{"level":${level},"time":1,"msg":"${msg}"}\n`;
  const until = async (ok: () => boolean) => {
    for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  };

  it('gathers informational lines, then writes them together within a moment, in order', async () => {
    const path = file();
    const fd = openSync(path, 'w');
    const sink = logSink(fd);
    for (let i = 0; i < 50; i++) sink.write(line(30, `info ${i}`));
    // Not yet written: gathered for up to 25 ms.
    expect(readFileSync(path, 'utf8')).toBe('');
    await until(() => readFileSync(path, 'utf8').split('\n').length > 50);
    const written = readFileSync(path, 'utf8').trim().split('\n');
    expect(written).toEqual(Array.from({ length: 50 }, (_, i) => line(30, `info ${i}`).trim()));
    sink.flushSync();
    closeSync(fd);
  });

  it('writes a warning at once, after the lines gathered before it; flushSync writes everything', async () => {
    const path = file();
    const fd = openSync(path, 'w');
    const sink = logSink(fd);
    sink.write(line(30, 'before'));
    sink.write(line(40, 'warning'));
    await until(() => readFileSync(path, 'utf8').includes('warning'));
    expect(readFileSync(path, 'utf8')).toBe(line(30, 'before') + line(40, 'warning'));
    sink.write(line(30, 'last'));
    sink.flushSync();
    expect(readFileSync(path, 'utf8')).toBe(line(30, 'before') + line(40, 'warning') + line(30, 'last'));
    closeSync(fd);
  });

  it('writes without waiting once 64 KB are gathered', async () => {
    const path = file();
    const fd = openSync(path, 'w');
    const sink = logSink(fd);
    const long = line(30, 'x'.repeat(1000));
    for (let i = 0; i < 70; i++) sink.write(long);
    // The timer is 25 ms; the size bound writes well before it.
    await until(() => readFileSync(path, 'utf8').length >= 64 * 1024);
    expect(readFileSync(path, 'utf8').length).toBeGreaterThanOrEqual(64 * 1024);
    sink.flushSync();
    expect(readFileSync(path, 'utf8')).toBe(long.repeat(70));
    closeSync(fd);
  });
});
