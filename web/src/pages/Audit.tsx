import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { dateTime, relativeTime } from '../lib/format.js';
import type { AuditEntry, Member, AuditPage as Page } from '../types.js';
import { Button, Empty, ErrorBanner, PageHeader, Spinner } from '../ui.js';

export function AuditPage() {
  return (
    <>
      <PageHeader
        title="Audit log"
        subtitle="Every access and change across the workspace; values are never recorded."
      />
      <AuditView path="/workspace/audit" />
    </>
  );
}

/** One audit log (workspace or project) with cursor pages and filters by action and actor. */
export function AuditView({ path }: { path: string }) {
  const [entries, setEntries] = useState<AuditEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>();
  const [action, setAction] = useState('');
  const [actor, setActor] = useState('');
  const [members, setMembers] = useState<Member[]>([]);

  const loadPage = async (from: string | null) => {
    setLoading(true);
    setError(undefined);
    try {
      const page = await api.get<Page>(path, { limit: '50', ...(from ? { cursor: from } : {}) });
      setEntries((e) => (from ? [...e, ...page.logs] : page.logs));
      setCursor(page.nextCursor);
    } catch (e) {
      setError(e);
    }
    setLoading(false);
  };
  useEffect(() => {
    void loadPage(null);
    api
      .get<{ members: Member[] }>('/workspace/members')
      .then((r) => setMembers(r.members))
      .catch(() => setMembers([]));
  }, [path]);

  const names = useMemo(() => new Map(members.map((m) => [m.id, m.name])), [members]);
  const actions = useMemo(() => [...new Set(entries.map((e) => e.action))].sort(), [entries]);
  const actors = useMemo(() => [...new Set(entries.map((e) => e.actorId ?? ''))].filter(Boolean), [entries]);
  const shown = entries.filter((e) => (!action || e.action === action) && (!actor || e.actorId === actor));

  return (
    <section class="panel">
      <div class="toolbar">
        <select
          class="input"
          aria-label="Filter by action"
          value={action}
          onChange={(e) => setAction(e.currentTarget.value)}
        >
          <option value="">All actions</option>
          {actions.map((a) => (
            <option key={a}>{a}</option>
          ))}
        </select>
        <select
          class="input"
          aria-label="Filter by actor"
          value={actor}
          onChange={(e) => setActor(e.currentTarget.value)}
        >
          <option value="">Everyone</option>
          {actors.map((a) => (
            <option key={a} value={a}>
              {names.get(a) ?? `${a.slice(0, 8)}…`}
            </option>
          ))}
        </select>
        <div class="toolbar-spacer" />
        <span class="muted small">
          {shown.length} of {entries.length} loaded
        </span>
      </div>
      {error instanceof ApiError && error.status === 403 ? (
        <Empty title="Only for Owners">
          The workspace log spans every project. The log of a project you can see is on its Audit log tab.
        </Empty>
      ) : error ? (
        <ErrorBanner error={error} onRetry={() => loadPage(null)} />
      ) : null}
      {!error && entries.length === 0 && loading ? (
        <Spinner />
      ) : !error && shown.length === 0 ? (
        <Empty title="No entries">
          {entries.length ? 'Nothing matches these filters on the loaded pages.' : 'Nothing has happened yet.'}
        </Empty>
      ) : (
        <div class="table-wrap">
          <table class="table audit-table">
            <thead>
              <tr>
                <th>When</th>
                <th>Action</th>
                <th>Target</th>
                <th>Actor</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((e) => (
                <tr key={e.id}>
                  <td class="small" title={dateTime(e.createdAt)}>
                    {relativeTime(e.createdAt)}
                  </td>
                  <td>
                    <code class="action">{e.action}</code>
                  </td>
                  <td>
                    {e.targetEnv && <span class="chip">{e.targetEnv}</span>} {e.targetKey && <code>{e.targetKey}</code>}
                    {e.detail != null && <div class="muted small audit-detail">{detailText(e.detail)}</div>}
                  </td>
                  <td>
                    {(e.actorId && names.get(e.actorId)) ?? (e.actorId ? `${e.actorId.slice(0, 8)}…` : '—')}
                    <span class="muted small"> · {e.actorType}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor && (
        <div class="row-center">
          <Button busy={loading} onClick={() => loadPage(cursor)}>
            Load older entries
          </Button>
        </div>
      )}
    </section>
  );
}

/** A compact line for an entry's detail (never values, D36): `key: value` pairs, arrays joined. */
export function detailText(detail: unknown): string {
  if (typeof detail !== 'object' || detail === null) return String(detail);
  const parts = Object.entries(detail as Record<string, unknown>).map(([k, v]) => {
    const shown = Array.isArray(v) ? v.join(', ') : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
    return `${k}: ${shown}`;
  });
  const text = parts.join(' · ');
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}
