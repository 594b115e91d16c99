/**
 * The newest modification time (ms) of a file, or of any file below a directory; 0 when it is missing.
 * Shared by the two "build only when the sources changed" scripts: server/scripts/build.mjs and
 * web/scripts/ensure-built.mjs.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let n = st.mtimeMs;
  for (const e of readdirSync(path, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) n = Math.max(n, statSync(join(e.parentPath, e.name)).mtimeMs);
  }
  return n;
}
