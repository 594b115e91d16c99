import type { Project } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { type CreateTokenBody, createToken } from '../../api/tokens.js';
import { ModalForm } from '../../components/ModalForm.js';
import { NameField } from '../../components/TextField.js';
import { useSubmit } from '../../hooks.js';
import type { CreatedToken } from '../../types.js';
import { Field } from '../../ui.js';

const EXPIRY = [
  { label: '30 days', value: 30 },
  { label: '90 days', value: 90 },
  { label: '1 year', value: 365 },
  { label: 'No expiry', value: null },
] as const;

/** The form of a new token: name, scope, project, environments and expiry. */
export function CreateTokenDialog({
  projects,
  onClose,
  onCreated,
}: {
  projects: Project[];
  onClose: () => void;
  onCreated: (t: CreatedToken) => void;
}) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<'read' | 'write' | 'deploy'>('read');
  const [projectId, setProjectId] = useState('');
  const [envs, setEnvs] = useState<string[]>(['*']);
  const [expiry, setExpiry] = useState<CreateTokenBody['expiresIn']>(90);
  const { busy, error, submit } = useSubmit();
  const project = projects.find((p) => p.id === projectId);
  const envChoices = project ? project.envs : [...new Set(projects.flatMap((p) => p.envs))];
  const toggleEnv = (e: string) => {
    const rest = envs.filter((x) => x !== '*');
    setEnvs(rest.includes(e) ? rest.filter((x) => x !== e) : [...rest, e]);
  };
  return (
    <ModalForm
      title="New access token"
      onClose={onClose}
      onSubmit={submit(async () =>
        onCreated(await createToken({ name, scope, envs, projectId: projectId || null, expiresIn: expiry })),
      )}
      busy={busy}
      error={error}
      fields={['name', 'scope', 'projectId', 'expiresIn']}
      submitLabel="Create token"
      disabled={envs.length === 0}
    >
      <NameField
        hint="Where it is used, e.g. github-actions-deploy."
        value={name}
        onValue={setName}
        error={error}
        required
        autofocus
      />
      <Field label="Scope" name="scope" error={error}>
        <fieldset class="seg">
          <legend class="sr-only">Scope</legend>
          {(['read', 'write', 'deploy'] as const).map((s) => (
            <button type="button" key={s} aria-pressed={scope === s} onClick={() => setScope(s)}>
              {s}
            </button>
          ))}
        </fieldset>
      </Field>
      <p class="muted small" data-testid="scope-help">
        {scope === 'write'
          ? 'write pulls and pushes: it changes values in the environments it reaches.'
          : `${scope} pulls every value in plain text, secrets included, from the environments it reaches where you have read or write, even where this dashboard shows you those values masked. It cannot push.`}{' '}
        A token never does more than you can: it stops at your own permissions.
      </p>
      <Field label="Project" name="projectId" error={error}>
        <select
          class="input"
          name="projectId"
          value={projectId}
          onChange={(e) => {
            setProjectId(e.currentTarget.value);
            setEnvs(['*']);
          }}
        >
          <option value="">All projects (workspace-wide)</option>
          {projects.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </Field>
      <fieldset class="fieldset">
        <legend>Environments</legend>
        <label class="check">
          <input
            type="checkbox"
            checked={envs.includes('*')}
            onChange={() => setEnvs(envs.includes('*') ? [] : ['*'])}
          />
          Every environment
        </label>
        {!envs.includes('*') &&
          envChoices.map((e) => (
            <label key={e} class="check">
              <input type="checkbox" checked={envs.includes(e)} onChange={() => toggleEnv(e)} />
              {e}
            </label>
          ))}
      </fieldset>
      <Field label="Expires" name="expiresIn" error={error}>
        <select
          class="input"
          name="expiresIn"
          value={String(expiry)}
          onChange={(e) =>
            setExpiry(
              e.currentTarget.value === 'null'
                ? null
                : (Number(e.currentTarget.value) as NonNullable<CreateTokenBody['expiresIn']>),
            )
          }
        >
          {EXPIRY.map((x) => (
            <option key={x.label} value={String(x.value)}>
              {x.label}
            </option>
          ))}
        </select>
      </Field>
    </ModalForm>
  );
}
