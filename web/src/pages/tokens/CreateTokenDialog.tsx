import type { Project } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { type CreateTokenBody, createToken } from '../../api/tokens.js';
import { CidrField } from '../../components/CidrField.js';
import { ProjectEnvsPicker } from '../../components/EnvsPicker.js';
import { ModalForm } from '../../components/ModalForm.js';
import { NameField } from '../../components/TextField.js';
import { useSubmit } from '../../hooks.js';
import { parseCidrList } from '../../lib/cidrs.js';
import type { CreatedToken } from '../../types.js';
import { Field } from '../../ui.js';

const EXPIRY = [
  { label: '30 days', value: 30 },
  { label: '90 days', value: 90 },
  { label: '1 year', value: 365 },
  { label: 'No expiry', value: null },
] as const;

/** The form of a new token: name, scope, project, environments, expiry and where it may be used from (D62). */
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
  const [cidrs, setCidrs] = useState('');
  const { busy, error, submit } = useSubmit();
  const trusted = parseCidrList(cidrs);
  return (
    <ModalForm
      title="New access token"
      onClose={onClose}
      onSubmit={submit(async () =>
        onCreated(
          await createToken({
            name,
            scope,
            envs,
            projectId: projectId || null,
            expiresIn: expiry,
            trustedCidrs: trusted.list ?? [],
          }),
        ),
      )}
      busy={busy}
      error={error}
      fields={['name', 'scope', 'projectId', 'expiresIn', 'trustedCidrs']}
      submitLabel="Create token"
      disabled={envs.length === 0 || trusted.error !== undefined}
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
      <ProjectEnvsPicker
        projects={projects}
        projectId={projectId}
        onProjectId={setProjectId}
        envs={envs}
        onEnvs={setEnvs}
        error={error}
      />
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
      <CidrField value={cidrs} onValue={setCidrs} error={error} />
    </ModalForm>
  );
}
