import pino from 'pino';

/** How long an informational line may wait for company before it is written. */
const GATHER_MS = 25;

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
 * its authorization); warnings and errors are written at once, and everything is written at exit. A kill -9
 * may lose the last GATHER_MS of request lines, never a value (the log holds none).
 */
export function logSink(fd = 1): LogSink {
  // sonic-boom (pino's own destination) with a buffer: it retries partial and EAGAIN writes to a pipe.
  const out = pino.destination({ dest: fd, sync: false, minLength: 12 * 1024 });
  let timer: NodeJS.Timeout | undefined;
  let gathered = false;
  const flush = () => {
    timer = undefined;
    if (!gathered) return;
    gathered = false;
    out.flush();
  };
  process.on('exit', () => out.flushSync());
  return {
    write(line) {
      out.write(line);
      gathered = true;
      // pino starts each line with its numeric level: 10 trace, 20 debug, 30 info; 40 and above are urgent.
      if (!/^\{"level":[123]0,/.test(line)) flush();
      else timer ??= setTimeout(flush, GATHER_MS).unref();
    },
    flushSync() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      gathered = false;
      out.flushSync();
    },
  };
}
