import type { Project } from '@svcenv/contract';
import { useEffect, useState } from 'preact/hooks';
import { type AccessRequest, listAccessRequests } from '../../api/access.js';
import { listProjects } from '../../api/projects.js';
import { useAsync } from '../../hooks.js';

export type InboxItem = AccessRequest & { project: Project };

/**
 * The access requests (D74) of every project the viewer administers (`access.admin`, D57), newest first:
 * only there may they approve. Projects whose list fails (removed meanwhile) are skipped.
 */
export async function loadInbox(): Promise<{ admin: Project[]; items: InboxItem[] }> {
  const { projects } = await listProjects();
  const admin = projects.filter((p) => p.access.admin);
  const lists = await Promise.all(
    admin.map((p) =>
      listAccessRequests(p.id)
        .then((r) => r.accessRequests.map((a) => ({ ...a, project: p })))
        .catch(() => [] as InboxItem[]),
    ),
  );
  const items = lists.flat().sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
  return { admin, items };
}

export function useInbox() {
  return useAsync(loadInbox, []);
}

/**
 * The nav entry's badge: pending requests the viewer may decide (not their own); `admin` false when they
 * administer no project, then the entry is not offered. Reloaded when the page changes and every minute.
 */
export function usePendingAccessCount(path: string, userId: string): { admin: boolean; count: number } {
  const [state, setState] = useState({ admin: false, count: 0 });
  useEffect(() => {
    let live = true;
    const load = () =>
      loadInbox()
        .then(({ admin, items }) => {
          if (!live) return;
          const count = items.filter((i) => i.status === 'pending' && i.requesterId !== userId).length;
          setState({ admin: admin.length > 0, count });
        })
        .catch(() => undefined);
    void load();
    const t = setInterval(load, 60_000);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, [path, userId]);
  return state;
}
