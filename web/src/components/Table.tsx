import type { ComponentChildren } from 'preact';

/** A column heading: its text, or its content with a class of its own. */
export type Column = string | { label: ComponentChildren; class?: string };

/**
 * A table of rows under one heading row, in the scrolling `table-wrap`. `class` is added to `table`
 * (`table-cards` makes each row a card on a phone); `actions` ends the heading with the column of the
 * rows' buttons, named for screen readers only. The children are the rows.
 */
export function Table({
  columns,
  actions,
  class: cls,
  label,
  testId,
  children,
}: {
  columns: Column[];
  actions?: boolean;
  class?: string;
  /** The table's accessible name, when the heading above it does not name it. */
  label?: string;
  testId?: string;
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table class={cls ? `table ${cls}` : 'table'} aria-label={label} data-testid={testId}>
        <thead>
          <tr>
            {columns.map((c, i) =>
              typeof c === 'string' ? (
                <th key={i}>{c}</th>
              ) : (
                <th key={i} class={c.class}>
                  {c.label}
                </th>
              ),
            )}
            {actions && (
              <th>
                <span class="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
