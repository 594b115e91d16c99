import type { Variable } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { RefField } from '../../components/RefField.js';
import { useSubmit } from '../../hooks.js';
import { Button, FormError } from '../../ui.js';

type VarType = Variable['type'];

/**
 * The form above the table that adds one variable. The value field grows into a text area for a multi-line
 * value (a pasted PEM key keeps its lines; Shift+Enter starts one), as Edit's does. A key that already exists is never overwritten
 * silently: the form says so and offers to edit that variable instead, or to overwrite it on
 * an explicit second click (the previous value stays in its history).
 */
export function AddVarRow({
  env,
  existing,
  onAdd,
  onEditExisting,
}: {
  env: string;
  /** The type of the key in the environment's listing, or null when it is not there. */
  existing: (key: string) => VarType | null;
  onAdd: (item: { key: string; value: string; type: VarType }, overwrite: boolean) => Promise<void>;
  /** Opens the existing variable's editor, starting from the value typed here. */
  onEditExisting: (key: string, value: string) => void;
}) {
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [type, setType] = useState<VarType>('secret');
  const [conflict, setConflict] = useState<{ key: string; type: VarType } | null>(null);
  const { busy, error, submit } = useSubmit();
  const clear = () => {
    setKey('');
    setValue('');
    setConflict(null);
  };
  /**
   * After an add answers, empty only the fields that still hold what was sent: a person who already typed
   * the next key while the request was in flight keeps what they typed.
   */
  const clearSent = (sent: { key: string; value: string }) => {
    setKey((k) => (k === sent.key ? '' : k));
    setValue((v) => (v === sent.value ? '' : v));
    setConflict(null);
  };
  const add = (overwrite: boolean) =>
    submit(async () => {
      const current = existing(key);
      if (!overwrite && current) {
        setConflict({ key, type: current });
        return;
      }
      await onAdd({ key, value, type }, overwrite);
      clearSent({ key, value });
    });
  return (
    <form class="add-var" aria-label="Add a variable" onSubmit={add(false)}>
      <input
        class="input mono"
        placeholder="KEY"
        aria-label="New key"
        value={key}
        onInput={(e) => {
          setKey(e.currentTarget.value);
          setConflict(null);
        }}
        required
        pattern="[A-Za-z_][A-Za-z0-9_]*"
        title="Letters, digits and _; not starting with a digit"
      />
      <RefField
        grow
        class="input mono"
        placeholder="value — ${OTHER_KEY}, ${env.KEY}, ${project.env.KEY} reference others"
        aria-label="New value"
        value={value}
        onValue={setValue}
        onKeyDown={(e: KeyboardEvent) => {
          // In the grown field Enter starts a line, as in Edit; Ctrl/Cmd+Enter adds the variable.
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            (e.currentTarget as HTMLElement).closest('form')?.requestSubmit();
          }
        }}
      />
      <select class="input" aria-label="Type" value={type} onChange={(e) => setType(e.currentTarget.value as VarType)}>
        <option value="secret">secret</option>
        <option value="plain">plain</option>
      </select>
      <Button type="submit" variant="primary" busy={busy}>
        Add
      </Button>
      <p class="add-var-hint muted small" data-testid="add-multiline-hint">
        {value.includes('\n')
          ? `${value.split('\n').length} lines: Enter starts a new line, Ctrl+Enter (⌘+Enter) or Add saves.`
          : 'Shift+Enter starts a new line; pasted text keeps its line breaks.'}
      </p>
      {conflict && (
        <div class="add-var-error alert alert-warn" role="alert" data-testid="add-conflict">
          <span>
            <code>{conflict.key}</code> already exists in {env}. Adding would replace its value
            {conflict.type !== type ? ` and make it ${type}` : ''}; the current value stays in its history.
          </span>
          <div class="alert-actions">
            <Button
              size="sm"
              variant="primary"
              onClick={() => {
                onEditExisting(conflict.key, value);
                clear();
              }}
            >
              Edit {conflict.key}
            </Button>
            <Button size="sm" variant="danger" busy={busy} onClick={add(true)}>
              Overwrite
            </Button>
            <Button size="sm" variant="ghost" onClick={() => setConflict(null)}>
              Cancel
            </Button>
          </div>
        </div>
      )}
      {error ? (
        <div class="add-var-error">
          <FormError error={error} />
        </div>
      ) : null}
    </form>
  );
}
