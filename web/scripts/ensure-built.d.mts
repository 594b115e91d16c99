export function ensureBuilt(opts?: { force?: boolean }): Promise<boolean>;
