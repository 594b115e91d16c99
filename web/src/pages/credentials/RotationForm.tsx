import type { Project, Rotation } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { putRotation } from '../../api/credentials.js';
import { ModalForm } from '../../components/ModalForm.js';
import { TextField } from '../../components/TextField.js';
import { useSubmit } from '../../hooks.js';
import { ROTATION_MIN_INTERVAL } from '../../lib/credentials.js';
import { Field } from '../../ui.js';
import { ConnectionPicker } from './ConnectionPicker.js';

/**
 * Bind a secret variable to a database user whose password svcenv rotates (D72, write permission): one user,
 * or two taken in turn (`alternate`), every interval or only when asked.
 */
export function RotationForm({
  project,
  env,
  rotation: r,
  onClose,
  onSaved,
}: {
  project: Project;
  env: string;
  rotation?: Rotation | undefined;
  onClose: () => void;
  onSaved: (r: Rotation) => Promise<void>;
}) {
  const [key, setKey] = useState(r?.key ?? '');
  const [connection, setConnection] = useState(r?.connection ?? '');
  const [strategy, setStrategy] = useState<Rotation['strategy']>(r?.strategy ?? 'single');
  const [user, setUser] = useState(r?.strategy === 'alternate' ? (r.usernames[0] ?? '') : (r?.username ?? ''));
  const [user2, setUser2] = useState(r?.usernames[1] ?? '');
  const [interval, setEvery] = useState(r?.intervalSeconds ? String(r.intervalSeconds) : '');
  const { busy, error, submit } = useSubmit();
  const save = submit(async () => {
    const saved = await putRotation(project.id, env, key.trim(), {
      connection: connection.trim(),
      strategy,
      ...(strategy === 'single' ? { username: user.trim() } : { usernames: [user.trim(), user2.trim()] }),
      intervalSeconds: interval.trim() ? Number(interval) : null,
    });
    await onSaved(saved);
  });
  return (
    <ModalForm
      title={r ? `Rotation of ${r.key}` : `Rotate a variable of ${env}`}
      onClose={onClose}
      onSubmit={save}
      busy={busy}
      error={error}
      fields={['key', 'connection', 'username', 'usernames', 'intervalSeconds', 'strategy']}
      submitLabel="Save"
    >
      {!r && (
        <TextField
          label="Variable"
          name="key"
          class="input mono"
          value={key}
          onValue={setKey}
          error={error}
          required
          hint="A secret variable of this environment: it will hold the password."
        />
      )}
      <ConnectionPicker project={project} value={connection} onValue={setConnection} error={error} />
      <Field label="Strategy" name="strategy" error={error}>
        <select
          class="input"
          name="strategy"
          value={strategy}
          onChange={(e) => setStrategy(e.currentTarget.value as Rotation['strategy'])}
        >
          <option value="single">One user: its password changes</option>
          <option value="alternate">Two users in turn: the one not in use changes</option>
        </select>
      </Field>
      <div class={strategy === 'alternate' ? 'form-pair form-even' : 'stack'}>
        <TextField
          label={strategy === 'single' ? 'Database user' : 'First user (in use now)'}
          name={strategy === 'single' ? 'username' : 'usernames'}
          class="input mono"
          value={user}
          onValue={setUser}
          error={error}
          required
        />
        {strategy === 'alternate' && (
          <TextField
            label="Second user"
            name="usernames.1"
            class="input mono"
            value={user2}
            onValue={setUser2}
            error={error}
            required
          />
        )}
      </div>
      <TextField
        label="Every (seconds)"
        name="intervalSeconds"
        class="input mono"
        value={interval}
        onValue={setEvery}
        error={error}
        pattern="[0-9]*"
        hint={`At least ${ROTATION_MIN_INTERVAL} (86400 is a day). Empty: only when someone presses Rotate now.`}
      />
    </ModalForm>
  );
}
