import { listIdentities } from '../../api/identities.js';
import { listProjects } from '../../api/projects.js';
import { useAsync } from '../../hooks.js';

/** The workspace's identities, and the projects they may be limited to (names and environments). */
export function useIdentities() {
  const identities = useAsync(listIdentities, []);
  const projects = useAsync(listProjects, []).data?.projects ?? [];
  const projectName = (id: string | null) =>
    id ? (projects.find((p) => p.id === id)?.name ?? 'a deleted project') : 'All projects';
  return { identities, projects, projectName };
}
