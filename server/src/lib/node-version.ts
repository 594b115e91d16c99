/**
 * The Node versions the server runs on: server/package.json "engines" (`^22.12.0 || >=24.0.0`), checked
 * at start-up before anything opens the database. The root install brings Node 24 (the `node` package,
 * which npm scripts run first), so this only refuses someone who runs dist/server/main.mjs with an older
 * Node by hand: better-sqlite3 13 crashes such a process with a segmentation fault instead of an error.
 */
export const SUPPORTED_NODE = '^22.12.0 || >=24.0.0';

/** True for a `process.versions.node` string the server supports. */
export function nodeSupported(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map((n) => Number.parseInt(n, 10));
  return major >= 24 || (major === 22 && minor >= 12);
}

/** The line printed when the running Node is too old: which Node, which are needed, and the usual fix. */
export function unsupportedNodeMessage(version: string): string {
  return (
    `svcenv: Node ${version} cannot run the server (it needs Node ${SUPPORTED_NODE}). ` +
    'Start it with `npm start`, which runs the Node 24 that `npm ci` installed (node_modules/.bin/node), ' +
    'or run dist/server/main.mjs with Node 22.12 or later.'
  );
}
