import pkg from '../package.json' with { type: 'json' };

/** Set by `bun build --define` (build.ts); under tsx the package version is used. */
declare const SVCENV_BUILD_VERSION: string | undefined;

export const VERSION: string = typeof SVCENV_BUILD_VERSION === 'string' ? SVCENV_BUILD_VERSION : pkg.version;

/**
 * True inside a `bun build --compile` executable, whose own file is process.execPath. Its entry point
 * lives in Bun's embedded file system (`Bun.main`; not import.meta.url, which `--bytecode` fixes at
 * build time to the source path).
 */
export function isCompiled(): boolean {
  const main = (globalThis as { Bun?: { main?: unknown } }).Bun?.main;
  return typeof main === 'string' && main.includes('$bunfs');
}
