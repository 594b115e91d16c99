/**
 * Talking to the person at the terminal: whether there is one, a yes/no question, and a token typed or pasted
 * without echo (`--token -`). Loaded only by the commands that ask (node:tty and process.stdin cost a cold
 * start under Bun, ADR 0001-cli). Prompts go to stderr, so stdout stays the command's data.
 */
import { fs } from './builtins.js';
import { CliError } from './errors.js';

async function isatty(fd: number): Promise<boolean> {
  const tty = await import('node:tty');
  return tty.isatty(fd);
}

/**
 * Someone can answer: standard input and standard error are both a terminal (the question is on stderr, the
 * answer on stdin). Not in CI, not under `| svcenv ...` nor with stderr sent to a file (ADR 0028).
 */
export async function canAsk(): Promise<boolean> {
  return (await isatty(0)) && (await isatty(2));
}

/** Standard output is a terminal: a person reads it (`diff`'s legend), not a script. */
export function stdoutIsTerminal(): Promise<boolean> {
  return isatty(1);
}

function say(text: string): void {
  try {
    fs().writeSync(2, text);
  } catch {
    // stderr closed: the question cannot be seen, and the answer decides nothing worse than "no"
  }
}

/**
 * Reads standard input as UTF-8 until `done` says the text so far is complete (returning what to keep), or
 * until its end. `raw`: the terminal passes every key at once and echoes nothing (a token being pasted).
 */
function readInput(done: (text: string) => string | undefined, raw = false): Promise<string> {
  const stdin = process.stdin as NodeJS.ReadStream;
  return new Promise((resolve, reject) => {
    let text = '';
    const finish = (value: string | Error) => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.off('error', onError);
      if (raw) stdin.setRawMode(false);
      stdin.pause();
      if (value instanceof Error) reject(value);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      text += chunk;
      const kept = done(text);
      if (kept !== undefined) finish(kept);
    };
    const onEnd = () => finish(done(`${text}\n`) ?? text);
    const onError = (err: Error) => finish(err);
    if (raw) stdin.setRawMode(true);
    stdin.setEncoding('utf8');
    stdin.on('data', onData);
    stdin.on('end', onEnd);
    stdin.on('error', onError);
    stdin.resume();
  });
}

/** Asks a yes/no question on the terminal; only `y` or `yes` is a yes. */
export async function confirm(question: string): Promise<boolean> {
  say(`${question} [y/N] `);
  const answer = await readInput((t) => {
    const nl = t.indexOf('\n');
    return nl < 0 ? undefined : t.slice(0, nl);
  });
  return /^\s*y(es)?\s*$/i.test(answer);
}

/**
 * `--token -`: the token from standard input, trimmed. On a terminal it is asked for on stderr and read with
 * echo off (raw mode: Enter ends it, Backspace removes a character, Ctrl-C stops svcenv), so it is never on
 * the screen, in a scrollback or a screen recording; from a pipe or a file it is the whole input.
 */
export async function readToken(): Promise<string> {
  if (!(await isatty(0))) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8').trim();
  }
  say('access token (not shown): ');
  let interrupted = false;
  const typed = await readInput((t) => {
    if (t.includes('\u0003')) {
      interrupted = true;
      return '';
    }
    // Enter (CR in raw mode, LF from a pipe-like terminal) or Ctrl-D ends it.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: Ctrl-D is exactly what ends the input
    const end = t.search(/[\r\n\u0004]/);
    return end < 0 ? undefined : t.slice(0, end);
  }, true);
  say('\n');
  if (interrupted) throw new CliError('USAGE', 'interrupted: no token read');
  // Backspace (DEL or ^H) removes the character before it, as the terminal's own line editing would have.
  let token = '';
  for (const c of typed) {
    if (c === '\u007f' || c === '\b') token = token.slice(0, -1);
    else token += c;
  }
  return token.trim();
}
