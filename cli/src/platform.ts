import pkg from '../package.json' with { type: 'json' };

/** Set by `bun build --define` (build.ts); under tsx the package version is used. */
declare const SVCENV_BUILD_VERSION: string | undefined;

export const VERSION: string = typeof SVCENV_BUILD_VERSION === 'string' ? SVCENV_BUILD_VERSION : pkg.version;

/** True inside a `bun build --compile` executable, whose own file is process.execPath. */
export function isCompiled(): boolean {
  return typeof process.versions.bun === 'string' && import.meta.url.includes('$bunfs');
}
