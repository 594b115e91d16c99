/**
 * D30 dotenv output: `KEY=value`; a value with a newline, whitespace, `#`, a quote or `\` (or any other
 * control character) is written double-quoted with `\n`, `\r`, `\"` and `\\` escapes. The CLI's parser
 * (dotenv-parse.ts) reads back exactly what this writes.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what must be quoted
const NEEDS_QUOTES = /[\s#"'\\\u0000-\u001f\u007f]/;

export function formatDotenvValue(value: string): string {
  if (!NEEDS_QUOTES.test(value)) return value;
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r')}"`;
}

export function renderDotenv(entries: Iterable<readonly [string, string]>): string {
  let out = '';
  for (const [key, value] of entries) out += `${key}=${formatDotenvValue(value)}\n`;
  return out;
}
