import type { Connection } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { createConnection, updateConnection } from '../../api/credentials.js';
import { ModalForm } from '../../components/ModalForm.js';
import { NameField, TextField } from '../../components/TextField.js';
import { useSubmit } from '../../hooks.js';
import { DEFAULT_PORTS, KIND_LABEL } from '../../lib/credentials.js';
import { Field } from '../../ui.js';

type Kind = Connection['kind'];
type Mode = Connection['tls']['mode'];

/**
 * Add or edit a connection (D70). The password is write-only: never shown, not even as dots; editing leaves
 * its field empty, and a PATCH without it keeps the stored one. Name and kind are fixed once created.
 */
export function ConnectionForm({
  projectId,
  connection: c,
  onClose,
  onSaved,
}: {
  projectId: string;
  connection?: Connection | undefined;
  onClose: () => void;
  onSaved: (c: Connection) => Promise<void>;
}) {
  const [name, setName] = useState(c?.name ?? '');
  const [kind, setKind] = useState<Kind>(c?.kind ?? 'postgres');
  const [host, setHost] = useState(c?.host ?? '');
  const [port, setPort] = useState(c ? String(c.port) : '');
  const [database, setDatabase] = useState(c?.database ?? '');
  const [username, setUsername] = useState(c?.username ?? '');
  const [password, setPassword] = useState('');
  const [mode, setMode] = useState<Mode>(c?.tls.mode ?? 'require');
  const [ca, setCa] = useState(c?.tls.ca ?? '');
  const { busy, error, submit } = useSubmit();
  const save = submit(async () => {
    const common = {
      host: host.trim(),
      ...(port.trim() ? { port: Number(port) } : {}),
      database: kind === 'redis' ? null : database.trim() || null,
      username: username.trim(),
      tls: { mode, ca: mode === 'verify' && ca.trim() ? ca.trim() : null },
    };
    const saved = c
      ? await updateConnection(projectId, c.name, { ...common, ...(password ? { password } : {}) })
      : await createConnection(projectId, { name: name.trim(), kind, ...common, password });
    await onSaved(saved);
  });
  return (
    <ModalForm
      title={c ? `Edit ${c.name}` : 'Add connection'}
      onClose={onClose}
      onSubmit={save}
      busy={busy}
      error={error}
      fields={['name', 'kind', 'host', 'port', 'database', 'username', 'password', 'tls', 'tls.mode', 'tls.ca']}
      submitLabel={c ? 'Save' : 'Add connection'}
    >
      {!c && (
        <>
          <NameField
            value={name}
            onValue={setName}
            error={error}
            class="input mono"
            required
            hint="Lower-case letters, digits and -; dynamic secrets and rotations name it."
          />
          <Field label="Kind" name="kind" error={error}>
            <select class="input" name="kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
              {(Object.keys(KIND_LABEL) as Kind[]).map((k) => (
                <option key={k} value={k}>
                  {KIND_LABEL[k]}
                </option>
              ))}
            </select>
          </Field>
        </>
      )}
      <div class="form-pair">
        <TextField label="Host" name="host" class="input mono" value={host} onValue={setHost} error={error} required />
        <TextField
          label="Port"
          name="port"
          class="input mono"
          value={port}
          onValue={setPort}
          error={error}
          pattern="[0-9]{1,5}"
          hint={`Default ${DEFAULT_PORTS[kind]}`}
        />
      </div>
      {kind !== 'redis' && (
        <TextField
          label="Database"
          name="database"
          class="input mono"
          value={database}
          onValue={setDatabase}
          error={error}
          hint={kind === 'postgres' ? 'Default postgres.' : 'Optional.'}
        />
      )}
      <TextField
        label="Username"
        name="username"
        class="input mono"
        value={username}
        onValue={setUsername}
        error={error}
        autocomplete="off"
        required
        hint="A user that may create, change and remove other users."
      />
      <TextField
        label="Password"
        name="password"
        type="password"
        value={password}
        onValue={setPassword}
        error={error}
        autocomplete="new-password"
        required={!c}
        hint={
          c
            ? 'Stored and never shown. Leave empty to keep it; type a new one to replace it.'
            : 'Sealed with the project key; never shown again, logged or audited.'
        }
      />
      <Field label="TLS" name="tls.mode" error={error}>
        <select class="input" name="tls" value={mode} onChange={(e) => setMode(e.currentTarget.value as Mode)}>
          <option value="require">Require TLS</option>
          <option value="verify">Require TLS and verify the certificate</option>
          <option value="disable">No TLS (loopback hosts only)</option>
        </select>
      </Field>
      {mode === 'verify' && (
        <Field label="Certificate authority (PEM)" name="tls.ca" error={error} hint="Empty: the system's roots.">
          <textarea
            class="input mono"
            name="ca"
            rows={3}
            placeholder="-----BEGIN CERTIFICATE-----"
            value={ca}
            onInput={(e) => setCa(e.currentTarget.value)}
          />
        </Field>
      )}
    </ModalForm>
  );
}
