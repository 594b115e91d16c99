import type { AccessToken, Project } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { listProjects } from '../api/projects.js';
import { type CreateTokenBody, createToken, listTokens, revokeToken, rotateToken } from '../api/tokens.js';
import { CliSnippet } from '../components/CliSnippet.js';
import { ModalForm } from '../components/ModalForm.js';
import { useAsync, useSubmit } from '../hooks.js';
import { dateOnly, relativeTime } from '../lib/format.js';
import { useAction, useToast } from '../toast.js';
import type { CreatedToken } from '../types.js';
import { Async, Button, Confirm, Empty, Field, Modal, OnceSecret, PageHeader, Pill } from '../ui.js';

const EXPIRY = [
  { label: '30 days', value: 30 },
  { label: '90 days', value: 90 },
  { label: '1 year', value: 365 },
  { label: 'No expiry', value: null },
] as const;

export function TokensPage() {
  const toast = useToast();
  const act = useAction();
  const tokens = useAsync(listTokens, []);
  const projects = useAsync(listProjects, []);
  const [creating, setCreating] = useState(false);
  const [shown, setShown] = useState<{ title: string; token: string; projectId: string | null; envs: string[] } | null>(
    null,
  );
  const [revoking, setRevoking] = useState<AccessToken | null>(null);
  const projectName = (id: string | null) =>
    id ? (projects.data?.projects.find((p) => p.id === id)?.name ?? 'a deleted project') : 'All projects';
  return (
    <>
      <PageHeader
        title="Access tokens"
        subtitle="For the CLI, CI and the operator. A token can do at most what you can, limited further by its scope."
        actions={
          <Button variant="primary" onClick={() => setCreating(true)}>
            New token
          </Button>
        }
      />
      <Async state={tokens}>
        {({ tokens: list }) =>
          list.length === 0 ? (
            <Empty title="No tokens" action={<Button onClick={() => setCreating(true)}>Create a token</Button>}>
              Create one, then run <code>svcenv login --token …</code> or set <code>SVCENV_TOKEN</code> in CI.
            </Empty>
          ) : (
            <div class="table-wrap">
              <table class="table table-cards tokens-table">
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Token</th>
                    <th>Scope</th>
                    <th>Access</th>
                    <th>Last used</th>
                    <th>Expires</th>
                    <th>
                      <span class="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((t) => {
                    const expired = t.expiresAt && Date.parse(t.expiresAt) < Date.now();
                    return (
                      <tr key={t.id}>
                        <td data-label="Name">
                          <strong>{t.name}</strong>
                          <div class="muted small">created {relativeTime(t.createdAt)}</div>
                        </td>
                        <td data-label="Token">
                          <code>{t.tokenPrefix}…</code>
                        </td>
                        <td data-label="Scope">
                          <Pill tone={t.scope === 'write' ? 'warn' : 'neutral'}>{t.scope}</Pill>
                        </td>
                        <td class="small" data-label="Access">
                          {projectName(t.projectId)}
                          <div class="muted">{t.envs.includes('*') ? 'every environment' : t.envs.join(', ')}</div>
                        </td>
                        <td class="small" data-label="Last used">
                          {relativeTime(t.lastUsedAt)}
                        </td>
                        <td class="small" data-label="Expires">
                          {t.expiresAt ? (
                            expired ? (
                              <Pill tone="bad">expired</Pill>
                            ) : (
                              dateOnly(t.expiresAt)
                            )
                          ) : (
                            <span class="muted">never</span>
                          )}
                        </td>
                        <td class="cell-actions">
                          <div class="row-actions">
                            <Button
                              size="sm"
                              variant="ghost"
                              aria-label={`Rotate ${t.name}`}
                              onClick={() =>
                                act(async () => {
                                  const r = await rotateToken(t.id);
                                  setShown({
                                    title: `${t.name} rotated`,
                                    token: r.token,
                                    projectId: t.projectId,
                                    envs: t.envs,
                                  });
                                  await tokens.reload();
                                })
                              }
                            >
                              Rotate
                            </Button>
                            <Button
                              size="sm"
                              variant="ghost"
                              class="danger-text"
                              aria-label={`Revoke ${t.name}`}
                              onClick={() => setRevoking(t)}
                            >
                              Revoke
                            </Button>
                          </div>
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )
        }
      </Async>
      {creating && (
        <CreateToken
          projects={projects.data?.projects ?? []}
          onClose={() => setCreating(false)}
          onCreated={async (t) => {
            setCreating(false);
            setShown({ title: `Token ${t.name} created`, token: t.token, projectId: t.projectId, envs: t.envs });
            await tokens.reload();
          }}
        />
      )}
      {shown && (
        <Modal
          title={shown.title}
          onClose={() => setShown(null)}
          footer={
            <Button variant="primary" onClick={() => setShown(null)}>
              I have saved it
            </Button>
          }
        >
          <OnceSecret value={shown.token} note="Copy this token now: it is shown only once and cannot be recovered." />
          <CliSnippet project={projects.data?.projects.find((p) => p.id === shown.projectId)} envs={shown.envs} />
        </Modal>
      )}
      {revoking && (
        <Confirm
          title={`Revoke ${revoking.name}?`}
          action="Revoke"
          body={<p>Anything using it stops working on its very next request.</p>}
          onClose={() => setRevoking(null)}
          onConfirm={async () => {
            await revokeToken(revoking.id);
            setRevoking(null);
            toast(`${revoking.name} revoked`);
            await tokens.reload();
          }}
        />
      )}
    </>
  );
}

function CreateToken({
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
      <Field label="Name" name="name" error={error} hint="Where it is used, e.g. github-actions-deploy.">
        <input
          class="input"
          name="name"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
          required
          autofocus
        />
      </Field>
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
      <p class="muted small">read and deploy can pull; write can also push.</p>
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
