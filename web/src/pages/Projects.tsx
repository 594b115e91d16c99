import type { Project } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { createProject, listProjects } from '../api/projects.js';
import { PALETTE } from '../components/ColorPicker.js';
import { ModalForm } from '../components/ModalForm.js';
import { type ProjectDraft, ProjectFields } from '../components/ProjectFields.js';
import { TextField } from '../components/TextField.js';
import { useAsync, useSubmit } from '../hooks.js';
import { navigate } from '../router.js';
import { useToast } from '../toast.js';
import { Async, Button, Empty, Link, PageHeader } from '../ui.js';

export function ProjectsPage() {
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
          projects.length === 0 ? (
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
                      {p.envs.map((e) => (
                        <span key={e} class="chip">
                          {e}
                        </span>
                      ))}
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
