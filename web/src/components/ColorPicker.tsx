export const PALETTE = [
  '#6366f1',
  '#0ea5e9',
  '#10b981',
  '#f59e0b',
  '#ef4444',
  '#ec4899',
  '#8b5cf6',
  '#14b8a6',
  '#64748b',
];

/** The palette's swatches and a free choice (D21 colours of projects). */
export function ColorPicker({ value, onChange }: { value: string; onChange: (c: string) => void }) {
  return (
    <fieldset class="swatches">
      <legend class="sr-only">Colour</legend>
      {PALETTE.map((c) => (
        <button
          type="button"
          key={c}
          aria-pressed={value.toLowerCase() === c}
          aria-label={c}
          class="swatch"
          style={{ background: c }}
          onClick={() => onChange(c)}
        />
      ))}
      <input
        type="color"
        class="swatch-custom"
        aria-label="Custom colour"
        value={value}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
    </fieldset>
  );
}
