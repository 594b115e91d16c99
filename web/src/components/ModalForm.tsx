import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { Button, FormError, Modal } from '../ui.js';

/**
 * A dialog holding one form: its fields, the form-level error (unless one of `fields` shows it beside
 * itself) and Cancel beside the primary submit button. Pair it with useSubmit for `onSubmit`, `busy`, `error`.
 * Opening it puts the cursor in its first field (not on the dialog's close button); focus stays inside and
 * returns to the opening control afterwards (Modal).
 */
export function ModalForm({
  title,
  onClose,
  onSubmit,
  busy,
  error,
  fields,
  submitLabel,
  disabled,
  children,
}: {
  title: string;
  onClose: () => void;
  onSubmit: (e: Event) => void;
  busy: boolean;
  error: unknown;
  /** The field names whose <Field> shows an error naming them. */
  fields: string[];
  submitLabel: string;
  disabled?: boolean;
  children: ComponentChildren;
}) {
  const form = useRef<HTMLFormElement>(null);
  // Before the first paint, right after Modal's showModal (a child's layout effect runs first).
  useLayoutEffect(() => {
    const f = form.current;
    if (!f || (document.activeElement && f.contains(document.activeElement))) return;
    f.querySelector<HTMLElement>('input:not([type="hidden"]):not([disabled]), select, textarea')?.focus();
  }, []);
  return (
    <Modal title={title} onClose={onClose}>
      <form class="stack" onSubmit={onSubmit} ref={form}>
        {children}
        <FormError error={error} fields={fields} />
        <div class="row-end">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" busy={busy} disabled={disabled}>
            {submitLabel}
          </Button>
        </div>
      </form>
    </Modal>
  );
}
