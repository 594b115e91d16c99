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
import { DurationSelect, TemporaryGrant } from '../components/Grant.js';
import { ScrollHint } from '../components/ScrollHint.js';
import { Table } from '../components/Table.js';
import { useAsync } from '../hooks.js';
import { type EnvPermission, PERMISSION_HELP, PROTECTED_HELP } from '../lib/access.js';
import { expiryIn, extended } from '../lib/grants.js';
import { useAction, useToast } from '../toast.js';
import type { ProjectRole } from '../types.js';
import { Async, Button, Empty, ErrorBanner } from '../ui.js';
import { EnvAccessList } from './access/EnvAccessList.js';

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
  // D73: how long the grants made here last (a role, an environment permission, a new member); null: permanent.
  const [grantSeconds, setGrantSeconds] = useState<number | null>(null);
  const until = () => expiryIn(grantSeconds);
  const forWhile = () => (grantSeconds === null ? '' : ' (temporary)');
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
              <div class="grant-bar" data-testid="grant-duration">
                <DurationSelect label="New grants last" onSeconds={setGrantSeconds} />
                <span class="muted small">Applies to the roles and permissions you set below.</span>
              </div>
              {members.length === 0 ? (
                <Empty title="No project members">Add workspace members below to give them access.</Empty>
              ) : (
                // One column per environment: on a phone the grid scrolls inside its box, said by the hint.
                <ScrollHint hint="Scroll for more environments">
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
                        <td class="member-cell">
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
                                () =>
                                  setProjectRole(project.id, m.userId, e.currentTarget.value as ProjectRole, until()),
                                `${m.name} is now ${e.currentTarget.value}${forWhile()}`,
                              )
                            }
                          >
                            {ROLES.map((r) => (
                              <option key={r}>{r}</option>
                            ))}
                          </select>
                          <TemporaryGrant
                            expiresAt={m.expiresAt}
                            canChange
                            what={`${m.name}'s membership`}
                            endNote={`${m.name} leaves ${project.name} now, with every permission they have in it.`}
                            onExtend={(sec) =>
                              run(
                                () => setProjectRole(project.id, m.userId, m.role, extended(m.expiresAt!, sec)),
                                `${m.name}'s membership extended`,
                              )
                            }
                            onEnd={() =>
                              run(
                                () => removeProjectMember(project.id, m.userId),
                                `${m.name} removed from ${project.name}`,
                              )
                            }
                          />
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
                                        ? setEnvPermission(project.id, m.userId, e.name, v, until())
                                        : clearEnvPermission(project.id, m.userId, e.name),
                                    `${m.name} on ${e.name}: ${v ? `${v}${forWhile()}` : `default (${def})`}`,
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
                              {override && (
                                <TemporaryGrant
                                  expiresAt={m.envPermissionExpiry[e.name]}
                                  canChange
                                  what={`${m.name}'s ${override} on ${e.name}`}
                                  endNote={`${m.name} is back to the role's default on ${e.name} (${def}).`}
                                  onExtend={(sec) =>
                                    run(
                                      () =>
                                        setEnvPermission(
                                          project.id,
                                          m.userId,
                                          e.name,
                                          override,
                                          extended(m.envPermissionExpiry[e.name]!, sec),
                                        ),
                                      `${m.name} on ${e.name}: extended`,
                                    )
                                  }
                                  onEnd={() =>
                                    run(
                                      () => clearEnvPermission(project.id, m.userId, e.name),
                                      `${m.name} on ${e.name}: ended, default (${def})`,
                                    )
                                  }
                                />
                              )}
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
                </ScrollHint>
              )}
              {candidates.length === 0 ? (
                <p class="note">Every workspace member is in this project. Invite more people from Team.</p>
              ) : (
                <form
                  class="inline-form"
                  onSubmit={(e) => {
                    e.preventDefault();
                    if (!addUser) return;
                    void run(
                      () => setProjectRole(project.id, addUser, addRole, until()),
                      `Member added${forWhile()}`,
                    ).then(() => setAddUser(''));
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
              <EnvAccessList project={project} envs={envs} />
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
