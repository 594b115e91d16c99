import type { AuditEntry, Member } from '@svcenv/contract';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { type AuditFilters, collectAudit, EXPORT_MAX, listAudit } from '../api/audit.js';
import { listMembers } from '../api/team.js';
import { ApiError } from '../api.js';
import { Actor } from '../components/Actor.js';
import { Table } from '../components/Table.js';
import { ACTION_WORDS, actionLabel, actorLabel, auditCsv, auditJson, dayBound, detailParts } from '../lib/audit.js';
import { download } from '../lib/download.js';
import { dateTime, relativeTime } from '../lib/format.js';
import { useToast } from '../toast.js';
import { Button, Empty, ErrorBanner, Link, PageHeader, Spinner } from '../ui.js';

export function AuditPage() {
  return (
    <>
      <PageHeader
        title="Audit log"
        subtitle="Every access and change across the workspace; values are never recorded."
      />
      <AuditView />
    </>
  );
}

interface Draft {
  action: string;
  actor: string;
  /** Local days from the date inputs (YYYY-MM-DD) or "". */
  from: string;
  to: string;
}
const NO_FILTER: Draft = { action: '', actor: '', from: '', to: '' };

/** The server-side filters (ADR 0015) for what the inputs hold; local days become instants. */
const toFilters = (d: Draft): AuditFilters => ({
  action: d.action || undefined,
  actor: d.actor || undefined,
  from: dayBound(d.from, 'from'),
  to: dayBound(d.to, 'to'),
});

/**
 * One audit log (a project's, or else the workspace's): newest first in cursor pages, filtered on the server by
 * action, actor and dates (ADR 0015), actors by name, actions in words, and the filtered log exported as CSV or
 * JSON. The workspace's log names each entry's project (name and slug), since environment names repeat across
 * projects. On a phone the table becomes one card per entry.
 */
export function AuditView({
  projectId,
  fileName = 'workspace',
  canOpen = () => true,
}: {
  projectId?: string;
  fileName?: string;
  /**
   * Whether the reader may open an environment of this project (D57), for the links to change requests; the
   * workspace log is for Owners, who open every environment.
   */
  canOpen?: (env: string) => boolean;
}) {
  const toast = useToast();
  const [entries, setEntries] = useState<AuditEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>();
  const [draft, setDraft] = useState<Draft>(NO_FILTER);
  const [members, setMembers] = useState<Member[]>([]);
  const [exporting, setExporting] = useState<{ format: 'csv' | 'json'; count: number } | null>(null);
  // Answers to an older filter arriving late are dropped.
  const seq = useRef(0);
  const filters = useMemo(() => toFilters(draft), [draft]);

  const loadPage = async (from: string | null) => {
    const my = ++seq.current;
    setLoading(true);
    setError(undefined);
    try {
      const page = await listAudit(projectId, 50, from, filters);
      if (my !== seq.current) return;
      setEntries((e) => (from ? [...e, ...page.logs] : page.logs));
      setCursor(page.nextCursor || null);
    } catch (e) {
      if (my === seq.current) setError(e);
    }
    if (my === seq.current) setLoading(false);
  };
  useEffect(() => {
    void loadPage(null);
  }, [projectId, filters]);
  useEffect(() => {
    listMembers()
      .then((r) => setMembers(r.members))
      .catch(() => setMembers([]));
  }, []);

  // Actors to filter by: the workspace's members, and every other actor (tokens, former members) seen so far.
  const [seen, setSeen] = useState<Map<string, string>>(new Map());
  useEffect(() => {
    setSeen((prev) => {
      const next = new Map(prev);
      for (const e of entries) if (e.actorId && !next.has(e.actorId)) next.set(e.actorId, actorLabel(e));
      return next.size === prev.size ? prev : next;
    });
  }, [entries]);
  const actors = useMemo(() => {
    const list = new Map<string, string>(members.map((m) => [m.id, m.name]));
    for (const [id, name] of seen) if (!list.has(id)) list.set(id, name);
    return [...list].sort((a, b) => a[1].localeCompare(b[1]));
  }, [members, seen]);
  // Known actions first, then any other name the server sent (a newer server's), so each can be chosen.
  const actions = useMemo(() => {
    const names = new Set(Object.keys(ACTION_WORDS));
    for (const e of entries) names.add(e.action);
    if (draft.action) names.add(draft.action);
    return [...names].sort((a, b) => actionLabel(a).localeCompare(actionLabel(b)));
  }, [entries, draft.action]);

  const filtered = draft.action || draft.actor || draft.from || draft.to;
  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));

  const exportAs = async (format: 'csv' | 'json') => {
    setExporting({ format, count: 0 });
    try {
      const { entries: all, complete } = await collectAudit(projectId, filters, (count) =>
        setExporting({ format, count }),
      );
      const day = new Date().toISOString().slice(0, 10);
      const name = `svcenv-audit-${fileName}-${day}.${format}`;
      if (format === 'csv') download(new Blob([auditCsv(all)], { type: 'text/csv;charset=utf-8' }), name);
      else download(new Blob([auditJson(all)], { type: 'application/json' }), name);
      toast(
        complete
          ? `Exported ${all.length} ${all.length === 1 ? 'entry' : 'entries'}`
          : `Exported the newest ${EXPORT_MAX} entries; narrow the dates to export older ones`,
      );
    } catch (e) {
      toast(e instanceof Error ? e.message : String(e), 'error');
    }
    setExporting(null);
  };

  return (
    <section class="panel audit">
      {/* A member refused the workspace log sees the reason, not filters and exports that cannot work. */}
      <div class="toolbar audit-filters" hidden={error instanceof ApiError && error.status === 403}>
        <select
          class="input"
          aria-label="Filter by action"
          value={draft.action}
          onChange={(e) => set({ action: e.currentTarget.value })}
        >
          <option value="">All actions</option>
          {actions.map((a) => (
            <option key={a} value={a}>
              {actionLabel(a)}
            </option>
          ))}
        </select>
        <select
          class="input"
          aria-label="Filter by actor"
          value={draft.actor}
          onChange={(e) => set({ actor: e.currentTarget.value })}
        >
          <option value="">Everyone</option>
          {actors.map(([id, name]) => (
            <option key={id} value={id}>
              {name}
            </option>
          ))}
        </select>
        <label class="audit-date">
          <span>From</span>
          <input
            class="input"
            type="date"
            aria-label="From date"
            value={draft.from}
            max={draft.to || undefined}
            onChange={(e) => set({ from: e.currentTarget.value })}
          />
        </label>
        <label class="audit-date">
          <span>To</span>
          <input
            class="input"
            type="date"
            aria-label="To date"
            value={draft.to}
            min={draft.from || undefined}
            onChange={(e) => set({ to: e.currentTarget.value })}
          />
        </label>
        {filtered && (
          <Button size="sm" variant="ghost" onClick={() => setDraft(NO_FILTER)}>
            Clear filters
          </Button>
        )}
        <div class="toolbar-spacer" />
        <fieldset class="audit-export">
          <legend class="sr-only">Export the filtered log</legend>
          <Button
            size="sm"
            busy={exporting?.format === 'csv'}
            disabled={exporting !== null}
            onClick={() => exportAs('csv')}
          >
            Export CSV
          </Button>
          <Button
            size="sm"
            busy={exporting?.format === 'json'}
            disabled={exporting !== null}
            onClick={() => exportAs('json')}
          >
            Export JSON
          </Button>
          {exporting && exporting.count > 0 && (
            <span class="muted small" role="status">
              {exporting.count} entries…
            </span>
          )}
        </fieldset>
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
      ) : !error && entries.length === 0 ? (
        <Empty title="No entries">{filtered ? 'Nothing matches these filters.' : 'Nothing has happened yet.'}</Empty>
      ) : error ? null : (
        <Table
          class="audit-table table-cards"
          columns={projectId ? ['When', 'Action', 'Target', 'Actor'] : ['When', 'Action', 'Project', 'Target', 'Actor']}
        >
          {entries.map((e) => (
            <tr key={e.id} data-testid="audit-row">
              <td class="small" data-label="When" title={dateTime(e.createdAt)}>
                {relativeTime(e.createdAt)}
              </td>
              <td data-label="Action">
                <span class="action" title={e.action}>
                  {actionLabel(e.action)}
                </span>
              </td>
              {!projectId && (
                <td data-label="Project" data-testid="audit-project">
                  {e.project ? (
                    <>
                      <Link to={`/projects/${e.project.id}`}>{e.project.name}</Link>
                      <div class="muted small audit-slug">{e.project.slug}</div>
                    </>
                  ) : (
                    <span class="muted">—</span>
                  )}
                </td>
              )}
              <td data-label="Target">
                {e.targetEnv && <span class="chip">{e.targetEnv}</span>} {e.targetKey && <code>{e.targetKey}</code>}
                {e.detail != null && <AuditDetail entry={e} canOpen={canOpen} />}
                {!e.targetEnv && !e.targetKey && e.detail == null && <span class="muted">—</span>}
              </td>
              <td data-label="Actor" data-testid="audit-actor">
                {e.actorType === 'token' ? <Actor name={actorLabel(e)} /> : actorLabel(e)}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <div class="row-center audit-more">
        {!error && entries.length > 0 && (
          <span class="muted small">
            {entries.length} {entries.length === 1 ? 'entry' : 'entries'}
            {filtered ? ' matching' : ''}
            {cursor ? ' shown' : ''}
          </span>
        )}
        {cursor && (
          <Button busy={loading} onClick={() => loadPage(cursor)}>
            Load older entries
          </Button>
        )}
      </div>
    </section>
  );
}

/**
 * An entry's detail as one line: people by name, a change request's id linked to the request (on the Change
 * requests tab of its project and environment) where the reader may open that environment.
 */
function AuditDetail({ entry: e, canOpen }: { entry: AuditEntry; canOpen: (env: string) => boolean }) {
  const parts = detailParts(e);
  return (
    <div class="muted small audit-detail" data-testid="audit-detail">
      {parts.map((p, i) => (
        <span key={`${p.label}-${i}`}>
          {i > 0 && ' · '}
          {p.label && `${p.label}: `}
          {p.changeRequest && e.project && e.targetEnv && canOpen(e.targetEnv) ? (
            <Link
              to={`/projects/${e.project.id}?tab=requests&env=${encodeURIComponent(e.targetEnv)}&request=${p.changeRequest}`}
              class="audit-cr-link"
            >
              {p.text}
            </Link>
          ) : (
            p.text
          )}
        </span>
      ))}
    </div>
  );
}
