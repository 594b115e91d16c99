#!/usr/bin/env node
/**
 * Fails when the code stops reading one way: a cycle of value imports between modules of one package, or
 * a server module importing a layer above its own (ARCHITECTURE.md "Layering").
 *
 *   node scripts/check-layers.mjs [root]
 *
 * Only value imports count: `import type` (and `import { type A, type B }`) vanish at compile time and
 * cannot form a cycle at run time. Relative imports only: packages depend on each other through their
 * package names, which npm workspaces already keep acyclic (contract imports nothing of ours).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(process.argv[2] ?? join(here, '..'));
const PACKAGES = ['contract/src', 'server/src', 'cli/src', 'web/src'];

/**
 * Server layers, lowest first. A module may import its own layer and the ones below; `routes` sits on
 * `services`, which may enqueue `jobs`; `db` and `lib` know nothing of the request.
 */
const SERVER_LAYERS = [
  ['lib', 'db'],
  ['jobs'],
  ['services', 'http'],
  ['routes'],
  ['app.ts', 'main.ts', 'admin.ts', 'config.ts'],
];
// config.ts is read by every layer (it is the validated environment), so it counts as the lowest.
const LOWEST = new Set(['config.ts']);

function sourceFiles(dir) {
  const out = [];
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (/\.(ts|tsx|mts|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

// One statement: the clause stops at the first `from '...'` (no `;` inside), whatever that names.
const IMPORT = /^\s*(?:import|export)\s+(?!type\b)([^;]*?)\s+from\s+['"]([^'"]+)['"]/gm;

/** Relative value imports of a file, resolved to files. */
function valueImports(file) {
  const text = readFileSync(file, 'utf8');
  const out = [];
  for (const m of text.matchAll(IMPORT)) {
    if (!m[2].startsWith('.')) continue;
    const clause = m[1];
    const named = /^\{([\s\S]*)\}$/.exec(clause.trim());
    if (named?.[1]?.split(',').every((part) => !part.trim() || /^type\s/.test(part.trim()))) continue;
    const target = resolveImport(dirname(file), m[2]);
    if (target) out.push(target);
  }
  return out;
}

function resolveImport(from, spec) {
  const base = resolve(from, spec.replace(/\.(m?js)$/, ''));
  for (const ext of ['.ts', '.tsx', '.mts', '.mjs', '/index.ts', '/index.tsx']) {
    if (existsSync(base + ext)) return base + ext;
  }
  return existsSync(base) && statSync(base).isFile() ? base : null;
}

const rel = (p) => relative(root, p).split(sep).join('/');
const problems = [];

for (const pkg of PACKAGES) {
  const files = sourceFiles(join(root, pkg));
  const graph = new Map(files.map((f) => [f, valueImports(f)]));
  for (const cycle of cycles(graph)) problems.push(`value import cycle: ${cycle.map(rel).join(' -> ')}`);
}

const serverDir = join(root, 'server', 'src');
for (const file of sourceFiles(serverDir)) {
  const from = layerOf(relative(serverDir, file));
  for (const target of valueImports(file)) {
    if (!target.startsWith(serverDir)) continue;
    const to = layerOf(relative(serverDir, target));
    if (to > from) problems.push(`${rel(file)} imports ${rel(target)}: a lower layer may not import a higher one`);
  }
}

function layerOf(pathInSrc) {
  const first = pathInSrc.split(sep)[0];
  if (LOWEST.has(first)) return 0;
  const i = SERVER_LAYERS.findIndex((names) => names.includes(first));
  return i === -1 ? SERVER_LAYERS.length : i;
}

/** One representative cycle per strongly connected component of more than one module (Tarjan). */
function cycles(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push([...component.reverse(), component[0]]);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  console.error(`check-layers: ${problems.length} problem(s)`);
  process.exit(1);
}
console.log('check-layers: no value import cycles, server layers read one way');
