import type { Project } from '@svcenv/contract';
import { useEffect, useState } from 'preact/hooks';
import { type AccessRequest, listAccessRequests } from '../../api/access.js';
import { listProjects } from '../../api/projects.js';
import { mapLimit } from '../../lib/pool.js';

export type InboxItem = AccessRequest & { project: Project };
export type Inbox = { admin: Project[]; items: InboxItem[] };

/** Projects whose requests are asked at the same time: not all at once (a large workspace), not one by one. */
export const INBOX_CONCURRENCY = 6;

/**
 * The access requests (D74) of every project the viewer administers (`access.admin`, D57), newest first:
 * only there may they approve. Projects whose list fails (removed meanwhile) are skipped.
 */
export async function loadInbox(): Promise<Inbox> {
  const { projects } = await listProjects();
  const admin = projects.filter((p) => p.access.admin);
  const lists = await mapLimit(admin, INBOX_CONCURRENCY, (p) =>
    listAccessRequests(p.id)
      .then((r) => r.accessRequests.map((a) => ({ ...a, project: p })))
      .catch(() => [] as InboxItem[]),
  );
  const items = lists.flat().sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
  return { admin, items };
}

/*
 * One inbox for the page and the nav badge: both read the last load, so a decision taken on the page is in the
 * badge at once, and a load asked while one runs joins it (the page and the badge mount together).
 */
let running: { seq: number; promise: Promise<Inbox> } | null = null;
let seq = 0;
const listeners = new Set<(inbox: Inbox) => void>();

/**
 * Loads the inbox and tells every reader. `fresh`: a new load even when one runs (after a decision, whose
 * result the running load may predate); only the newest load is told, so an older answer never wins.
 */
export function refreshInbox(fresh = false): Promise<Inbox> {
  if (running && !fresh) return running.promise;
  const my = ++seq;
  const promise = loadInbox()
    .then((inbox) => {
      if (my === seq) for (const l of listeners) l(inbox);
      return inbox;
    })
    .finally(() => {
      if (running?.seq === my) running = null;
    });
  running = { seq: my, promise };
  return promise;
}

/** The newest inbox loaded since the caller mounted (none before: never another session's). */
function useInboxStore(): Inbox | null {
  const [inbox, setInbox] = useState<Inbox | null>(null);
  useEffect(() => {
    listeners.add(setInbox);
    return () => {
      listeners.delete(setInbox);
    };
  }, []);
  return inbox;
}

/** The inbox page's state: loading, the load's error, the inbox; `reload` after a decision updates the badge too. */
export function useInbox(): {
  data: Inbox | undefined;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
} {
  const inbox = useInboxStore();
  const [state, setState] = useState<{ loading: boolean; error?: unknown }>({ loading: true });
  const load = (fresh: boolean) => {
    setState((s) => ({ ...s, loading: true }));
    return refreshInbox(fresh).then(
      () => setState({ loading: false }),
      (error: unknown) => setState({ loading: false, error }),
    );
  };
  useEffect(() => {
    void load(false);
  }, []);
  return {
    data: state.error ? undefined : (inbox ?? undefined),
    error: state.error,
    loading: state.loading && !inbox,
    reload: () => load(true),
  };
}

/**
 * The nav entry's badge: pending requests the viewer may decide (not their own); `admin` false when they
 * administer no project, then the entry is not offered. Reloaded when the page changes, every minute, and
 * at once when the inbox page decides a request.
 */
export function usePendingAccessCount(path: string, userId: string): { admin: boolean; count: number } {
  const inbox = useInboxStore();
  useEffect(() => {
    void refreshInbox().catch(() => undefined);
    const t = setInterval(() => void refreshInbox().catch(() => undefined), 60_000);
    return () => clearInterval(t);
  }, [path, userId]);
  if (!inbox) return { admin: false, count: 0 };
  const count = inbox.items.filter((i) => i.status === 'pending' && i.requesterId !== userId).length;
  return { admin: inbox.admin.length > 0, count };
}
