/**
 * D30 dotenv reader, the inverse of `renderDotenv` (dotenv.ts): everything the server writes reads back
 * unchanged. It also reads the common hand-written forms: `export KEY=...`, single-quoted literals,
 * double-quoted values spanning lines, blank lines, `#` comment lines and ` #` inline comments after a
 * value, and CRLF line ends. A later duplicate key wins, as in shells.
 *
 * Errors name the line, never the value: a .env file is full of secrets.
 */
export class DotenvParseError extends Error {
  constructor(
    readonly line: number,
    reason: string,
  ) {
    super(`line ${line}: ${reason}`);
    this.name = 'DotenvParseError';
  }
}

const KEY = /[A-Za-z_][A-Za-z0-9_]*/y;
const DOUBLE_QUOTED_ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };

/** What may make a line mean more than `KEY=value`: quotes, comments, CR, tab, an `export ` prefix. */
const NOT_SIMPLE = /["'#\r\t]|(?:^|\n)[ ]*export /;
/** One line of the simple form: spaces, then nothing or `KEY = value`, then the line end. */
const SIMPLE_LINE = /[ ]*(?:([A-Za-z_][A-Za-z0-9_]*)[ ]*=[ ]*([^\n]*))?(?:\n|$)/y;

/**
 * Reads a dotenv text. Most texts (every pull of values without spaces, quotes or newlines) are lines of
 * the simple form only; those are read with one sticky regular expression, which `svcenv run` needs
 * because it reads a whole environment on every start, before any code is warm. Anything else, and any
 * error, goes through the full reader below, which gives the same result on simple texts (tested).
 */
export function parseDotenv(text: string): Map<string, string> {
  return parseSimpleDotenv(text) ?? parseDotenvFull(text);
}

/** The fast path of `parseDotenv`: null when some line is not of the simple form. */
export function parseSimpleDotenv(text: string): Map<string, string> | null {
  if (NOT_SIMPLE.test(text)) return null;
  const vars = new Map<string, string>();
  const n = text.length;
  let i = 0;
  while (i < n) {
    SIMPLE_LINE.lastIndex = i;
    const m = SIMPLE_LINE.exec(text);
    if (!m || SIMPLE_LINE.lastIndex === i) return null;
    if (m[1] !== undefined) vars.set(m[1], m[2]!.trimEnd());
    i = SIMPLE_LINE.lastIndex;
  }
  return vars;
}

/** The full reader (every form the module comment lists). */
export function parseDotenvFull(text: string): Map<string, string> {
  const vars = new Map<string, string>();
  let i = 0;
  let line = 1;
  const n = text.length;

  const skipInlineSpace = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
  };
  // After a value: only whitespace and an optional comment may follow on the line.
  const endOfEntry = () => {
    skipInlineSpace();
    if (i < n && text[i] === '#') while (i < n && text[i] !== '\n') i++;
    if (text[i] === '\r' && text[i + 1] === '\n') i++;
    if (i < n && text[i] !== '\n') throw new DotenvParseError(line, 'unexpected text after the closing quote');
    i++;
    line++;
  };

  while (i < n) {
    skipInlineSpace();
    if (i >= n) break; // trailing spaces on the last line
    const c = text[i];
    if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
      i += c === '\n' ? 1 : 2;
      line++;
      continue;
    }
    if (c === '#') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    if (text.startsWith('export', i) && (text[i + 6] === ' ' || text[i + 6] === '\t')) {
      i += 6;
      skipInlineSpace();
    }
    KEY.lastIndex = i;
    const m = KEY.exec(text);
    if (!m) throw new DotenvParseError(line, 'expected KEY=value with a key matching [A-Za-z_][A-Za-z0-9_]*');
    const key = m[0];
    i += key.length;
    skipInlineSpace();
    if (text[i] !== '=') throw new DotenvParseError(line, `expected "=" after ${key}`);
    i++;
    skipInlineSpace();
    const startLine = line;
    const q = text[i];
    if (q === '"') {
      i++;
      let value = '';
      for (;;) {
        if (i >= n) throw new DotenvParseError(startLine, `unterminated double quote in ${key}`);
        const ch = text[i]!;
        if (ch === '"') break;
        if (ch === '\\' && i + 1 < n) {
          const next = text[i + 1]!;
          const esc = DOUBLE_QUOTED_ESCAPES[next];
          // An unknown escape stays as written, backslash included (dotenv's behaviour).
          value += esc ?? `\\${next}`;
          if (next === '\n') line++;
          i += 2;
          continue;
        }
        if (ch === '\n') line++;
        value += ch;
        i++;
      }
      i++;
      vars.set(key, value);
      endOfEntry();
    } else if (q === "'") {
      const close = text.indexOf("'", i + 1);
      if (close < 0) throw new DotenvParseError(startLine, `unterminated single quote in ${key}`);
      const value = text.slice(i + 1, close);
      for (const ch of value) if (ch === '\n') line++;
      i = close + 1;
      vars.set(key, value);
      endOfEntry();
    } else {
      let end = text.indexOf('\n', i);
      if (end < 0) end = n;
      let value = text.slice(i, end);
      if (value.endsWith('\r')) value = value.slice(0, -1);
      // ` #` starts a comment in an unquoted value; a `#` inside a word (a#b) is kept.
      const hash = value.search(/[ \t]#/);
      if (hash >= 0) value = value.slice(0, hash);
      vars.set(key, value.trimEnd());
      i = end + 1;
      line++;
    }
  }
  return vars;
}
