/**
 * The per-process cache of resolved environments behind pull (services/pull/pull.ts says what an entry holds
 * and when it may serve a request; services/core/deps.ts names its type). Entries are kept by environment
 * and revision: a write bumps the revision, so older entries are never served and are dropped when a newer
 * one is added. Bounded, oldest environments evicted first.
 */
export class RenderCache<Entry extends { revision: number }> {
  private readonly map = new Map<string, Entry[]>();
  constructor(
    private readonly max = 2_000,
    /** Entries per environment at one revision (readers whose references reach different environments). */
    private readonly perEnv = 4,
  ) {}
  /** The entries of `envId` at `revision`, most recently added first. */
  candidates(envId: string, revision: number): readonly Entry[] {
    return (this.map.get(envId) ?? []).filter((e) => e.revision === revision);
  }
  add(envId: string, entry: Entry): void {
    const kept = (this.map.get(envId) ?? []).filter((e) => e.revision === entry.revision);
    this.map.delete(envId);
    if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value as string);
    this.map.set(envId, [entry, ...kept].slice(0, this.perEnv));
  }
}
