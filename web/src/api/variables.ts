/** The variables of one environment, their history, bulk saves and exports (spec "Variable endpoints"). */
import type { bulkUpsertBody, override, updateVarBody } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

/** `reveal=true` answers plaintext (it needs write permission) and is left out otherwise. */
const revealQuery = (reveal: boolean) => (reveal ? { reveal: 'true' as const } : undefined);

export type UpdateVarBody = z.input<typeof updateVarBody>;
/** D75: one of the caller's own values (`orphaned`: the environment no longer has the key). */
export type Override = z.infer<typeof override>;

/** D67: `validate` refuses values whose references do not resolve (422 UNRESOLVED_REFERENCES, nothing saved). */
export interface WriteOptions {
  validate?: boolean;
}
export const validateQuery = (opts?: WriteOptions) => (opts?.validate ? { validate: 'true' as const } : undefined);

export const listVars = (projectId: string, env: string, reveal = false) =>
  api.call(e.listVars, { params: { id: projectId, env }, query: revealQuery(reveal) });

/** Creates or updates the items in every listed environment at once. */
export const upsertVars = (projectId: string, body: z.input<typeof bulkUpsertBody>, opts?: WriteOptions) =>
  api.call(e.bulkUpsert, { params: { id: projectId }, query: validateQuery(opts), body });

export const updateVar = (projectId: string, env: string, key: string, body: UpdateVarBody, opts?: WriteOptions) =>
  api.call(e.updateVar, { params: { id: projectId, env, key }, query: validateQuery(opts), body });

export const deleteVar = (projectId: string, env: string, key: string) =>
  api.call(e.deleteVar, { params: { id: projectId, env, key } });

export const deleteVars = (projectId: string, env: string, keys: string[]) =>
  api.call(e.bulkDelete, { params: { id: projectId, env }, body: { keys } });

export const varHistory = (projectId: string, env: string, key: string, reveal = false) =>
  api.call(e.varHistory, { params: { id: projectId, env, key }, query: revealQuery(reveal) });

export const restoreVar = (projectId: string, env: string, key: string, versionId: number) =>
  api.call(e.restoreVar, { params: { id: projectId, env, key }, body: { versionId } });

/** The file the server renders (D28a context variables included), with the name it gives it. */
export const exportVars = (projectId: string, env: string, format: 'dotenv' | 'k8s', reveal: boolean) =>
  api.download(e.exportVars, { params: { id: projectId, env }, query: { format, ...revealQuery(reveal) } });

/** D75: the caller's own overrides of this environment, masked unless `reveal` (which needs write, ADR 0031). */
export const listOverrides = (projectId: string, env: string, reveal = false) =>
  api.call(e.listOverrides, { params: { id: projectId, env }, query: revealQuery(reveal) });

/** D75: sets the caller's own value of a key (answers `***`); its references are always checked (D67, no bypass). */
export const putOverride = (projectId: string, env: string, key: string, value: string) =>
  api.call(e.putOverride, { params: { id: projectId, env, key }, body: { value } });

export const deleteOverride = (projectId: string, env: string, key: string) =>
  api.call(e.deleteOverride, { params: { id: projectId, env, key } });
