#!/usr/bin/env node
/**
 * Fails when the code stops reading one way: a cycle of imports between modules of one package, a server
 * module importing a layer above its own, or a migration importing anything of the application
 * (ARCHITECTURE.md "Layering").
 *
 *   node scripts/check-layers.mjs [root]
 *
 * Type imports count like value imports: `import type` vanishes at compile time, but a module that needs
 * another's types to be read depends on it all the same, and a circle of them is a circle to whoever reads
 * or moves the code. Relative imports only: packages depend on each other through their package names,
 * which npm workspaces already keep acyclic (contract imports nothing of ours).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(process.argv[2] ?? join(here, '..'));
const PACKAGES = ['contract/src', 'server/src', 'cli/src', 'web/src'];

/**
 * Server layers, lowest first. A module may import its own layer and the ones below; `routes` sits on
 * `services` and `http`; services may enqueue `jobs` and use the per-process state of `runtime` (caches,
 * the audit group commit, held pulls), which the wiring creates; `db` and `lib` know nothing of the request.
 */
const SERVER_LAYERS = [
  ['lib', 'db', 'managed'],
  ['runtime'],
  ['jobs'],
  ['services', 'http'],
  ['routes'],
  ['app.ts', 'wiring.ts', 'main.ts', 'admin.ts', 'config.ts'],
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

// One statement: the clause stops at the first `from '...'` (no `;` inside), whatever that names; or a bare
// `import '...'` for its effects.
const IMPORT = /^\s*(?:import|export)\s+(?:[^;]*?\s+from\s+)?['"]([^'"]+)['"]/gm;

/** Every import of a file (`import type` included) as written. */
function specifiers(file) {
  return [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) => m[1]);
}

/** Relative imports of a file, values and types alike, resolved to files. */
function imports(file) {
  const out = [];
  for (const spec of specifiers(file)) {
    if (!spec.startsWith('.')) continue;
    const target = resolveImport(dirname(file), spec);
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
  const graph = new Map(files.map((f) => [f, imports(f)]));
  for (const component of cycles(graph)) {
    const also = component.length > 2 ? ` (one of ${component.length} modules importing each other)` : '';
    problems.push(`import cycle: ${cyclePath(graph, component).map(rel).join(' -> ')}${also}`);
  }
}

const serverDir = join(root, 'server', 'src');
for (const file of sourceFiles(serverDir)) {
  const from = layerOf(relative(serverDir, file));
  for (const target of imports(file)) {
    if (!target.startsWith(serverDir)) continue;
    const to = layerOf(relative(serverDir, target));
    if (to > from) problems.push(`${rel(file)} imports ${rel(target)}: a lower layer may not import a higher one`);
  }
}

// A migration is frozen once shipped: it runs against the schema of its day, so it may import packages
// (kysely) but nothing of the application, whose types and rules move on.
const migrations = join(serverDir, 'db', 'migrations');
for (const file of sourceFiles(migrations)) {
  for (const spec of specifiers(file)) {
    if (spec.startsWith('.'))
      problems.push(`${rel(file)} imports ${spec}: a migration imports nothing of the application`);
  }
}

function layerOf(pathInSrc) {
  const first = pathInSrc.split(sep)[0];
  if (LOWEST.has(first)) return 0;
  const i = SERVER_LAYERS.findIndex((names) => names.includes(first));
  return i === -1 ? SERVER_LAYERS.length : i;
}

/** The shortest circle of imports from the component's first module back to it (breadth first). */
function cyclePath(graph, component) {
  const inside = new Set(component);
  const start = component[0];
  const prev = new Map([[start, null]]);
  const queue = [start];
  for (const v of queue) {
    for (const w of graph.get(v) ?? []) {
      if (w === start) {
        const path = [];
        for (let u = v; u !== start; u = prev.get(u)) path.unshift(u);
        return [start, ...path, start];
      }
      if (inside.has(w) && !prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [...component, start];
}

/** The modules of each strongly connected component of more than one module (Tarjan). */
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
      if (component.length > 1) found.push(component.reverse());
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
console.log('check-layers: no import cycles (types included), server layers read one way, migrations stand alone');
