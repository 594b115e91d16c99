import type { Variable } from '@svcenv/contract';
import { Button } from '../../ui.js';

export type TypeFilter = 'all' | Variable['type'];
export type SortOrder = 'key' | 'key-desc' | 'updated' | 'updated-asc';

/** Rows per page: a long environment stays a page of readable height (200+ variables). */
export const PAGE_SIZE = 50;

/**
 * The variables matching `query` (in the key, or in the value where the value is visible: plain, or
 * revealed; a masked secret's value is never searched) and `type`, in `order`. `shown` gives a row's
 * visible entry (its plaintext when revealed).
 */
export function selectVars(
  vars: Variable[],
  opts: {
    query: string;
    type: TypeFilter;
    order: SortOrder;
    shown: (v: Variable) => Variable;
    visible: (v: Variable) => boolean;
  },
): Variable[] {
  const q = opts.query.trim().toLowerCase();
  const out = vars.filter((v) => {
    if (opts.type !== 'all' && v.type !== opts.type) return false;
    if (!q) return true;
    if (v.key.toLowerCase().includes(q)) return true;
    return opts.visible(v) && opts.shown(v).value.toLowerCase().includes(q);
  });
  const byKey = (a: Variable, b: Variable) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  const byUpdated = (a: Variable, b: Variable) => a.updatedAt.localeCompare(b.updatedAt) || byKey(a, b);
  const cmp: Record<SortOrder, (a: Variable, b: Variable) => number> = {
    key: byKey,
    'key-desc': (a, b) => byKey(b, a),
    updated: (a, b) => byUpdated(b, a),
    'updated-asc': byUpdated,
  };
  return out.sort(cmp[opts.order]);
}

/** Type filter, sort order and how many of the environment's variables match. */
export function ListControls({
  type,
  onType,
  order,
  onOrder,
  matching,
  total,
}: {
  type: TypeFilter;
  onType: (t: TypeFilter) => void;
  order: SortOrder;
  onOrder: (o: SortOrder) => void;
  matching: number;
  total: number;
}) {
  return (
    <div class="list-controls">
      <select
        class="input input-sm"
        aria-label="Show types"
        value={type}
        onChange={(e) => onType(e.currentTarget.value as TypeFilter)}
      >
        <option value="all">All types</option>
        <option value="secret">Secrets</option>
        <option value="plain">Plain</option>
      </select>
      <select
        class="input input-sm"
        aria-label="Sort by"
        value={order}
        onChange={(e) => onOrder(e.currentTarget.value as SortOrder)}
      >
        <option value="key">Key A–Z</option>
        <option value="key-desc">Key Z–A</option>
        <option value="updated">Recently updated</option>
        <option value="updated-asc">Least recently updated</option>
      </select>
      <span class="muted small list-count" data-testid="var-count" aria-live="polite">
        {matching === total ? `${total} variable${total === 1 ? '' : 's'}` : `${matching} of ${total}`}
      </span>
    </div>
  );
}

/** Previous / next over pages of PAGE_SIZE rows; nothing when everything fits on one page. */
export function Pager({ page, pages, onPage }: { page: number; pages: number; onPage: (p: number) => void }) {
  if (pages <= 1) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <Button size="sm" disabled={page === 0} onClick={() => onPage(page - 1)}>
        ‹ Previous
      </Button>
      <span class="muted small" data-testid="page-of">
        Page {page + 1} of {pages}
      </span>
      <Button size="sm" disabled={page >= pages - 1} onClick={() => onPage(page + 1)}>
        Next ›
      </Button>
    </nav>
  );
}
