import { listProjects } from '../../api/projects.js';
import { listTokens } from '../../api/tokens.js';
import { useAsync } from '../../hooks.js';

/** The workspace's tokens, and the projects they may be scoped to (for their names and environments). */
export function useTokens() {
  const tokens = useAsync(listTokens, []);
  const projects = useAsync(listProjects, []).data?.projects ?? [];
  const project = (id: string | null) => projects.find((p) => p.id === id);
  const projectName = (id: string | null) => (id ? (project(id)?.name ?? 'a deleted project') : 'All projects');
  return { tokens, projects, project, projectName };
}
