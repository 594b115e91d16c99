import { useEffect, useState } from 'preact/hooks';
import { listChangeRequests } from '../../api/change-requests.js';

/**
 * Change requests opened, approved, rejected or withdrawn in this tab: whoever shows a count of open ones
 * re-reads it. Another tab's or person's change is picked up when the window regains focus.
 */
const listeners = new Set<() => void>();
export function requestsChanged(): void {
  for (const l of listeners) l();
}

/** The number of open change requests of each environment named, and their total. */
export function useOpenCounts(projectId: string, envs: string[]): { counts: Record<string, number>; total: number } {
  const [counts, setCounts] = useState<Record<string, number>>({});
  const key = envs.join('\n');
  useEffect(() => {
    let live = true;
    const load = async () => {
      const entries = await Promise.all(
        envs.map(async (e) => {
          try {
            return [e, (await listChangeRequests(projectId, e, 'open')).changeRequests.length] as const;
          } catch {
            // A count is a hint: an environment whose list is refused simply shows none.
            return [e, 0] as const;
          }
        }),
      );
      if (live) setCounts(Object.fromEntries(entries));
    };
    void load();
    listeners.add(load);
    window.addEventListener('focus', load);
    return () => {
      live = false;
      listeners.delete(load);
      window.removeEventListener('focus', load);
    };
  }, [projectId, key]);
  return { counts, total: Object.values(counts).reduce((a, b) => a + b, 0) };
}
