#!/usr/bin/env node
/**
 * Keeps ARCHITECTURE.md's tree true: every path it names exists, and every folder holding source files
 * is named there, so a newcomer reading the tree finds every part of the code.
 *
 *   node scripts/check-architecture.mjs [root]
 *
 * The tree is the first fenced code block of ARCHITECTURE.md. A line that starts at column 0 names a path
 * from the repository root (`server/src/`, `cli/`); an indented line names a path below the nearest
 * folder named on a line indented less (`  routes/` under `server/src/`, then `    auth.ts`), and lines
 * indented past 12 spaces continue a description. The paths are the line's leading words that look like
 * paths (with a slash or a file extension), so descriptions may say anything. A folder counts as named when it, or a file in it, is.
 *
 * Source files are the git-tracked (outside git: all) .ts, .tsx, .mjs, .js, .cjs and .css files, minus
 * node_modules/ and dist/; the repository root's own files (configs) need no entry.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(process.argv[2] ?? join(here, '..'));
const SOURCE = /\.(ts|tsx|mjs|js|cjs|css)$/;
// A word that is a path: it has a slash (`http/errors.ts`, `.ci/run`, `routes/`) or a file extension.
const PATH_WORD = /^(?:\.?[\w@-][\w.@-]*\/)+(?:\.?[\w@-][\w.@-]*)?$|^\.?[\w@-][\w.@-]*\.[a-z]+$/;
// Entries are indented by their depth (2 spaces a level); descriptions continue further right.
const MAX_ENTRY_INDENT = 12;

function trackedFiles() {
  try {
    return execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\0')
      .filter(Boolean);
  } catch {
    const out = [];
    const walk = (dir) => {
      for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
        if (e.name === 'node_modules' || e.name === 'dist' || e.name === '.git') continue;
        const rel = dir ? `${dir}/${e.name}` : e.name;
        if (e.isDirectory()) walk(rel);
        else out.push(rel);
      }
    };
    walk('');
    return out;
  }
}

/** The leading path-like words of a tree line: `mfa.ts, me.ts  TOTP ...` → ['mfa.ts', 'me.ts']. */
function leadingPaths(text) {
  const paths = [];
  for (const raw of text.trim().split(/\s+/)) {
    const word = raw.replace(/,$/, '');
    if (!PATH_WORD.test(word)) break;
    paths.push(word);
    if (!raw.endsWith(',')) break;
  }
  return paths;
}

const failures = [];
const archPath = join(root, 'ARCHITECTURE.md');
if (!existsSync(archPath)) {
  console.error('check-architecture: ARCHITECTURE.md is missing');
  process.exit(1);
}
const lines = readFileSync(archPath, 'utf8').split('\n');
const start = lines.findIndex((l) => l.startsWith('```'));
const end = lines.findIndex((l, i) => i > start && l.startsWith('```'));
if (start < 0 || end < 0) {
  console.error('check-architecture: ARCHITECTURE.md has no fenced tree');
  process.exit(1);
}

const namedFolders = new Set();
// The folders enclosing the current line, by indentation: [{indent, path}].
const parents = [];
for (let i = start + 1; i < end; i++) {
  const line = lines[i];
  if (!line.trim()) continue;
  const indent = line.length - line.trimStart().length;
  if (indent > MAX_ENTRY_INDENT) continue;
  const words = leadingPaths(line);
  if (words.length === 0) {
    failures.push(`ARCHITECTURE.md:${i + 1}: a tree entry should start with a path: ${line.trim()}`);
    continue;
  }
  while (parents.length && parents[parents.length - 1].indent >= indent) parents.pop();
  const base = parents.length ? parents[parents.length - 1].path : '';
  for (const word of words) {
    const bare = posix.join(base, word.replace(/\/$/, ''));
    const shown = word.endsWith('/') ? `${bare}/` : bare;
    if (!existsSync(join(root, bare))) failures.push(`ARCHITECTURE.md:${i + 1}: names ${shown}, which does not exist`);
    if (word.endsWith('/')) {
      namedFolders.add(bare);
      if (words.length === 1) parents.push({ indent, path: bare });
    } else namedFolders.add(posix.dirname(bare));
  }
}

const sourceFolders = new Set(
  trackedFiles()
    .map((f) => f.split(sep).join('/'))
    .filter((f) => SOURCE.test(f) && !/(^|\/)(node_modules|dist)\//.test(f))
    .map((f) => posix.dirname(f))
    .filter((d) => d !== '.'),
);
for (const folder of [...sourceFolders].sort()) {
  if (!namedFolders.has(folder)) failures.push(`ARCHITECTURE.md does not name ${folder}/ (it holds source files)`);
}

if (failures.length) {
  for (const f of failures) console.error(f);
  console.error(`check-architecture: ${failures.length} problem(s); keep the tree in ARCHITECTURE.md true`);
  process.exit(1);
}
console.log(`check-architecture: ${sourceFolders.size} source folders, all named in ARCHITECTURE.md`);
