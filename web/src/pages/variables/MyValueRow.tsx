import type { Variable } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { RefField } from '../../components/RefField.js';
import { unresolvedOf } from '../../components/Unresolved.js';
import { useAsync, useSubmit } from '../../hooks.js';
import { codeTitle } from '../../lib/error-words.js';
import { Button, FormError, Spinner } from '../../ui.js';

/**
 * D75: a row turned into the editor of the viewer's own value of its key (ADR 0031). It says who sees it
 * (only them) and that the team's value stays as it is. Editing an existing one starts from its plaintext (the
 * viewer has write, which revealing needs); a new one starts from the team's value when it is on screen (plain,
 * or revealed), so a local URL is a small change of the shared one, and empty otherwise.
 */
export function MyValueRow({
  v,
  env,
  existing,
  shared,
  current,
  onSave,
  onCancel,
}: {
  v: Variable;
  env: string;
  /** The viewer already has a value of this key (the row is `overridden`). */
  existing: boolean;
  /** The team's value in plain text, when it is known without asking. */
  shared: string | null;
  current: (key: string) => Promise<string | null>;
  onSave: (value: string) => Promise<void>;
  onCancel: () => void;
}) {
  const start = useAsync(
    () => (existing ? current(v.key).catch(() => null) : Promise.resolve(shared)),
    [v.key, existing],
  );
  return (
    <tr class="editing my-value-editing">
      <td class="col-check" />
      <td class="key-cell">
        <code class="var-key">{v.key}</code>
      </td>
      <td colSpan={4}>
        {start.loading ? (
          <Spinner label="Loading your value…" />
        ) : (
          <MyValueForm
            v={v}
            env={env}
            existing={existing}
            initial={start.data ?? null}
            onSave={onSave}
            onCancel={onCancel}
          />
        )}
      </td>
    </tr>
  );
}

function MyValueForm({
  v,
  env,
  existing,
  initial,
  onSave,
  onCancel,
}: {
  v: Variable;
  env: string;
  existing: boolean;
  initial: string | null;
  onSave: (value: string) => Promise<void>;
  onCancel: () => void;
}) {
  const [value, setValue] = useState(initial ?? '');
  const { busy, error, submit } = useSubmit();
  const save = (e?: Event) => {
    e?.preventDefault();
    if (existing && initial !== null && value === initial) return onCancel();
    void submit(() => onSave(value))();
  };
  return (
    <form
      class="edit-var my-value-form"
      onSubmit={save}
      onKeyDown={(e) => e.key === 'Escape' && onCancel()}
      data-testid={`my-value-form-${v.key}`}
    >
      <p class="my-value-note" data-testid="my-value-note">
        <strong>{existing ? 'Your own value' : 'Set your own value'}</strong> of <code>{v.key}</code> in {env}. Only you
        will see it: here, in your pulls and in <code>svcenv run</code> with tokens you created. The team's value is
        unchanged, and everyone else keeps getting it.
      </p>
      <RefField
        multiline
        class="input mono"
        aria-label={`My value of ${v.key}`}
        rows={Math.min(6, Math.max(1, value.split('\n').length))}
        placeholder={existing && initial === null ? 'Enter a new value (your current one is hidden)' : 'Your value'}
        value={value}
        onValue={setValue}
        onKeyDown={(e: KeyboardEvent) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) save();
        }}
        autofocus
      />
      <div class="edit-var-row">
        <span class="muted small">{v.type === 'secret' ? 'Masked like the team’s value: it is a secret.' : ''}</span>
        <div class="toolbar-spacer" />
        <Button onClick={onCancel}>Cancel</Button>
        <Button type="submit" variant="primary" busy={busy}>
          Save my value
        </Button>
      </div>
      <MyValueError error={error} />
    </form>
  );
}

/** The server quotes names between backticks: shown as code. */
function quoted(text: string) {
  return text.split('`').map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : part));
}

/**
 * A refusal in words, nothing saved. D67: a value whose references do not resolve for the viewer (another
 * environment they cannot read, a missing key, a cycle) is refused, one line per reference, with no "Save
 * anyway": a personal value is only ever checked.
 */
function MyValueError({ error }: { error: unknown }) {
  const items = unresolvedOf(error);
  if (!items) return <FormError error={error} />;
  return (
    <div class="alert alert-error" role="alert" data-testid="my-value-unresolved">
      <div>
        <strong class="alert-title" data-code="UNRESOLVED_REFERENCES">
          Not saved:
        </strong>{' '}
        {items.length === 1
          ? 'a reference in your value does not resolve for you.'
          : 'references in your value do not resolve for you.'}
        <ul class="bullets">
          {items.map((u) => (
            <li key={`${u.env}/${u.key}/${u.code}`}>
              <span data-code={u.code}>{codeTitle(u.code)}</span>:{' '}
              {quoted(u.message.startsWith(`${u.key}: `) ? u.message.slice(u.key.length + 2) : u.message)}
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
