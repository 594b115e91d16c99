import type { Connection, DynamicSecret, Project } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { putDynamicSecret } from '../../api/credentials.js';
import { ModalForm } from '../../components/ModalForm.js';
import { TextField } from '../../components/TextField.js';
import { useSubmit } from '../../hooks.js';
import { CREATE_EXAMPLE, formatStatements, LEASE_TTL, MAX_LEASES, parseStatements } from '../../lib/credentials.js';
import { Field } from '../../ui.js';
import { ConnectionPicker } from './ConnectionPicker.js';

/**
 * Declare or change a dynamic secret (D71, write permission): its connection, the create statements (and
 * optionally revoke statements) with svcenv's placeholders, the lease times and the cap on open leases.
 */
export function DynamicSecretForm({
  project,
  env,
  secret: d,
  onClose,
  onSaved,
}: {
  project: Project;
  env: string;
  secret?: DynamicSecret | undefined;
  onClose: () => void;
  onSaved: (d: DynamicSecret) => Promise<void>;
}) {
  const [name, setName] = useState(d?.name ?? '');
  const [connection, setConnection] = useState(d?.connection ?? '');
  const [kind, setKind] = useState<Connection['kind']>(d?.kind ?? 'postgres');
  const [create, setCreate] = useState(d ? formatStatements(d.create) : '');
  const [revoke, setRevoke] = useState(d && !d.revokeIsDefault ? formatStatements(d.revoke) : '');
  const [ttl, setTtl] = useState(String(d?.defaultTtlSeconds ?? LEASE_TTL.default));
  const [maxTtl, setMaxTtl] = useState(String(d?.maxTtlSeconds ?? LEASE_TTL.maxDefault));
  const [maxLeases, setMaxLeases] = useState(String(d?.maxLeases ?? MAX_LEASES.default));
  const { busy, error, submit } = useSubmit();
  const save = submit(async () => {
    const revokeList = parseStatements(kind, revoke);
    const saved = await putDynamicSecret(project.id, env, name.trim(), {
      connection: connection.trim(),
      create: parseStatements(kind, create),
      ...(revokeList.length > 0 ? { revoke: revokeList } : d ? { revoke: [] } : {}),
      defaultTtlSeconds: Number(ttl),
      maxTtlSeconds: Number(maxTtl),
      maxLeases: Number(maxLeases),
    });
    await onSaved(saved);
  });
  const statementsHint =
    kind === 'redis'
      ? 'One command per line, its arguments separated by spaces.'
      : 'SQL; end each statement with ; at the end of a line.';
  return (
    <ModalForm
      title={d ? `Edit ${d.name}` : `Declare a dynamic secret in ${env}`}
      onClose={onClose}
      onSubmit={save}
      busy={busy}
      error={error}
      fields={['name', 'connection', 'create', 'revoke', 'defaultTtlSeconds', 'maxTtlSeconds', 'maxLeases']}
      submitLabel={d ? 'Save' : 'Declare'}
    >
      {!d && (
        <TextField
          label="Name"
          name="name"
          class="input mono"
          value={name}
          onValue={setName}
          error={error}
          required
          hint="Lower-case letters, digits, - and _; the variables default to NAME_USERNAME and NAME_PASSWORD."
        />
      )}
      <ConnectionPicker project={project} value={connection} onValue={setConnection} onKind={setKind} error={error} />
      <Field
        label="Create statements"
        name="create"
        error={error}
        hint={
          <>
            {statementsHint} svcenv fills <code>{'{{username}}'}</code>, <code>{'{{password}}'}</code> and{' '}
            <code>{'{{expiration}}'}</code>.
          </>
        }
      >
        <textarea
          class="input statements"
          name="create"
          rows={4}
          required
          spellcheck={false}
          placeholder={CREATE_EXAMPLE[kind]}
          value={create}
          onInput={(e) => setCreate(e.currentTarget.value)}
        />
      </Field>
      <Field label="Revoke statements" name="revoke" error={error} hint="Empty: end the user's sessions and remove it.">
        <textarea
          class="input statements"
          name="revoke"
          rows={2}
          spellcheck={false}
          value={revoke}
          onInput={(e) => setRevoke(e.currentTarget.value)}
        />
      </Field>
      <div class="form-pair form-triple">
        <TextField
          label="Lease time (s)"
          name="defaultTtlSeconds"
          class="input mono"
          value={ttl}
          onValue={setTtl}
          error={error}
          pattern="[0-9]+"
          hint={`At least ${LEASE_TTL.min}.`}
        />
        <TextField
          label="Longest (s)"
          name="maxTtlSeconds"
          class="input mono"
          value={maxTtl}
          onValue={setMaxTtl}
          error={error}
          pattern="[0-9]+"
          hint="With renewals."
        />
        <TextField
          label="Open leases"
          name="maxLeases"
          class="input mono"
          value={maxLeases}
          onValue={setMaxLeases}
          error={error}
          pattern="[0-9]+"
          hint="At most at once."
        />
      </div>
    </ModalForm>
  );
}
