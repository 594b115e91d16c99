/**
 * Failpoints: named places where a test can make the server die as kill -9 would, to prove that what the
 * code promises survives a crash exactly there (D71: between a lease's create statements and its record;
 * D72: between a rotation's database change and its revision). `SVCENV_FAILPOINTS=<name>[,<name>]` arms them
 * when the process starts; unset (every real deployment), `failpoint()` is one Set lookup that does nothing.
 * Not a mock: the code around a failpoint runs as in production, and the process really ends with SIGKILL.
 */
const armed = new Set(
  (process.env.SVCENV_FAILPOINTS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

export type Failpoint = 'lease-after-create' | 'rotation-after-change' | 'rotate-root-after-change';

export function failpoint(name: Failpoint): void {
  if (armed.size > 0 && armed.has(name)) process.kill(process.pid, 'SIGKILL');
}
