/** The variables of one environment, their history, bulk saves and exports (spec "Variable endpoints"). */
import type {
  bulkDeleteResponse,
  bulkUpsertBody,
  bulkUpsertResponse,
  HistoryEntry,
  restoreResponse,
  updateVarBody,
  updateVarResponse,
  Variable,
} from '@svcenv/contract';
import type { z } from 'zod';
import { api, path } from '../api.js';

const varsPath = (projectId: string, env: string) => path`/projects/${projectId}/envs/${env}/vars`;
const varPath = (projectId: string, env: string, key: string) => path`/projects/${projectId}/envs/${env}/vars/${key}`;
/** `reveal=true` answers plaintext (it needs write permission) and is left out otherwise. */
const revealQuery = (reveal: boolean) => (reveal ? { reveal: 'true' } : undefined);

export type UpdateVarBody = z.input<typeof updateVarBody>;

/** D67: `validate` refuses values whose references do not resolve (422 UNRESOLVED_REFERENCES, nothing saved). */
export interface WriteOptions {
  validate?: boolean;
}
export const validateQuery = (opts?: WriteOptions) => (opts?.validate ? { validate: 'true' } : undefined);

export const listVars = (projectId: string, env: string, reveal = false) =>
  api.get<{ vars: Variable[] }>(varsPath(projectId, env), revealQuery(reveal));

/** Creates or updates the items in every listed environment at once. */
export const upsertVars = (projectId: string, body: z.input<typeof bulkUpsertBody>, opts?: WriteOptions) =>
  api.post<z.infer<typeof bulkUpsertResponse>>(path`/projects/${projectId}/vars`, body, {
    query: validateQuery(opts),
  });

export const updateVar = (projectId: string, env: string, key: string, body: UpdateVarBody, opts?: WriteOptions) =>
  api.put<z.infer<typeof updateVarResponse>>(varPath(projectId, env, key), body, { query: validateQuery(opts) });

export const deleteVar = (projectId: string, env: string, key: string) => api.del(varPath(projectId, env, key));

export const deleteVars = (projectId: string, env: string, keys: string[]) =>
  api.post<z.infer<typeof bulkDeleteResponse>>(`${varsPath(projectId, env)}:bulkDelete`, { keys });

export const varHistory = (projectId: string, env: string, key: string, reveal = false) =>
  api.get<{ history: HistoryEntry[] }>(`${varPath(projectId, env, key)}/history`, revealQuery(reveal));

export const restoreVar = (projectId: string, env: string, key: string, versionId: number) =>
  api.post<z.infer<typeof restoreResponse>>(`${varPath(projectId, env, key)}/restore`, { versionId });

/** The file the server renders (D28a context variables included), with the name it gives it. */
export const exportVars = (projectId: string, env: string, format: 'dotenv' | 'k8s', reveal: boolean) =>
  api.download(path`/projects/${projectId}/envs/${env}/export`, { format, ...revealQuery(reveal) });
