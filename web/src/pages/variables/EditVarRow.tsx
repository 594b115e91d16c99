import type { Variable } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import type { UpdateVarBody } from '../../api/variables.js';
import { RefField } from '../../components/RefField.js';
import { useSubmit } from '../../hooks.js';
import { expiresIn } from '../../lib/format.js';
import { Button, FormError, Pill } from '../../ui.js';

type VarType = Variable['type'];

function toDateInput(ts: string | null): string {
  return ts ? ts.slice(0, 10) : '';
}

/**
 * A row turned into its edit form. Without reveal permission `plaintext` is null and the field starts
 * empty (ADR 0006): the value is never shown, and an empty field with no other change sends nothing.
 */
export function EditVarRow({
  v,
  plaintext,
  initial,
  note,
  onSave,
  onCancel,
}: {
  v: Variable;
  plaintext: string | null;
  /** The value to start from instead of the current one: what was typed into "Add" for an existing key. */
  initial?: string;
  /** A sentence above the field (D75: an overridden row edits the team's value, not the one shown). */
  note?: string;
  onSave: (body: UpdateVarBody) => Promise<void>;
  onCancel: () => void;
}) {
  const [value, setValue] = useState(initial ?? plaintext ?? '');
  const [type, setType] = useState<VarType>(v.type);
  const [expiry, setExpiry] = useState(toDateInput(v.expiresAt));
  const { busy, error, submit } = useSubmit();
  const save = (e?: Event) => {
    e?.preventDefault();
    const body: UpdateVarBody = {};
    if (plaintext === null ? value !== '' : value !== plaintext) body.value = value;
    if (type !== v.type) body.type = type;
    if (expiry !== toDateInput(v.expiresAt)) {
      if (expiry) body.expiresAt = new Date(`${expiry}T00:00:00`).toISOString();
      else body.clearExpiry = true;
    }
    if (Object.keys(body).length === 0) return onCancel();
    void submit(() => onSave(body))();
  };
  return (
    <tr class="editing">
      <td class="col-check" />
      <td class="key-cell">
        <code class="var-key">{v.key}</code>
      </td>
      <td colSpan={4}>
        <form class="edit-var" onSubmit={save} onKeyDown={(e) => e.key === 'Escape' && onCancel()}>
          {note && (
            <p class="note" data-testid="edit-team-note">
              {note}
            </p>
          )}
          <RefField
            multiline
            class="input mono"
            aria-label={`Value of ${v.key}`}
            rows={Math.min(6, Math.max(1, value.split('\n').length))}
            placeholder={
              plaintext === null ? `Enter a new ${note ? "team's " : ''}value (the current one is hidden)` : ''
            }
            value={value}
            onValue={setValue}
            onKeyDown={(e: KeyboardEvent) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) save();
            }}
            autofocus
          />
          <div class="edit-var-row">
            <label class="inline-field">
              Type
              <select class="input" value={type} onChange={(e) => setType(e.currentTarget.value as VarType)}>
                <option value="secret">secret</option>
                <option value="plain">plain</option>
              </select>
            </label>
            <label class="inline-field">
              Expires
              <input
                class="input"
                type="date"
                aria-label={`Expiry of ${v.key}`}
                value={expiry}
                onInput={(e) => setExpiry(e.currentTarget.value)}
              />
            </label>
            {expiry && (
              <button type="button" class="linklike" onClick={() => setExpiry('')}>
                No expiry
              </button>
            )}
            {expiry && <Pill tone="neutral">{expiresIn(new Date(`${expiry}T00:00:00`).toISOString()).label}</Pill>}
            <div class="toolbar-spacer" />
            <Button onClick={onCancel}>Cancel</Button>
            <Button type="submit" variant="primary" busy={busy}>
              Save
            </Button>
          </div>
          <FormError error={error} />
        </form>
      </td>
    </tr>
  );
}
