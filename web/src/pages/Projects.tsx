import type { Project } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { createProject, listProjects } from '../api/projects.js';
import { PALETTE } from '../components/ColorPicker.js';
import { ModalForm } from '../components/ModalForm.js';
import { type ProjectDraft, ProjectFields } from '../components/ProjectFields.js';
import { TextField } from '../components/TextField.js';
import { useAsync, useSubmit } from '../hooks.js';
import { canRead, readableEnvs } from '../lib/access.js';
import { navigate } from '../router.js';
import { isOwner, useSession } from '../session.js';
import { useToast } from '../toast.js';
import { Async, Button, Empty, Link, PageHeader } from '../ui.js';
import { useWorkspaceOwners } from './team/useTeam.js';

export function ProjectsPage() {
  const session = useSession();
  const state = useAsync(listProjects, []);
  const [creating, setCreating] = useState(false);
  return (
    <>
      <PageHeader
        title="Projects"
        subtitle="Each project holds its environments and their variables, encrypted with a key of its own."
        actions={
          <Button variant="primary" onClick={() => setCreating(true)}>
            New project
          </Button>
        }
      />
      <Async state={state}>
        {({ projects }) =>
          projects.length === 0 && !isOwner(session.user) ? (
            <Welcome workspace={session.user.workspaceName} onCreate={() => setCreating(true)} />
          ) : projects.length === 0 ? (
            <Empty
              title="No projects yet"
              action={
                <Button variant="primary" onClick={() => setCreating(true)}>
                  Create your first project
                </Button>
              }
            >
              A project groups the configuration of one service: its environments (dev, staging, prod) and their
              variables.
            </Empty>
          ) : (
            <ul class="card-grid" aria-label="Projects">
              {projects.map((p) => (
                <li key={p.id}>
                  <Link to={`/projects/${p.id}`} class="project-card">
                    <span class="project-stripe" style={{ background: p.color }} />
                    <span class="project-title">
                      <span class="project-dot" style={{ background: p.color }} aria-hidden="true" />
                      {p.name}
                    </span>
                    <code class="project-slug" data-testid={`slug-${p.id}`}>
                      {p.slug}
                    </code>
                    <span class="project-desc muted">{p.desc || 'No description'}</span>
                    <span class="project-envs">
                      {/* D57: an environment the user cannot open is not offered, here as everywhere. */}
                      {readableEnvs(
                        p,
                        p.envs.map((name) => ({ name })),
                      ).map((e) => (
                        <span key={e.name} class="chip">
                          {e.name}
                        </span>
                      ))}
                      {!p.envs.some((e) => canRead(p, e)) && (
                        <span class="muted small">No environment open to you yet</span>
                      )}
                    </span>
                  </Link>
                </li>
              ))}
            </ul>
          )
        }
      </Async>
      {creating && (
        <CreateProject
          onClose={() => setCreating(false)}
          onCreated={(p) => {
            setCreating(false);
            navigate(`/projects/${p.id}`);
          }}
        />
      )}
    </>
  );
}

/**
 * A message to the workspace's Owners, ready in the person's mail program: which workspace, and a line for
 * what they need. A D74 request is made inside a project (to its Admins); someone in none yet asks this way.
 */
function askOwnersLink(emails: string[], workspace: string): string {
  const subject = `Access to a project in ${workspace} (svcenv)`;
  const body = `Hello,\n\nI joined ${workspace} on svcenv and have no project yet. Could you add me to the project I need?\n\nProject and environments:\nWhat for:\n\nThank you`;
  return `mailto:${emails.map(encodeURIComponent).join(',')}?subject=${encodeURIComponent(subject)}&body=${encodeURIComponent(body)}`;
}

/**
 * The first screen of a teammate who was invited and has no project yet: which workspace they joined, and who
 * can give them access (the workspace's Owners, from the members list, which every member may read). Project
 * Admins can too, but a project the person cannot see names no Admin to them.
 */
function Welcome({ workspace, onCreate }: { workspace: string; onCreate: () => void }) {
  const owners = useWorkspaceOwners();
  return (
    <section class="empty welcome" data-testid="member-welcome" aria-labelledby="welcome-title">
      <div class="empty-icon" aria-hidden="true">
        ◇
      </div>
      <h3 id="welcome-title">You were added to {workspace}</h3>
      <p>
        Projects you are given access to appear here. You have none yet: access to a project and its environments is
        granted per person.
      </p>
      <div class="welcome-owners" data-testid="welcome-owners">
        {owners.data && owners.data.length > 0 ? (
          <>
            <p>
              {owners.data.length === 1 ? 'The Owner of this workspace' : 'The Owners of this workspace'} can give it:
            </p>
            <ul aria-label="Workspace Owners">
              {owners.data.map((o) => (
                <li key={o.id}>
                  <strong>{o.name}</strong>{' '}
                  <a class="muted" href={`mailto:${o.email}`}>
                    {o.email}
                  </a>
                </li>
              ))}
            </ul>
          </>
        ) : owners.data || owners.error ? (
          <p>An Owner of this workspace can give it.</p>
        ) : null}
      </div>
      {/*
        Access requests (D74) are made inside a project, to its Admins; a project the person cannot see has no
        request to make, so here it stays with those named above.
      */}
      <div class="welcome-request" data-slot="access-request" data-testid="access-request-slot">
        {owners.data && owners.data.length > 0 && (
          <a
            class="btn btn-primary"
            data-testid="ask-owners"
            href={askOwnersLink(
              owners.data.map((o) => o.email),
              workspace,
            )}
          >
            Ask {owners.data.length === 1 ? owners.data[0]!.name : 'the Owners'} for access
          </a>
        )}
        <p class="small muted">
          Once you are in a project, you can request access to its other environments there, for as long as you need.
        </p>
      </div>
      <p class="small">Or start a project of your own: you become its Admin.</p>
      <Button onClick={onCreate}>Create a project</Button>
    </section>
  );
}

function CreateProject({ onClose, onCreated }: { onClose: () => void; onCreated: (p: Project) => void }) {
  const toast = useToast();
  const [draft, setDraft] = useState<ProjectDraft>({ name: '', desc: '', color: PALETTE[0]! });
  const [envs, setEnvs] = useState('dev, staging, prod');
  const { busy, error, submit } = useSubmit();
  return (
    <ModalForm
      title="New project"
      onClose={onClose}
      busy={busy}
      error={error}
      fields={['name', 'desc', 'color', 'envs']}
      submitLabel="Create project"
      onSubmit={submit(async () => {
        const list = envs
          .split(/[\s,]+/)
          .map((s) => s.trim())
          .filter(Boolean);
        const { name, desc, color } = draft;
        const p = await createProject({
          name,
          ...(desc ? { desc } : {}),
          color,
          ...(list.length ? { envs: list } : {}),
        });
        toast(`Project ${p.name} created`);
        onCreated(p);
      })}
    >
      <ProjectFields
        draft={draft}
        onChange={(patch) => setDraft((d) => ({ ...d, ...patch }))}
        error={error}
        descHint="Optional."
      />
      <TextField
        label="Environments"
        name="envs"
        class="input mono"
        hint="Comma-separated; lower-case letters, digits, - and _. prod and production start protected."
        value={envs}
        onValue={setEnvs}
        error={error}
      />
    </ModalForm>
  );
}
