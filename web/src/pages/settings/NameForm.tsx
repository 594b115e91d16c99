import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { NameField } from '../../components/TextField.js';
import { useSubmit } from '../../hooks.js';
import { useSession } from '../../session.js';
import { useToast } from '../../toast.js';
import { Button, FormError } from '../../ui.js';
import { SettingsCard } from './SettingsCard.js';

/**
 * A card whose form saves one name (the user's, the workspace's), then re-reads the session so the rest
 * of the page shows it. `readOnly`: shown, not editable, no button. `children` go under the name.
 */
export function NameForm({
  title,
  initial,
  save,
  saved,
  submitLabel,
  hint,
  readOnly,
  children,
}: {
  title: string;
  initial: string;
  save: (name: string) => Promise<unknown>;
  /** The toast once saved. */
  saved: string;
  submitLabel: string;
  hint?: string;
  readOnly?: boolean;
  children?: ComponentChildren;
}) {
  const { refresh } = useSession();
  const toast = useToast();
  const [name, setName] = useState(initial);
  const { busy, error, submit } = useSubmit();
  return (
    <SettingsCard title={title}>
      <form
        class="stack"
        onSubmit={submit(async () => {
          await save(name);
          await refresh();
          toast(saved);
        })}
      >
        <NameField value={name} onValue={setName} error={error} hint={hint} disabled={readOnly} required />
        {children}
        <FormError error={error} fields={['name']} />
        {!readOnly && (
          <div>
            <Button type="submit" busy={busy}>
              {submitLabel}
            </Button>
          </div>
        )}
      </form>
    </SettingsCard>
  );
}
