import { Button } from '../../ui.js';

/** What can be done with the checked rows. */
export function BulkBar({ count, onDelete, onClear }: { count: number; onDelete: () => void; onClear: () => void }) {
  return (
    <section class="bulkbar" aria-label="Selection">
      <span>{count} selected</span>
      <Button size="sm" variant="danger" onClick={onDelete}>
        Delete selected
      </Button>
      <Button size="sm" variant="ghost" onClick={onClear}>
        Clear
      </Button>
    </section>
  );
}
