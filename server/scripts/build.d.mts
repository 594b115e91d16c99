/** Where the compiled server goes: dist/server under the repository root. */
export declare const outDir: string;
/** Packages with native addons, left to node_modules rather than bundled. */
export declare const NATIVE: string[];
/** Whether dist/server exists and is no older than the server's and the contract's sources and the install. */
export declare function isFresh(): boolean;
/** Builds dist/server when stale (or always with force); resolves to whether it built. */
export declare function buildServer(opts?: { force?: boolean }): Promise<boolean>;
