import { restoreVar, varHistory } from '../../api/variables.js';

/**
 * Brings back a deleted key as it was just before it was deleted (D27: the history of a deleted key stays
 * restorable): restores its newest version that is not itself a deletion. The masked history is enough,
 * since only the version's id is needed.
 */
export async function restoreDeleted(projectId: string, env: string, key: string): Promise<void> {
  const { history } = await varHistory(projectId, env, key);
  const last = history.find((h) => h.action !== 'deleted');
  if (!last) throw new Error(`${key} has no earlier version to restore`);
  await restoreVar(projectId, env, key, last.id);
}
