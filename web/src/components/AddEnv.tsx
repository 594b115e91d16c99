import type { Project } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { createEnv } from '../api/envs.js';
import { useSubmit } from '../hooks.js';
import { Field } from '../ui.js';
import { ModalForm } from './ModalForm.js';

/** The dialog that adds an environment to a project. */
export function AddEnv({
  project,
  onClose,
  onAdded,
}: {
  project: Project;
  onClose: () => void;
  onAdded: (name: string) => void;
}) {
  const [name, setName] = useState('');
  const { busy, error, submit } = useSubmit();
  return (
    <ModalForm
      title="Add environment"
      onClose={onClose}
      onSubmit={submit(async () => {
        await createEnv(project.id, name);
        onAdded(name);
      })}
      busy={busy}
      error={error}
      fields={['name']}
      submitLabel="Add environment"
    >
      <Field label="Name" name="name" error={error} hint="Lower-case letters, digits, - and _, e.g. preview or qa.">
        <input
          class="input mono"
          name="name"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
          required
          pattern="[a-z0-9_\-]{1,64}"
          autofocus
        />
      </Field>
    </ModalForm>
  );
}
