/**
 * The renderings of pull and export (D28, D30, D55; docs/formats.md, ADR 0008): pure functions from the
 * ordered `[key, value]` entries of one environment to the body a reader of that format gets back exactly.
 * The server answers pull and export with them; the CLI renders its offline copy with the same ones (D42),
 * so a body from the cache is byte for byte the one the server would send. A value a format cannot carry
 * is refused with FormatUnsupported naming the key (the server's 422 FORMAT_UNSUPPORTED), never written
 * altered; the message names the key and the reason, never the value. Plain code without zod: the CLI
 * imports it on its cold path.
 */
import { renderDotenv } from './dotenv.js';

/** D28, D55: the pull and export formats (the zod enum in variables.ts is built from this list). */
export const OUTPUT_FORMATS = ['dotenv', 'k8s', 'json', 'shell', 'docker'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export type Entries = readonly (readonly [string, string])[];

/** A value the format cannot carry; `key` names the variable (the 422's `field`). */
export class FormatUnsupported extends Error {
  constructor(
    readonly key: string,
    format: OutputFormat,
    why: string,
  ) {
    super(`${key}: the ${format} format cannot hold this value: ${why}`);
  }
}

/** D28: `<name>-<env>`, the name lower-cased with runs outside [a-z0-9] turned into `-`, cut to 253. */
export function k8sSecretName(projectName: string, env: string): string {
  const name = projectName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `${name || 'svcenv'}-${env}`.slice(0, 253).replace(/-+$/, '');
}

/** Base64 of the UTF-8 bytes, without Buffer (this module also loads in the browser). */
function base64Utf8(value: string): string {
  const bytes = new TextEncoder().encode(value);
  let binary = '';
  // In chunks: String.fromCharCode with a spread of a large array overflows the stack.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Spec variables rule 9: a Secret manifest whose `data` values are base64. */
export function renderK8s(name: string, entries: Entries): string {
  // An empty value is written `""`: a bare `KEY:` would be YAML null, which Kubernetes refuses in `data`.
  const data = entries.map(([k, v]) => `  ${k}: ${v ? base64Utf8(v) : '""'}`).join('\n');
  return `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\ntype: Opaque\ndata:${entries.length ? `\n${data}` : ' {}'}\n`;
}

/**
 * D55 json: one object, key → value, in the environment's order, indented for the people who also read
 * it; `JSON.parse` gives back every value exactly (control characters, quotes and backslashes escaped).
 */
export function renderJson(entries: Entries): string {
  // Object.fromEntries defines own properties, so even a key such as `__proto__` stays a plain key.
  return `${JSON.stringify(Object.fromEntries(entries), null, 2)}\n`;
}

/** A POSIX shell name; variable keys already have this shape (D24), checked again because the output is run. */
const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * D55 shell: `export KEY='value'` lines. Inside single quotes a POSIX shell interprets nothing (no `$`,
 * backquote, backslash or history expansion), and only `'` ends the quote, so each `'` is written `'\''`
 * (close, an escaped quote, reopen). Line breaks stay literal inside the quotes, so `source`, `.` and
 * `eval "$(cat file)"` give back every value exactly. A NUL cannot be held by a shell variable or an
 * environment (shells drop or truncate at it), so it is refused rather than silently lost.
 */
export function renderShell(entries: Entries): string {
  let out = '';
  for (const [key, value] of entries) {
    if (!SHELL_NAME.test(key)) throw new FormatUnsupported(key, 'shell', 'the key is not a shell variable name');
    if (value.includes('\0')) {
      throw new FormatUnsupported(key, 'shell', 'it holds a NUL character, which no environment variable can');
    }
    out += `export ${key}='${value.replaceAll("'", "'\\''")}'\n`;
  }
  return out;
}

/**
 * D55 docker: `KEY=value` lines with the raw value, as `docker run --env-file` reads them: it splits the
 * file into lines (dropping a `\r` before each `\n`), cuts each at the first `=` and keeps the rest
 * untouched (no quotes, escapes or `$` expansion). So a line break (`\n` or `\r`) cannot be written, and
 * neither can NUL, which no environment variable holds: each is refused naming the key.
 */
export function renderDocker(entries: Entries): string {
  let out = '';
  for (const [key, value] of entries) {
    if (/[\n\r]/.test(value)) {
      throw new FormatUnsupported(key, 'docker', 'it holds a line break, which would end the env-file line');
    }
    if (value.includes('\0')) {
      throw new FormatUnsupported(key, 'docker', 'it holds a NUL character, which no environment variable can');
    }
    out += `${key}=${value}\n`;
  }
  return out;
}

/** `name` is the k8s Secret's name (the other formats carry no name). */
export function render(format: OutputFormat, name: string, entries: Entries): string {
  switch (format) {
    case 'dotenv':
      return renderDotenv(entries);
    case 'k8s':
      return renderK8s(name, entries);
    case 'json':
      return renderJson(entries);
    case 'shell':
      return renderShell(entries);
    case 'docker':
      return renderDocker(entries);
  }
}
