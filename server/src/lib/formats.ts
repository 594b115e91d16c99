/**
 * The server's side of the renderings of pull and export (D28, D30, D55; docs/formats.md, ADR 0008): the
 * pure renderers are the contract's (contract/src/formats.ts), shared with the CLI's offline copy (D42);
 * here a value a format cannot carry becomes 422 FORMAT_UNSUPPORTED naming the key, and each format has its
 * content type and export file name.
 */
import { type Entries, FormatUnsupported, type OutputFormat, render as renderBody } from '@svcenv/contract';
import { AppError } from './errors.js';

/** `name` is the k8s Secret's name (the other formats carry no name). */
export function render(format: OutputFormat, name: string, entries: Entries): string {
  try {
    return renderBody(format, name, entries);
  } catch (err) {
    if (err instanceof FormatUnsupported) throw new AppError('FORMAT_UNSUPPORTED', err.message, err.key);
    throw err;
  }
}

/**
 * D28, D55. Shell is `text/plain` rather than `text/x-shellscript`: the latter is unregistered, and a
 * browser shows plain text instead of offering to run or save it (ADR 0008).
 */
export const CONTENT_TYPES: Record<OutputFormat, string> = {
  dotenv: 'text/plain; charset=utf-8',
  k8s: 'application/yaml',
  json: 'application/json; charset=utf-8',
  shell: 'text/plain; charset=utf-8',
  docker: 'text/plain; charset=utf-8',
};

/** The export's file name ending (ADR 0008): docker's keeps `.env` but differs from the dotenv export's. */
export const FILE_EXTENSIONS: Record<OutputFormat, string> = {
  dotenv: 'env',
  k8s: 'yaml',
  json: 'json',
  shell: 'sh',
  docker: 'docker.env',
};
