import type { Project } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { createEnv } from '../api/envs.js';
import { useSubmit } from '../hooks.js';
import { ModalForm } from './ModalForm.js';
import { NameField } from './TextField.js';

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
      <NameField
        class="input mono"
        hint="Lower-case letters, digits, - and _, e.g. preview or qa."
        value={name}
        onValue={setName}
        error={error}
        required
        pattern="[a-z0-9_\-]{1,64}"
        autofocus
      />
    </ModalForm>
  );
}
