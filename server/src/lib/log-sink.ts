import pino from 'pino';

/** How long an informational line may wait for company before it is written. */
const GATHER_MS = 25;
/** Characters gathered before they are written without waiting for GATHER_MS. */
const MAX_GATHERED = 64 * 1024;

/** What pino writes to: one line (JSON and a newline) per call. */
export interface LogSink {
  write(line: string): void;
  /** Writes what is gathered before the process exits. */
  flushSync(): void;
}

/**
 * The server's standard output for its log (ADR 0007): informational lines (pino levels below warn, one
 * per request) are gathered for up to GATHER_MS and written together, so a busy server makes one write
 * system call per few hundred requests rather than one per request (a pull's log line cost more CPU than
 * its authorization); warnings and errors are written at once, after the lines gathered before them, and
 * everything is written at exit. A kill -9 may lose the last GATHER_MS of request lines, never a value (the
 * log holds none).
 *
 * The lines are gathered here, in an array, and handed to sonic-boom together: its own `write` measures the
 * byte length of everything it holds on every call (a flattened string of up to 16 KB, ~5 µs a line, an
 * eighth of the server's cost for a constant route). Each hand-over is a synchronous write (pino's default
 * for stdout), one per GATHER_MS at most: so what `flushSync` hands over at exit is written before the process
 * ends, and in order, rather than left to an asynchronous write that an exiting process does not wait for.
 */
export function logSink(fd = 1): LogSink {
  // sonic-boom (pino's own destination): it retries partial and EAGAIN writes to a pipe.
  const out = pino.destination({ dest: fd, sync: true });
  let timer: NodeJS.Timeout | undefined;
  let lines: string[] = [];
  let size = 0;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (lines.length === 0) return;
    const text = lines.join('');
    lines = [];
    size = 0;
    out.write(text);
  };
  process.on('exit', flush);
  return {
    write(line) {
      lines.push(line);
      size += line.length;
      // pino starts each line with its numeric level: 10 trace, 20 debug, 30 info; 40 and above are urgent.
      if (!/^\{"level":[123]0,/.test(line) || size >= MAX_GATHERED) flush();
      else timer ??= setTimeout(flush, GATHER_MS).unref();
    },
    flushSync: flush,
  };
}
