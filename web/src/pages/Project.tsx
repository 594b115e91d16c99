import type { Project } from '@svcenv/contract';
import { useEffect, useState } from 'preact/hooks';
import { findProjectWorkspace } from '../api/account.js';
import { switchWorkspace } from '../api/auth.js';
import { listEnvs } from '../api/envs.js';
import { deleteProject, getProject, updateProject } from '../api/projects.js';
import { ApiError, onRefused, setToken } from '../api.js';
import { ModalForm } from '../components/ModalForm.js';
import { type ProjectDraft, ProjectFields } from '../components/ProjectFields.js';
import { TextField } from '../components/TextField.js';
import { useAsync, useSubmit } from '../hooks.js';
import { canRead, hiddenEnvsNote, readableEnvs } from '../lib/access.js';
import { navigate } from '../router.js';
import { useSession } from '../session.js';
import { useToast } from '../toast.js';
import { Async, Button, ErrorBanner, Link, PageHeader, Spinner, TypedConfirm } from '../ui.js';
import { AuditView } from './Audit.js';
import { RequestAccessPanel } from './access/RequestAccess.js';
import { CompareView } from './Compare.js';
import { ChangeRequestsView } from './change-requests/ChangeRequestsView.js';
import { useOpenCounts } from './change-requests/open-counts.js';
import { ConnectionsView } from './credentials/ConnectionsView.js';
import { CredentialsView } from './credentials/CredentialsView.js';
import { OverviewView } from './overview/OverviewView.js';
import { ProjectMembers } from './ProjectMembers.js';
import { RevisionsView } from './revisions/RevisionsView.js';
import { VariablesView } from './variables/VariablesView.js';

/**
 * `admin`: the tab needs project administration (members are managed by Owners and project Admins, D22;
 * the project audit log is theirs too), so others never get a tab whose first request is refused.
 */
const TABS = [
  { id: 'vars', label: 'Variables', admin: false },
  { id: 'overview', label: 'Overview', admin: false },
  { id: 'compare', label: 'Compare', admin: false },
  { id: 'revisions', label: 'Revisions', admin: false },
  { id: 'requests', label: 'Change requests', admin: false },
  // D71, D72: every reader sees the environment's dynamic secrets and rotations; D70's connections are the
  // Admins' (D57: the tab is not offered to anyone the server would refuse).
  { id: 'credentials', label: 'Credentials', admin: false },
  { id: 'members', label: 'Members', admin: true },
  { id: 'connections', label: 'Connections', admin: true },
  { id: 'audit', label: 'Audit log', admin: true },
] as const;

export function ProjectPage({
  id,
  tab,
  env,
  request = null,
}: {
  id: string;
  tab: string | null;
  env: string | null;
  /** A change request to open (a link from the audit log), on the Change requests tab. */
  request?: string | null;
}) {
  const project = useAsync(() => getProject(id), [id]);
  const envs = useAsync(() => listEnvs(id), [id]);
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const toast = useToast();
  const access = project.data?.access;
  // Open change requests per readable environment (D47): the badge on the tab and on its environment tabs.
  const open = useOpenCounts(
    id,
    project.data && envs.data ? readableEnvs(project.data, envs.data.envs).map((e) => e.name) : [],
  );
  // An environment refused while the page was open (a grant ended, a permission lowered): the project's
  // access is read again, so the environment becomes a closed one with its request card (D74) instead of a
  // refusal inside the tab. At most once per environment in 10 s, should the server keep refusing one it lists.
  const reloadProject = project.reload;
  useEffect(() => {
    const last = new Map<string, number>();
    return onRefused((path) => {
      const m = new RegExp(`^/v1/projects/${id}/envs/([^/?]+)`).exec(path);
      if (!m?.[1]) return;
      const now = Date.now();
      if (now - (last.get(m[1]) ?? 0) < 10_000) return;
      last.set(m[1], now);
      void reloadProject();
    });
  }, [id, reloadProject]);
  const tabs = TABS.filter((t) => !t.admin || access?.admin);
  const current = tabs.find((t) => t.id === tab)?.id ?? 'vars';
  const go = (t: string, e?: string | null) =>
    navigate(`/projects/${id}?tab=${t}${e ? `&env=${encodeURIComponent(e)}` : ''}`, true);

  if (project.error) {
    return (
      <>
        <Link to="/projects" class="back">
          ← Projects
        </Link>
        <ProjectNotHere id={id} error={project.error} onRetry={project.reload} />
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
        subtitle={
          <>
            {/* D48: the slug names the project in the CLI (--project) and in cross-project references. */}
            <code
              class="project-slug"
              title="Slug: use it with --project and in ${slug.env.KEY}"
              data-testid="project-slug"
            >
              {p.slug}
            </code>
            {p.desc ? ` · ${p.desc}` : ''}
          </>
        }
        actions={
          <>
            {p.access.admin && <Button onClick={() => setEditing(true)}>Edit project</Button>}
            {p.access.owner && (
              <Button variant="danger" onClick={() => setDeleting(true)}>
                Delete
              </Button>
            )}
          </>
        }
      />
      <div class="tabs" role="tablist" aria-label="Project sections">
        {tabs.map((t) => (
          <button
            type="button"
            role="tab"
            key={t.id}
            aria-selected={current === t.id}
            class="tab"
            onClick={() => go(t.id, env)}
          >
            {t.label}
            {t.id === 'requests' && open.total > 0 && (
              <span class="count-badge" data-testid="open-requests" title="Open change requests">
                {open.total}
              </span>
            )}
          </button>
        ))}
      </div>
      <Async state={envs}>
        {({ envs: all }) => {
          // Environments the user cannot even read are not offered (D57); a note says they exist.
          const list = readableEnvs(p, all);
          const hidden = hiddenEnvsNote(p, all);
          const closed = all.filter((e) => !canRead(p, e.name)).map((e) => e.name);
          // An environment asked for by name (a link) that the user cannot open: said, with a way to ask (D74).
          const refused = env && closed.includes(env) ? env : null;
          return (
            <div role="tabpanel">
              {hidden && current !== 'members' && current !== 'audit' && current !== 'connections' && (
                <>
                  <p class="note" data-testid="hidden-envs">
                    {hidden}
                  </p>
                  <RequestAccessPanel project={p} envs={closed} focus={refused} />
                </>
              )}
              {current === 'vars' && (
                <VariablesView
                  project={p}
                  envs={list}
                  env={env && list.some((e) => e.name === env) ? env : (list[0]?.name ?? null)}
                  onEnv={(e) => go('vars', e)}
                  counts={open.counts}
                  onEnvsChanged={async () => {
                    await Promise.all([envs.reload(), project.reload()]);
                  }}
                />
              )}
              {current === 'overview' && <OverviewView project={p} envs={list} />}
              {current === 'compare' && <CompareView project={p} envs={list} />}
              {current === 'revisions' && (
                <RevisionsView
                  project={p}
                  envs={list}
                  env={env && list.some((e) => e.name === env) ? env : (list[0]?.name ?? null)}
                  onEnv={(e) => go('revisions', e)}
                  onRolledBack={(e, res, target) => {
                    // The restored variables are the confirmation: show them, with the revision it made.
                    toast(
                      res.created.length + res.updated.length + res.deleted.length === 0
                        ? `${e} already matched revision ${target}; nothing changed`
                        : `${e} rolled back to revision ${target}: now revision ${res.revision}`,
                    );
                    go('vars', e);
                  }}
                />
              )}
              {current === 'requests' && (
                <ChangeRequestsView
                  project={p}
                  envs={list}
                  env={env && list.some((e) => e.name === env) ? env : (list[0]?.name ?? null)}
                  onEnv={(e) => go('requests', e)}
                  counts={open.counts}
                  onApplied={(e) => go('vars', e)}
                  request={request}
                  onRequestClosed={() => go('requests', env)}
                />
              )}
              {current === 'credentials' && (
                <CredentialsView
                  project={p}
                  envs={list}
                  env={env && list.some((e) => e.name === env) ? env : (list[0]?.name ?? null)}
                  onEnv={(e) => go('credentials', e)}
                />
              )}
              {current === 'members' && <ProjectMembers project={p} envs={all} />}
              {current === 'connections' && <ConnectionsView project={p} />}
              {current === 'audit' && (
                <AuditView projectId={p.id} fileName={p.slug} canOpen={(e) => list.some((x) => x.name === e)} />
              )}
            </div>
          );
        }}
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
            await deleteProject(p.id);
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
  const [draft, setDraft] = useState<ProjectDraft>({
    name: project.name,
    desc: project.desc ?? '',
    color: project.color,
  });
  const [slug, setSlug] = useState(project.slug);
  const { busy, error, submit } = useSubmit();
  return (
    <ModalForm
      title="Edit project"
      onClose={onClose}
      onSubmit={submit(async () =>
        onSaved(await updateProject(project.id, { ...draft, ...(slug !== project.slug ? { slug } : {}) })),
      )}
      busy={busy}
      error={error}
      fields={['name', 'desc', 'color', 'slug']}
      submitLabel="Save"
    >
      <ProjectFields draft={draft} onChange={(patch) => setDraft((d) => ({ ...d, ...patch }))} error={error} />
      <TextField
        label="Slug"
        name="slug"
        class="input mono"
        hint="Lower-case letters, digits and -; what --project and ${slug.env.KEY} use. Renaming breaks both."
        value={slug}
        onValue={setSlug}
        error={error}
      />
    </ModalForm>
  );
}

/**
 * D68: a project this workspace does not have (404) may be one of the user's other workspaces' (a link a
 * teammate shared): the server says which one, if any, holds a project the user can see there, and the
 * dashboard switches to it; the page then loads the project in that session. Anything else stays the error.
 */
function ProjectNotHere({ id, error, onRetry }: { id: string; error: unknown; onRetry: () => void }) {
  const { user } = useSession();
  const toast = useToast();
  const notFound = error instanceof ApiError && error.status === 404;
  const [looking, setLooking] = useState(notFound);
  useEffect(() => {
    if (!notFound) return;
    let live = true;
    setLooking(true);
    (async () => {
      const found = await findProjectWorkspace(id);
      if (!live || found.workspaceId === user.workspaceId) return setLooking(false);
      const res = await switchWorkspace(found.workspaceId);
      if (!live) return;
      // The new session re-renders the app in that workspace, and this page loads the project there.
      setToken(res.token);
      toast(`Switched to ${res.workspaceName}, where this project is`);
    })().catch(() => live && setLooking(false));
    return () => {
      live = false;
    };
  }, [id, notFound, user.workspaceId]);
  if (looking) return <Spinner label="Looking for this project in your other workspaces…" />;
  return <ErrorBanner error={error} onRetry={onRetry} />;
}
