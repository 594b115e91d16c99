/**
 * Node's built-in modules, loaded on first use instead of imported. Under Bun a static import of
 * node:fs, node:os and node:path costs every start ~2 ms (an ESM import is evaluated before `main`
 * runs, whichever command then runs), while `svcenv run -- true` with its settings in the environment
 * touches none of them: no config file to read, nothing to print (bench/cli.bench.ts, ADR 0001-cli).
 * process.getBuiltinModule returns the same module objects, cached, under Node and Bun alike.
 */
let nodeFs: typeof import('node:fs') | undefined;
let nodeOs: typeof import('node:os') | undefined;
let nodePath: typeof import('node:path') | undefined;

export const fs = (): typeof import('node:fs') => (nodeFs ??= process.getBuiltinModule('node:fs'));
export const os = (): typeof import('node:os') => (nodeOs ??= process.getBuiltinModule('node:os'));
export const path = (): typeof import('node:path') => (nodePath ??= process.getBuiltinModule('node:path'));
