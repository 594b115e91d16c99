/**
 * D43: watching an environment for changes, for `pull --watch` and `run --watch`. One long-poll at a time
 * (`wait=60` with the ETag last seen); a 200 is a change, a 304 means time is up (or the server drains).
 * While the server is away (unreachable, 5xx, 429, D42) the loop retries with backoff, 1 s doubling to
 * 30 s with jitter, and says so once per outage. Any other error (401, 403, 404, ...) ends the loop.
 */
import type { Api } from './api.js';
import { fs } from './builtins.js';
import type { EnvCache } from './cache.js';
import { type PullAnswer, type PullOptions, pullChange, unreachable } from './remote.js';

/** D43's longest hold. */
export const WAIT_SECONDS = 60;
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;

export interface Watch {
  api: Api;
  pull: PullOptions;
  /** The environment's cache (openCache), its keys derived once for every long-poll. */
  cache: EnvCache;
  /** The ETag of the body in use. */
  etag: string;
  signal: AbortSignal;
  /** Called with each new body, one at a time; the next poll waits for it. */
  onChange(answer: PullAnswer): Promise<void>;
  /** A line for the user (stderr); never holds a value. */
  note(line: string): void;
  /** What the note about an outage adds ("the command keeps running"). */
  whileAway?: string;
}

/** Resolves when `signal` aborts; rejects with the first error that is not the server being away. */
export async function watchChanges(w: Watch): Promise<void> {
  let etag = w.etag;
  let backoff = FIRST_BACKOFF_MS;
  let away = false;
  while (!w.signal.aborted) {
    const started = Date.now();
    let answer: PullAnswer | undefined;
    try {
      answer = await pullChange(w.api, w.pull, w.cache, etag, WAIT_SECONDS, w.signal);
    } catch (err) {
      if (w.signal.aborted) return;
      const cause = unreachable(err);
      if (cause === undefined) throw err;
      if (!away) w.note(`svcenv: ${cause}; retrying with backoff${w.whileAway ? ` (${w.whileAway})` : ''}`);
      away = true;
      await sleep(jitter(backoff), w.signal);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      continue;
    }
    if (away) w.note('svcenv: the server answers again; watching for changes');
    away = false;
    if (answer === undefined) {
      // A 304 long before `wait` is up: a draining server, or one holding as many pulls as it will. Not a
      // reason to ask again at once.
      if (Date.now() - started < (WAIT_SECONDS * 1000) / 2) {
        await sleep(jitter(backoff), w.signal);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      } else backoff = FIRST_BACKOFF_MS;
      continue;
    }
    backoff = FIRST_BACKOFF_MS;
    if (answer.etag === etag) continue;
    etag = answer.etag ?? '';
    await w.onChange(answer);
  }
}

/** ±20%, so that many clients cut off together do not come back together. */
const jitter = (ms: number) => Math.round(ms * (0.8 + Math.random() * 0.4));

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

/** Writes a line to fd 2 at once (a long-running command cannot leave its notes to main.ts). */
export function noteTo(stderr: NodeJS.WritableStream, fd: number | undefined): (line: string) => void {
  return (line) => {
    const text = `${line}\n`;
    if (fd !== undefined) {
      try {
        fs().writeSync(fd, text);
        return;
      } catch {
        // non-blocking or closed: the stream below
      }
    }
    stderr.write(text);
  };
}
