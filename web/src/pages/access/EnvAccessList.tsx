import type { Environment, Project } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { getEnvAccess } from '../../api/access.js';
import { TimeLeft } from '../../components/Grant.js';
import { Table } from '../../components/Table.js';
import { useAsync } from '../../hooks.js';
import { Async, Button, Empty, Link, Modal, Pill } from '../../ui.js';

const SOURCE_WORDS = {
  owner: 'workspace Owner',
  role: 'project role',
  'env-permission': 'environment permission',
  request: 'access request',
} as const;

/**
 * Whether the viewer may ask D76's list: project administration (a workspace Owner or the project's Admin);
 * anyone else is never offered it (D57), so the list is never a surprise 403.
 */
export const mayListAccess = (project: Project): boolean => project.access.admin;

/**
 * D76: who can read or write one environment now, and why (the source), with when it ends. Project Admins and
 * workspace Owners only: the Members tab, which only they get (D57).
 */
export function EnvAccessList({ project, envs }: { project: Project; envs: Environment[] }) {
  const [env, setEnv] = useState(envs[0]?.name ?? '');
  if (!mayListAccess(project) || envs.length === 0) return null;
  return (
    <section class="env-access" data-testid="env-access">
      <div class="section-head">
        <h2 class="section-title">Who has access</h2>
        <select
          class="input input-sm"
          aria-label="Environment"
          value={env}
          onChange={(e) => setEnv(e.currentTarget.value)}
        >
          {envs.map((e) => (
            <option key={e.name}>{e.name}</option>
          ))}
        </select>
      </div>
      <EnvAccessTable project={project} env={env} />
    </section>
  );
}

/**
 * "Who has access" beside an environment's heading (the Credentials tab, the variables): D76's list in a
 * dialog. Rendered for project Admins and workspace Owners only; for anyone else nothing.
 */
export function EnvAccessButton({ project, env }: { project: Project; env: string }) {
  const [open, setOpen] = useState(false);
  if (!mayListAccess(project)) return null;
  return (
    <>
      <Button size="sm" variant="ghost" onClick={() => setOpen(true)}>
        Who has access
      </Button>
      {open && (
        <Modal title={`Who has access to ${env}`} onClose={() => setOpen(false)} wide>
          <div data-testid="env-access">
            <EnvAccessTable project={project} env={env} />
          </div>
        </Modal>
      )}
    </>
  );
}

/** The list itself: name and email, permission, source (a D74 grant links to its request), when it ends. */
function EnvAccessTable({ project, env }: { project: Project; env: string }) {
  const state = useAsync(
    () => (env ? getEnvAccess(project.id, env) : Promise.resolve({ access: [] })),
    [project.id, env],
  );
  return (
    <>
      <p class="note">Everyone who can read or write {env} now. Tokens act as the person who created them.</p>
      <Async state={state}>
        {({ access }) =>
          access.length === 0 ? (
            <Empty title="Nobody">Nobody can open {env} yet.</Empty>
          ) : (
            <Table class="table-cards" columns={['Person', 'Permission', 'Source', 'Ends']} label={`Access to ${env}`}>
              {access.map((a) => (
                <tr key={a.userId} data-testid="access-row">
                  <td class="cell-head">
                    <div>{a.name}</div>
                    <div class="muted small">{a.email}</div>
                  </td>
                  <td data-label="Permission">
                    <Pill tone={a.permission === 'write' ? 'info' : 'neutral'}>{a.permission}</Pill>
                  </td>
                  <td data-label="Source" data-source={a.source}>
                    {a.source === 'request' && a.requestId ? (
                      <Link to={`/access-requests?request=${a.requestId}`}>{SOURCE_WORDS.request}</Link>
                    ) : (
                      SOURCE_WORDS[a.source]
                    )}
                  </td>
                  <td class="small" data-label="Ends">
                    {a.expiresAt ? <TimeLeft expiresAt={a.expiresAt} /> : <span class="muted">standing</span>}
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Async>
    </>
  );
}
