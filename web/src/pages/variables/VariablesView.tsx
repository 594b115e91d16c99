import type { Environment, Project } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { deleteEnv, updateEnv } from '../../api/envs.js';
import { AddEnv } from '../../components/AddEnv.js';
import { EnvTabs } from '../../components/EnvTabs.js';
import { useAction, useToast } from '../../toast.js';
import { Button, Empty, TypedConfirm } from '../../ui.js';
import { EnvPanel } from './EnvPanel.js';

/** The Variables tab: the environments as tabs, the chosen one's variables, and adding or deleting one. */
export function VariablesView({
  project,
  envs,
  env,
  onEnv,
  onEnvsChanged,
  counts,
}: {
  project: Project;
  envs: Environment[];
  env: string | null;
  onEnv: (e: string) => void;
  onEnvsChanged: () => Promise<void>;
  /** Open change requests per environment (D47), shown on the tabs so reviewers see them from here. */
  counts?: Record<string, number>;
}) {
  const toast = useToast();
  // Environment administration is offered only to those the server lets do it (D57).
  const { admin, owner } = project.access;
  const act = useAction();
  const [adding, setAdding] = useState(false);
  const [deletingEnv, setDeletingEnv] = useState(false);
  const current = envs.find((e) => e.name === env);
  return (
    <>
      <EnvTabs
        envs={envs}
        current={env}
        onSelect={onEnv}
        counts={counts}
        {...(admin ? { onAdd: () => setAdding(true) } : {})}
      />
      {!current ? (
        admin ? (
          <Empty title="No environments" action={<Button onClick={() => setAdding(true)}>Add an environment</Button>}>
            Variables live in environments such as dev, staging and prod.
          </Empty>
        ) : (
          <Empty title="No environments for you">
            You have no access to any environment of this project; a project Admin can grant it.
          </Empty>
        )
      ) : (
        <EnvPanel
          key={`${project.id}/${current.name}`}
          project={project}
          env={current}
          envs={envs}
          canProtect={owner}
          canAdminister={admin}
          onToggleProtect={() =>
            act(async () => {
              await updateEnv(project.id, current.name, { protected: !current.protected });
              await onEnvsChanged();
              toast(`${current.name} is ${current.protected ? 'no longer protected' : 'now protected'}`);
            })
          }
          onToggleApproval={() =>
            act(async () => {
              await updateEnv(project.id, current.name, { requireApproval: !current.requireApproval });
              await onEnvsChanged();
              toast(
                current.requireApproval
                  ? `${current.name} no longer requires approval`
                  : `${current.name} now requires approval: others' changes become change requests`,
              );
            })
          }
          onDeleteEnv={() => setDeletingEnv(true)}
          onColor={(color) =>
            act(async () => {
              await updateEnv(project.id, current.name, { color });
              await onEnvsChanged();
            })
          }
        />
      )}
      {adding && (
        <AddEnv
          project={project}
          onClose={() => setAdding(false)}
          onAdded={async (name) => {
            setAdding(false);
            await onEnvsChanged();
            onEnv(name);
            toast(`Environment ${name} added`);
          }}
        />
      )}
      {deletingEnv && current && (
        <TypedConfirm
          title={`Delete environment ${current.name}?`}
          expected={current.name}
          action="Delete environment"
          body={
            <div class="stack-sm" data-testid="delete-env-body">
              <p>
                This permanently deletes <strong>{current.name}</strong>
                {current.protected ? ', a protected environment,' : ''} with:
              </p>
              <ul class="bullets">
                <li>every variable in it, and their values;</li>
                <li>the history of every key, deleted keys included (they can no longer be restored);</li>
                <li>its revisions, so it cannot be rolled back;</li>
                <li>its change requests, open or closed;</li>
                <li>
                  the access of tokens limited to it: they stop working for {current.name} (a token for other
                  environments too keeps those);
                </li>
                <li>per-member permissions set on it.</li>
              </ul>
              <p>
                Services that pull {current.name} will fail. The audit log keeps its entries. This cannot be undone.
              </p>
            </div>
          }
          onClose={() => setDeletingEnv(false)}
          onConfirm={async () => {
            await deleteEnv(project.id, current.name);
            setDeletingEnv(false);
            await onEnvsChanged();
            const next = envs.find((e) => e.name !== current.name);
            if (next) onEnv(next.name);
            toast(`Environment ${current.name} deleted`);
          }}
        />
      )}
    </>
  );
}
