import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { navigate } from '../router.js';
import type { Project } from '../types.js';
import { Async, Button, Empty, Field, FormError, Link, Modal, PageHeader, useAsync, useToast } from '../ui.js';

export const PALETTE = [
  '#6366f1',
  '#0ea5e9',
  '#10b981',
  '#f59e0b',
  '#ef4444',
  '#ec4899',
  '#8b5cf6',
  '#14b8a6',
  '#64748b',
];

export function ColorPicker({ value, onChange }: { value: string; onChange: (c: string) => void }) {
  return (
    <fieldset class="swatches">
      <legend class="sr-only">Colour</legend>
      {PALETTE.map((c) => (
        <button
          type="button"
          key={c}
          aria-pressed={value.toLowerCase() === c}
          aria-label={c}
          class="swatch"
          style={{ background: c }}
          onClick={() => onChange(c)}
        />
      ))}
      <input
        type="color"
        class="swatch-custom"
        aria-label="Custom colour"
        value={value}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
    </fieldset>
  );
}

export function ProjectsPage() {
  const state = useAsync(() => api.get<{ projects: Project[] }>('/projects'), []);
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
  const [name, setName] = useState('');
  const [desc, setDesc] = useState('');
  const [color, setColor] = useState(PALETTE[0]!);
  const [envs, setEnvs] = useState('dev, staging, prod');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  return (
    <Modal title="New project" onClose={onClose}>
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(undefined);
          try {
            const list = envs
              .split(/[\s,]+/)
              .map((s) => s.trim())
              .filter(Boolean);
            const p = await api.post<Project>('/projects', {
              name,
              ...(desc ? { desc } : {}),
              color,
              ...(list.length ? { envs: list } : {}),
            });
            toast(`Project ${p.name} created`);
            onCreated(p);
          } catch (err) {
            setError(err);
            setBusy(false);
          }
        }}
      >
        <Field label="Name" name="name" error={error}>
          <input
            class="input"
            name="name"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            required
            autofocus
          />
        </Field>
        <Field label="Description" name="desc" error={error} hint="Optional.">
          <input class="input" name="desc" value={desc} onInput={(e) => setDesc(e.currentTarget.value)} />
        </Field>
        <Field label="Colour" name="color" error={error}>
          <ColorPicker value={color} onChange={setColor} />
        </Field>
        <Field
          label="Environments"
          name="envs"
          error={error}
          hint="Comma-separated; lower-case letters, digits, - and _. prod and production start protected."
        >
          <input class="input mono" name="envs" value={envs} onInput={(e) => setEnvs(e.currentTarget.value)} />
        </Field>
        <FormError error={error} fields={['name', 'desc', 'color', 'envs']} />
        <div class="row-end">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" busy={busy}>
            Create project
          </Button>
        </div>
      </form>
    </Modal>
  );
}
