import type { Project } from '@svcenv/contract';
import { Field } from '../ui.js';

/** The environments a token or an identity reaches: every one (`["*"]`, D31), or some by name. */
export function EnvsPicker({
  envs,
  onEnvs,
  choices,
}: {
  envs: string[];
  onEnvs: (envs: string[]) => void;
  choices: string[];
}) {
  const toggle = (e: string) => {
    const rest = envs.filter((x) => x !== '*');
    onEnvs(rest.includes(e) ? rest.filter((x) => x !== e) : [...rest, e]);
  };
  return (
    <fieldset class="fieldset">
      <legend>Environments</legend>
      <label class="check">
        <input type="checkbox" checked={envs.includes('*')} onChange={() => onEnvs(envs.includes('*') ? [] : ['*'])} />
        Every environment
      </label>
      {!envs.includes('*') &&
        choices.map((e) => (
          <label key={e} class="check">
            <input type="checkbox" checked={envs.includes(e)} onChange={() => toggle(e)} />
            {e}
          </label>
        ))}
    </fieldset>
  );
}

/**
 * Where a token or an identity reaches: one project or the whole workspace, then its environments (those of the
 * chosen project, or of every project). Choosing another project starts again from every environment.
 */
export function ProjectEnvsPicker({
  projects,
  projectId,
  onProjectId,
  envs,
  onEnvs,
  error,
}: {
  projects: Project[];
  projectId: string;
  onProjectId: (id: string) => void;
  envs: string[];
  onEnvs: (envs: string[]) => void;
  error: unknown;
}) {
  const project = projects.find((p) => p.id === projectId);
  const choices = project ? project.envs : [...new Set(projects.flatMap((p) => p.envs))];
  return (
    <>
      <Field label="Project" name="projectId" error={error}>
        <select
          class="input"
          name="projectId"
          value={projectId}
          onChange={(e) => {
            onProjectId(e.currentTarget.value);
            onEnvs(['*']);
          }}
        >
          <option value="">All projects (workspace-wide)</option>
          {projects.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </Field>
      <EnvsPicker envs={envs} onEnvs={onEnvs} choices={choices} />
    </>
  );
}
