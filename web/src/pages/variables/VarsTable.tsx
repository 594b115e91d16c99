import type { Variable } from '@svcenv/contract';
import type { UpdateVarBody } from '../../api/variables.js';
import { toggled } from '../../lib/sets.js';
import { EditVarRow } from './EditVarRow.js';
import { MyValueRow } from './MyValueRow.js';
import type { PersonalValues } from './usePersonalValues.js';
import type { VarListing } from './useVarListing.js';
import { VarRow } from './VarRow.js';

/** The table of an environment's variables, one of them possibly open for editing. */
export function VarsTable({
  vars,
  listing,
  canWrite,
  keys,
  selected,
  onSelected,
  selectable,
  editing,
  onEditing,
  onSave,
  onCopy,
  onToggleType,
  onHistory,
  onDelete,
  personal,
  env,
}: {
  /** The rows to show (one page of the filtered, sorted listing). */
  vars: Variable[];
  listing: VarListing;
  /** Write on the environment: selection, reveal, edit, type switch and delete are offered only then. */
  canWrite: boolean;
  /** Every key of the environment (references to others resolve to empty). */
  keys: ReadonlySet<string>;
  selected: Set<string>;
  onSelected: (keys: Set<string>) => void;
  /** What "Select all" selects: every row that matches the filters, on every page. */
  selectable: Variable[];
  /** The key open for editing, and the value to start from when it came from "Add" (`initial`). */
  editing: { key: string; initial?: string } | null;
  onEditing: (key: string | null) => void;
  onSave: (key: string, body: UpdateVarBody) => Promise<void>;
  onCopy: (v: Variable) => void;
  onToggleType: (v: Variable) => void;
  onHistory: (key: string) => void;
  onDelete: (key: string) => void;
  /** D75: the viewer's own values; set, edited and removed only where `available`. */
  personal: PersonalValues;
  env: string;
}) {
  const mine = personal.available ? personal : null;
  const allSelected = selectable.length > 0 && selectable.every((v) => selected.has(v.key));
  return (
    // Scrolls on its own (bounded height) so that its header stays in view however long the page is.
    <div class="table-wrap vars-scroll">
      <table class="table vars-table">
        <thead>
          <tr>
            {/* Without write nothing can be done to a selection, so there is none; the empty column keeps the layout. */}
            <th class="col-check">
              {canWrite && (
                <input
                  type="checkbox"
                  aria-label="Select all"
                  title={`Select all ${selectable.length} matching`}
                  checked={allSelected}
                  onChange={() => onSelected(allSelected ? new Set() : new Set(selectable.map((v) => v.key)))}
                />
              )}
            </th>
            <th>Key</th>
            <th>Value</th>
            <th class="col-type">Type</th>
            <th class="col-meta">Updated</th>
            <th class="col-actions">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {vars.map((v) =>
            mine && mine.editing === v.key ? (
              <MyValueRow
                key={v.key}
                v={v}
                env={env}
                existing={!!v.overridden}
                shared={
                  v.overridden ? null : (listing.plain?.get(v.key)?.value ?? (v.type === 'plain' ? v.value : null))
                }
                current={mine.current}
                onCancel={() => mine.open(null)}
                onSave={(value) => mine.save(v.key, value)}
              />
            ) : editing?.key === v.key ? (
              <EditVarRow
                key={v.key}
                v={v}
                // D75: an overridden row shows the viewer's own value, never the team's: that one is not known here.
                plaintext={
                  v.overridden ? null : (listing.plain?.get(v.key)?.value ?? (v.type === 'plain' ? v.value : null))
                }
                {...(v.overridden
                  ? {
                      note: "You see your own value in this row: this edits the team's value, which stays hidden here.",
                    }
                  : {})}
                {...(editing.initial !== undefined ? { initial: editing.initial } : {})}
                onCancel={() => onEditing(null)}
                onSave={(body) => onSave(v.key, body)}
              />
            ) : (
              <VarRow
                key={v.key}
                v={v}
                shown={listing.shown(v)}
                selected={selected.has(v.key)}
                revealed={listing.revealed.has(v.key)}
                revealAll={listing.revealAll}
                revealForbidden={listing.forbiddenReveal}
                canWrite={canWrite}
                keys={keys}
                mine={mine ? { onOpen: () => mine.open(v.key), onRemove: () => mine.remove(v.key) } : undefined}
                actions={{
                  onSelect: () => onSelected(toggled(selected, v.key)),
                  onReveal: () => listing.reveal(v.key),
                  onCopy: () => onCopy(v),
                  onToggleType: () => onToggleType(v),
                  onEdit: () => onEditing(v.key),
                  onHistory: () => onHistory(v.key),
                  onDelete: () => onDelete(v.key),
                }}
              />
            ),
          )}
        </tbody>
      </table>
    </div>
  );
}
