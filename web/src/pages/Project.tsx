import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { Icon } from '../icons.js';
import { navigate } from '../router.js';
import { isOwner, useSession } from '../session.js';
import type { Environment, Project } from '../types.js';
import {
  Async,
  Button,
  ErrorBanner,
  Field,
  FormError,
  Link,
  Modal,
  PageHeader,
  Spinner,
  TypedConfirm,
  useAsync,
  useToast,
} from '../ui.js';
import { AuditView } from './Audit.js';
import { CompareView } from './Compare.js';
import { ProjectMembers } from './ProjectMembers.js';
import { ColorPicker } from './Projects.js';
import { VariablesView } from './Variables.js';

const TABS = [
  { id: 'vars', label: 'Variables' },
  { id: 'compare', label: 'Compare' },
  { id: 'members', label: 'Members' },
  { id: 'audit', label: 'Audit log' },
] as const;

export function ProjectPage({ id, tab, env }: { id: string; tab: string | null; env: string | null }) {
  const project = useAsync(() => api.get<Project>(`/projects/${seg(id)}`), [id]);
  const envs = useAsync(() => api.get<{ envs: Environment[] }>(`/projects/${seg(id)}/envs`), [id]);
  const { user } = useSession();
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const toast = useToast();
  const current = TABS.find((t) => t.id === tab)?.id ?? 'vars';
  const go = (t: string, e?: string | null) =>
    navigate(`/projects/${id}?tab=${t}${e ? `&env=${encodeURIComponent(e)}` : ''}`, true);

  if (project.error) {
    return (
      <>
        <Link to="/projects" class="back">
          ← Projects
        </Link>
        <ErrorBanner error={project.error} onRetry={project.reload} />
      </>
    );
  }
  const p = project.data;
  if (!p) return <Spinner />;
  return (
    <>
      <Link to="/projects" class="back">
        ← Projects
      </Link>
      <PageHeader
        title={
          <span class="title-with-dot">
            <span class="project-dot project-dot-lg" style={{ background: p.color }} aria-hidden="true" />
            {p.name}
          </span>
        }
        subtitle={p.desc || undefined}
        actions={
          <>
            <Button onClick={() => setEditing(true)}>Edit project</Button>
            {isOwner(user) && (
              <Button variant="danger" onClick={() => setDeleting(true)}>
                Delete
              </Button>
            )}
          </>
        }
      />
      <div class="tabs" role="tablist" aria-label="Project sections">
        {TABS.map((t) => (
          <button
            type="button"
            role="tab"
            key={t.id}
            aria-selected={current === t.id}
            class="tab"
            onClick={() => go(t.id, env)}
          >
            {t.label}
          </button>
        ))}
      </div>
      <Async state={envs}>
        {({ envs: list }) => (
          <div role="tabpanel">
            {current === 'vars' && (
              <VariablesView
                project={p}
                envs={list}
                env={env && list.some((e) => e.name === env) ? env : (list[0]?.name ?? null)}
                onEnv={(e) => go('vars', e)}
                onEnvsChanged={async () => {
                  await Promise.all([envs.reload(), project.reload()]);
                }}
              />
            )}
            {current === 'compare' && <CompareView project={p} envs={list} />}
            {current === 'members' && <ProjectMembers project={p} envs={list} />}
            {current === 'audit' && <AuditView path={`/projects/${p.id}/audit`} />}
          </div>
        )}
      </Async>
      {editing && (
        <EditProject
          project={p}
          onClose={() => setEditing(false)}
          onSaved={(np) => {
            project.setData(np);
            setEditing(false);
            toast('Project saved');
          }}
        />
      )}
      {deleting && (
        <TypedConfirm
          title="Delete project"
          expected={p.name}
          action="Delete project"
          body={
            <>
              This permanently deletes <strong>{p.name}</strong> with all its environments, variables, history and audit
              log. Tokens limited to it stop working.
            </>
          }
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            await api.del(`/projects/${seg(p.id)}`);
            toast(`Project ${p.name} deleted`);
            navigate('/projects', true);
          }}
        />
      )}
    </>
  );
}

function EditProject({
  project,
  onClose,
  onSaved,
}: {
  project: Project;
  onClose: () => void;
  onSaved: (p: Project) => void;
}) {
  const [name, setName] = useState(project.name);
  const [desc, setDesc] = useState(project.desc ?? '');
  const [color, setColor] = useState(project.color);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  return (
    <Modal title="Edit project" onClose={onClose}>
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(undefined);
          try {
            onSaved(await api.patch<Project>(`/projects/${seg(project.id)}`, { name, desc, color }));
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
        <Field label="Description" name="desc" error={error}>
          <input class="input" name="desc" value={desc} onInput={(e) => setDesc(e.currentTarget.value)} />
        </Field>
        <Field label="Colour" name="color" error={error}>
          <ColorPicker value={color} onChange={setColor} />
        </Field>
        <FormError error={error} fields={['name', 'desc', 'color']} />
        <div class="row-end">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" busy={busy}>
            Save
          </Button>
        </div>
      </form>
    </Modal>
  );
}

/** Environment tabs in their colours, with the protected lock, and the add button. */
export function EnvTabs({
  envs,
  current,
  onSelect,
  onAdd,
}: {
  envs: Environment[];
  current: string | null;
  onSelect: (e: string) => void;
  onAdd?: () => void;
}) {
  return (
    <div class="env-tabs" role="tablist" aria-label="Environments">
      {envs.map((e) => (
        <button
          type="button"
          role="tab"
          key={e.name}
          aria-selected={current === e.name}
          class="env-tab"
          style={{ borderColor: current === e.name ? e.color : 'transparent' }}
          onClick={() => onSelect(e.name)}
        >
          <span class="env-dot" style={{ background: e.color }} aria-hidden="true" />
          {e.name}
          {e.protected && (
            <span class="protected-badge" title="Protected: Developers have no access by default">
              <Icon name="lock" size={10} />
              protected
            </span>
          )}
        </button>
      ))}
      {onAdd && (
        <button type="button" class="env-tab env-add" onClick={onAdd}>
          + Add environment
        </button>
      )}
    </div>
  );
}

export function AddEnv({
  project,
  onClose,
  onAdded,
}: {
  project: Project;
  onClose: () => void;
  onAdded: (name: string) => void;
}) {
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  return (
    <Modal title="Add environment" onClose={onClose}>
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(undefined);
          try {
            await api.post(`/projects/${seg(project.id)}/envs`, { name });
            onAdded(name);
          } catch (err) {
            setError(err);
            setBusy(false);
          }
        }}
      >
        <Field label="Name" name="name" error={error} hint="Lower-case letters, digits, - and _, e.g. preview or qa.">
          <input
            class="input mono"
            name="name"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            required
            pattern="[a-z0-9_\-]{1,64}"
            autofocus
          />
        </Field>
        <FormError error={error} fields={['name']} />
        <div class="row-end">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" busy={busy}>
            Add environment
          </Button>
        </div>
      </form>
    </Modal>
  );
}
