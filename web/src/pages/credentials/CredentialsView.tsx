import type { DynamicSecret, Environment, Lease, Project, Rotation } from '@svcenv/contract';
import { useEffect, useState } from 'preact/hooks';
import {
  deleteDynamicSecret,
  deleteRotation,
  listDynamicSecrets,
  listLeases,
  listRotations,
  revokeLease,
  rotateNow,
} from '../../api/credentials.js';
import { EnvTabs } from '../../components/EnvTabs.js';
import { Table } from '../../components/Table.js';
import { useAsync } from '../../hooks.js';
import { canWrite } from '../../lib/access.js';
import { duration, isOpen, LEASE_STATE, revokeFailedWords } from '../../lib/credentials.js';
import { dateTime, relativeTime } from '../../lib/format.js';
import { useAction, useToast } from '../../toast.js';
import { Async, Button, Confirm, Empty, Pill } from '../../ui.js';
import { EnvAccessButton } from '../access/EnvAccessList.js';
import { DynamicSecretForm } from './DynamicSecretForm.js';
import { RotationForm } from './RotationForm.js';

/** Leases and rotations change by themselves (expiry, the revocation job, the schedule): looked at again this often. */
const REFRESH_MS = 15_000;

/**
 * The Credentials tab, per environment: its dynamic secrets (D71) with their leases, and the rotations of its
 * stored credentials (D72). Controls follow D57: declaring, deleting and "Rotate now" need write; revoking a
 * lease needs write or being the one who leased it; anything else is explained, never a surprise 403.
 */
export function CredentialsView({
  project,
  envs,
  env,
  onEnv,
}: {
  project: Project;
  envs: Environment[];
  env: string | null;
  onEnv: (e: string) => void;
}) {
  const current = envs.find((e) => e.name === env);
  return (
    <>
      <EnvTabs envs={envs} current={env} onSelect={onEnv} />
      {current ? (
        <EnvCredentials key={`${project.id}/${current.name}`} project={project} env={current.name} />
      ) : (
        <Empty title="No environments for you">
          You have no access to any environment of this project; a project Admin can grant it.
        </Empty>
      )}
    </>
  );
}

function EnvCredentials({ project, env }: { project: Project; env: string }) {
  const write = canWrite(project, env);
  const dynamic = useAsync(() => listDynamicSecrets(project.id, env), [project.id, env]);
  const rotations = useAsync(() => listRotations(project.id, env), [project.id, env]);
  const [declaring, setDeclaring] = useState<DynamicSecret | 'new' | null>(null);
  const [binding, setBinding] = useState<Rotation | 'new' | null>(null);
  const [tick, setTick] = useState(0);
  const toast = useToast();
  useEffect(() => {
    const timer = setInterval(() => {
      void dynamic.reload();
      void rotations.reload();
      setTick((t) => t + 1);
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [dynamic.reload, rotations.reload]);
  return (
    <div class="stack credentials">
      {/* D76 for project administrators: who else can lease these, beside the environment's name. */}
      <div class="env-heading" data-testid="env-heading">
        <h2 class="env-heading-title">Credentials in {env}</h2>
        <EnvAccessButton project={project} env={env} />
      </div>
      {!write && (
        <p class="note" data-testid="credentials-read-only">
          You have read access to {env}: you can lease these credentials with the CLI (<code>svcenv run</code>,{' '}
          <code>svcenv lease</code>) and revoke your own leases here. Declaring, deleting and rotating need write; ask a
          project Admin.
        </p>
      )}
      <section aria-labelledby="dynamic-title">
        <div class="section-head">
          <div>
            <h2 id="dynamic-title" class="section-title">
              Dynamic secrets
            </h2>
            <p class="muted small">
              Each lease is a database user made for it, removed when the lease ends. Nothing long-lived is stored.
            </p>
          </div>
          {write && <Button onClick={() => setDeclaring('new')}>Declare dynamic secret</Button>}
        </div>
        <Async state={dynamic}>
          {({ dynamicSecrets: list }) =>
            list.length === 0 ? (
              <p class="muted">No dynamic secrets in {env}.</p>
            ) : (
              <ul class="dyn-list">
                {list.map((d) => (
                  <DynamicSecretCard
                    key={d.name}
                    project={project}
                    env={env}
                    secret={d}
                    write={write}
                    tick={tick}
                    onEdit={() => setDeclaring(d)}
                    onChanged={dynamic.reload}
                  />
                ))}
              </ul>
            )
          }
        </Async>
      </section>
      <section aria-labelledby="rotations-title">
        <div class="section-head">
          <div>
            <h2 id="rotations-title" class="section-title">
              Rotations
            </h2>
            <p class="muted small">
              Secret variables whose database password svcenv changes on a schedule, each change a new revision.
            </p>
          </div>
          {write && <Button onClick={() => setBinding('new')}>Rotate a variable</Button>}
        </div>
        <Async state={rotations}>
          {({ rotations: list }) =>
            list.length === 0 ? (
              <p class="muted">No rotations in {env}.</p>
            ) : (
              <RotationsTable
                project={project}
                env={env}
                rotations={list}
                write={write}
                onEdit={setBinding}
                onChanged={rotations.reload}
              />
            )
          }
        </Async>
      </section>
      {declaring && (
        <DynamicSecretForm
          project={project}
          env={env}
          secret={declaring === 'new' ? undefined : declaring}
          onClose={() => setDeclaring(null)}
          onSaved={async (d) => {
            setDeclaring(null);
            toast(`Dynamic secret ${d.name} saved`);
            await dynamic.reload();
          }}
        />
      )}
      {binding && (
        <RotationForm
          project={project}
          env={env}
          rotation={binding === 'new' ? undefined : binding}
          onClose={() => setBinding(null)}
          onSaved={async (r) => {
            setBinding(null);
            toast(`${r.key} rotates with ${r.connection}`);
            await rotations.reload();
          }}
        />
      )}
    </div>
  );
}

function DynamicSecretCard({
  project,
  env,
  secret: d,
  write,
  tick,
  onEdit,
  onChanged,
}: {
  project: Project;
  env: string;
  secret: DynamicSecret;
  write: boolean;
  /** Bumped by the view's timer: the leases are read again. */
  tick: number;
  onEdit: () => void;
  onChanged: () => Promise<void>;
}) {
  const [all, setAll] = useState(false);
  const leases = useAsync(
    () => listLeases(project.id, env, d.name, all ? 'all' : 'open'),
    [project.id, env, d.name, all, tick, d.updatedAt, d.openLeases],
  );
  const [deleting, setDeleting] = useState(false);
  const toast = useToast();
  return (
    <li class="card dyn" data-testid="dynamic-secret" data-name={d.name}>
      <div class="dyn-head">
        <div class="dyn-title">
          <strong>{d.name}</strong>
          {d.revokeFailed > 0 && (
            <Pill tone="bad">
              {d.revokeFailed} revoke{d.revokeFailed === 1 ? '' : 's'} failing
            </Pill>
          )}
        </div>
        {write && (
          <div class="row-actions">
            <Button size="sm" variant="ghost" aria-label={`Edit ${d.name}`} onClick={onEdit}>
              Edit
            </Button>
            <Button
              size="sm"
              variant="ghost"
              class="danger-text"
              aria-label={`Delete ${d.name}`}
              onClick={() => setDeleting(true)}
            >
              Delete
            </Button>
          </div>
        )}
      </div>
      <dl class="dyn-facts small">
        <div>
          <dt>Connection</dt>
          <dd>
            <code>{d.connection}</code> <span class="muted">({d.kind})</span>
          </dd>
        </div>
        <div>
          <dt>Lease time</dt>
          <dd>
            {duration(d.defaultTtlSeconds)}{' '}
            <span class="muted">(at most {duration(d.maxTtlSeconds)} with renewals)</span>
          </dd>
        </div>
        <div>
          <dt>Open leases</dt>
          <dd data-testid="open-leases">
            {d.openLeases} of at most {d.maxLeases}
          </dd>
        </div>
        <div>
          <dt>Variables</dt>
          <dd class="dyn-keys">
            {Object.values(d.keys).map((k) => (
              <code key={k} class="chip">
                {k}
              </code>
            ))}
          </dd>
        </div>
      </dl>
      <div class="dyn-leases-head">
        <h3 class="small">Leases</h3>
        <label class="switch">
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} />
          <span>Show ended</span>
        </label>
      </div>
      <Async state={leases}>
        {({ leases: list }) =>
          list.length === 0 ? (
            <p class="muted small">{all ? 'No leases yet.' : 'No open leases.'}</p>
          ) : (
            <LeasesTable
              project={project}
              env={env}
              secret={d.name}
              leases={list}
              onChanged={async () => {
                await Promise.all([leases.reload(), onChanged()]);
              }}
            />
          )
        }
      </Async>
      {deleting && (
        <Confirm
          title={`Delete ${d.name}?`}
          action="Revoke leases and delete"
          body={
            <p>
              Every open lease of <strong>{d.name}</strong> ({d.openLeases}) is revoked first: its database user is
              removed and whatever uses it is logged out. Then the declaration goes.
            </p>
          }
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            await deleteDynamicSecret(project.id, env, d.name);
            setDeleting(false);
            toast(`${d.name} deleted; its leases were revoked`);
            await onChanged();
          }}
        />
      )}
    </li>
  );
}

function LeasesTable({
  project,
  env,
  secret,
  leases,
  onChanged,
}: {
  project: Project;
  env: string;
  secret: string;
  leases: Lease[];
  onChanged: () => Promise<void>;
}) {
  const act = useAction();
  const toast = useToast();
  const [busy, setBusy] = useState<string | null>(null);
  // D71: the lease's creator or anyone with write may revoke it; the server says which (`mayRevoke`), so a
  // read-only viewer sees the button on their own leases only, whatever names their tokens carry (D57).
  const mayRevoke = (l: Lease) => l.mayRevoke;
  return (
    <Table
      class="table-cards leases-table"
      columns={['User', 'Leased by', 'Created', 'Expires', 'State']}
      actions
      label="Leases"
    >
      {leases.map((l) => {
        const st = LEASE_STATE[l.state];
        return (
          <tr
            key={l.id}
            data-testid="lease-row"
            data-username={l.username}
            class={l.state === 'revoke_failed' ? 'row-problem' : undefined}
          >
            <td data-label="User">
              <code class="break-all">{l.username}</code>
            </td>
            <td class="small" data-label="Leased by">
              {l.createdBy}
            </td>
            <td class="small" data-label="Created" title={dateTime(l.createdAt)}>
              {relativeTime(l.createdAt)}
            </td>
            <td class="small" data-label="Expires" title={dateTime(l.expiresAt)}>
              {isOpen(l.state) ? relativeTime(l.expiresAt) : l.endedAt ? `ended ${relativeTime(l.endedAt)}` : '—'}
            </td>
            <td class="small" data-label="State">
              <span data-testid="lease-state" data-state={l.state}>
                <Pill tone={st.tone}>{st.label}</Pill>
              </span>
              {l.state === 'revoke_failed' && (
                <div class="lease-error" role="alert" data-testid="lease-error">
                  {revokeFailedWords(l.lastError)}
                </div>
              )}
            </td>
            <td class="cell-actions">
              {isOpen(l.state) &&
                (mayRevoke(l) ? (
                  <div class="row-actions">
                    <Button
                      size="sm"
                      variant="ghost"
                      class="danger-text"
                      aria-label={`Revoke ${l.username}`}
                      busy={busy === l.id}
                      onClick={async () => {
                        setBusy(l.id);
                        await act(async () => {
                          await revokeLease(project.id, env, secret, l.id);
                          toast(`${l.username} revoked: the database user is gone`);
                        });
                        setBusy(null);
                        await onChanged();
                      }}
                    >
                      {l.state === 'revoke_failed' ? 'Retry revoke' : 'Revoke'}
                    </Button>
                  </div>
                ) : (
                  <span class="muted small" data-testid="revoke-explained">
                    Its creator or someone with write can revoke it
                  </span>
                ))}
            </td>
          </tr>
        );
      })}
    </Table>
  );
}

function RotationsTable({
  project,
  env,
  rotations,
  write,
  onEdit,
  onChanged,
}: {
  project: Project;
  env: string;
  rotations: Rotation[];
  write: boolean;
  onEdit: (r: Rotation) => void;
  onChanged: () => Promise<void>;
}) {
  const act = useAction();
  const toast = useToast();
  const [busy, setBusy] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<Rotation | null>(null);
  return (
    <>
      <Table
        class="table-cards rotations-table"
        columns={['Variable', 'Connection', 'Schedule', 'Last rotated', 'Next']}
        actions={write}
        testId="rotations"
      >
        {rotations.map((r) => (
          <tr key={r.key} data-testid="rotation-row" class={r.lastError ? 'row-problem' : undefined}>
            <td data-label="Variable">
              <code class="break-all">{r.key}</code>
              <div class="muted small">
                user <code>{r.username}</code>
                {r.strategy === 'alternate' && ` (alternating ${r.usernames.join(' / ')})`}
              </div>
            </td>
            <td data-label="Connection">
              <code>{r.connection}</code>
            </td>
            <td class="small" data-label="Schedule">
              {r.intervalSeconds === null ? 'on demand' : `every ${duration(r.intervalSeconds)}`}
              <div class="muted">{r.strategy === 'single' ? 'single user' : 'two users in turn'}</div>
            </td>
            <td class="small" data-label="Last rotated" data-testid="rotation-last">
              {r.lastRotatedAt ? (
                <span title={dateTime(r.lastRotatedAt)}>{relativeTime(r.lastRotatedAt)}</span>
              ) : (
                'never'
              )}
              {r.lastError && (
                <div class="lease-error" role="alert" data-testid="rotation-error">
                  <Pill tone="bad">failed</Pill> {r.lastError}. The old password still works; svcenv tries again.
                </div>
              )}
            </td>
            <td class="small" data-label="Next">
              {r.nextRotationAt ? (
                <span title={dateTime(r.nextRotationAt)}>{relativeTime(r.nextRotationAt)}</span>
              ) : (
                '—'
              )}
            </td>
            {write && (
              <td class="cell-actions">
                <div class="row-actions">
                  <Button
                    size="sm"
                    aria-label={`Rotate ${r.key} now`}
                    busy={busy === r.key}
                    onClick={async () => {
                      setBusy(r.key);
                      await act(async () => {
                        await rotateNow(project.id, env, r.key);
                        toast(`${r.key} rotated: a new revision holds the new password`);
                      });
                      setBusy(null);
                      await onChanged();
                    }}
                  >
                    Rotate now
                  </Button>
                  <Button size="sm" variant="ghost" aria-label={`Edit rotation of ${r.key}`} onClick={() => onEdit(r)}>
                    Edit
                  </Button>
                  <Button
                    size="sm"
                    variant="ghost"
                    class="danger-text"
                    aria-label={`Stop rotating ${r.key}`}
                    onClick={() => setDeleting(r)}
                  >
                    Stop
                  </Button>
                </div>
              </td>
            )}
          </tr>
        ))}
      </Table>
      {deleting && (
        <Confirm
          title={`Stop rotating ${deleting.key}?`}
          action="Stop rotating"
          body={
            <p>
              The variable keeps its current password, and the database user keeps it too; svcenv no longer changes it.
            </p>
          }
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await deleteRotation(project.id, env, deleting.key);
            setDeleting(null);
            toast(`${deleting.key} no longer rotates`);
            await onChanged();
          }}
        />
      )}
    </>
  );
}
