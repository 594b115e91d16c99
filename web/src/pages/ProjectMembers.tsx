import type { Environment, Project } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import {
  clearEnvPermission,
  listProjectMembers,
  removeProjectMember,
  setEnvPermission,
  setProjectRole,
} from '../api/project-members.js';
import { listMembers } from '../api/team.js';
import { ApiError } from '../api.js';
import { Table } from '../components/Table.js';
import { useAsync } from '../hooks.js';
import { type EnvPermission, PERMISSION_HELP, PROTECTED_HELP } from '../lib/access.js';
import { useAction, useToast } from '../toast.js';
import type { ProjectRole } from '../types.js';
import { Async, Button, Empty, ErrorBanner } from '../ui.js';

const ROLES: ProjectRole[] = ['Admin', 'Developer', 'Read-only'];

/** Spec "Authorization layers": the project role's default on an environment. */
export function roleDefault(role: ProjectRole, isProtected: boolean): EnvPermission {
  if (role === 'Admin') return 'write';
  if (role === 'Read-only') return 'read';
  return isProtected ? 'none' : 'write';
}

/** Project roles and per-environment overrides as a grid (D22); Owners and project Admins only. */
export function ProjectMembers({ project, envs }: { project: Project; envs: Environment[] }) {
  const toast = useToast();
  const act = useAction();
  const state = useAsync(() => listProjectMembers(project.id), [project.id]);
  const ws = useAsync(() => listMembers().catch(() => ({ members: [] })), []);
  const [addUser, setAddUser] = useState('');
  const [addRole, setAddRole] = useState<ProjectRole>('Developer');
  const run = (f: () => Promise<unknown>, msg: string) =>
    act(async () => {
      await f();
      await state.reload();
      toast(msg);
    });
  if (state.error instanceof ApiError && state.error.status === 403) {
    return <ErrorBanner error={new Error('Only workspace Owners and project Admins can manage project members.')} />;
  }
  return (
    <section class="panel">
      <Async state={state}>
        {({ members }) => {
          const candidates = (ws.data?.members ?? []).filter((m) => !members.some((pm) => pm.userId === m.id));
          return (
            <>
              <p class="note">
                Workspace Owners see every project. Members see a project once they have a role in it; each cell
                overrides the role's default for one environment.
              </p>
              <PermissionLegend />
              {members.length === 0 ? (
                <Empty title="No project members">Add workspace members below to give them access.</Empty>
              ) : (
                <Table
                  class="grid-table"
                  columns={[
                    'Member',
                    'Role',
                    ...envs.map((e) => ({
                      label: (
                        <>
                          <span class="env-dot" style={{ background: e.color }} aria-hidden="true" /> {e.name}
                          {e.protected && (
                            <span class="protected-badge" title={PROTECTED_HELP}>
                              protected
                            </span>
                          )}
                        </>
                      ),
                    })),
                  ]}
                  actions
                >
                  {members.map((m) => (
                    <tr key={m.userId}>
                      <td>
                        <div>{m.name}</div>
                        <div class="muted small">{m.email}</div>
                      </td>
                      <td>
                        <select
                          class="input input-sm"
                          aria-label={`Role of ${m.name}`}
                          value={m.role}
                          onChange={(e) =>
                            run(
                              () => setProjectRole(project.id, m.userId, e.currentTarget.value as ProjectRole),
                              `${m.name} is now ${e.currentTarget.value}`,
                            )
                          }
                        >
                          {ROLES.map((r) => (
                            <option key={r}>{r}</option>
                          ))}
                        </select>
                      </td>
                      {envs.map((e) => {
                        const override = m.envPermissions[e.name];
                        const def = roleDefault(m.role, e.protected);
                        return (
                          <td key={e.name}>
                            <select
                              class={`input input-sm perm ${override ? 'perm-override' : ''}`}
                              aria-label={`${m.name} on ${e.name}`}
                              value={override ?? ''}
                              onChange={(ev) => {
                                const v = ev.currentTarget.value as EnvPermission | '';
                                void run(
                                  () =>
                                    v
                                      ? setEnvPermission(project.id, m.userId, e.name, v)
                                      : clearEnvPermission(project.id, m.userId, e.name),
                                  `${m.name} on ${e.name}: ${v || `default (${def})`}`,
                                );
                              }}
                            >
                              <option value="" title={PERMISSION_HELP[def]}>
                                default · {def}
                              </option>
                              {(['none', 'read', 'write'] as const).map((p) => (
                                <option key={p} value={p} title={PERMISSION_HELP[p]}>
                                  {p}
                                </option>
                              ))}
                            </select>
                          </td>
                        );
                      })}
                      <td>
                        <Button
                          size="sm"
                          variant="ghost"
                          class="danger-text"
                          onClick={() =>
                            run(
                              () => removeProjectMember(project.id, m.userId),
                              `${m.name} removed from ${project.name}`,
                            )
                          }
                        >
                          Remove
                        </Button>
                      </td>
                    </tr>
                  ))}
                </Table>
              )}
              {candidates.length === 0 ? (
                <p class="note">Every workspace member is in this project. Invite more people from Team.</p>
              ) : (
                <form
                  class="inline-form"
                  onSubmit={(e) => {
                    e.preventDefault();
                    if (!addUser) return;
                    void run(() => setProjectRole(project.id, addUser, addRole), 'Member added').then(() =>
                      setAddUser(''),
                    );
                  }}
                >
                  <select
                    class="input"
                    aria-label="Workspace member"
                    value={addUser}
                    onChange={(e) => setAddUser(e.currentTarget.value)}
                  >
                    <option value="">Add a workspace member…</option>
                    {candidates.map((m) => (
                      <option key={m.id} value={m.id}>
                        {m.name} ({m.email})
                      </option>
                    ))}
                  </select>
                  <select
                    class="input"
                    aria-label="Project role"
                    value={addRole}
                    onChange={(e) => setAddRole(e.currentTarget.value as ProjectRole)}
                  >
                    {ROLES.map((r) => (
                      <option key={r}>{r}</option>
                    ))}
                  </select>
                  <Button type="submit" variant="primary" disabled={!addUser}>
                    Add to project
                  </Button>
                </form>
              )}
            </>
          );
        }}
      </Async>
    </section>
  );
}

/** What read and write allow, where they are granted: read pulls plaintext with a token, yet shows masked here. */
export function PermissionLegend() {
  return (
    <dl class="perm-legend" data-testid="permission-legend">
      <div>
        <dt>read</dt>
        <dd>{PERMISSION_HELP.read}.</dd>
      </div>
      <div>
        <dt>write</dt>
        <dd>{PERMISSION_HELP.write}.</dd>
      </div>
      <div>
        <dt>none</dt>
        <dd>{PERMISSION_HELP.none}.</dd>
      </div>
      <p class="muted small">
        Roles: Admin writes everywhere; Developer writes, except in protected environments where it has no access unless
        granted; Read-only reads.
      </p>
    </dl>
  );
}
