/**
 * Change requests of one environment (D47, ADR 0013): opened by whoever may write it, approved or rejected
 * by an Owner or project Admin other than the author, withdrawn by the author while open.
 */
import type { ChangeRequest, ChangeRequestStatus, createChangeRequestBody } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';
import { listRevisions } from './revisions.js';
import { validateQuery, type WriteOptions } from './variables.js';

export type { ChangeRequest, ChangeRequestStatus };
export type ChangeRequestBody = z.input<typeof createChangeRequestBody>;

const one = (projectId: string, env: string, requestId: string) => ({ id: projectId, env, requestId });
/** `reveal=true` answers the proposed values in plaintext (write permission; audited as a reveal). */
const revealQuery = (reveal: boolean) => (reveal ? { reveal: 'true' as const } : {});

/** Newest first, as the server answers; `status` narrows the list. */
export const listChangeRequests = (projectId: string, env: string, status?: ChangeRequestStatus) =>
  api.call(e.listChangeRequests, { params: { id: projectId, env }, query: status ? { status } : {} });

export const getChangeRequest = (projectId: string, env: string, id: string, reveal = false) =>
  api.call(e.getChangeRequest, { params: one(projectId, env, id), query: revealQuery(reveal) });

/**
 * Opens a request. `ifRevision` is the revision the author's listing showed: if the environment moved
 * since, nothing is opened and the server answers 412 PRECONDITION_FAILED (D46). `validate`: D67.
 */
export const openChangeRequest = (
  projectId: string,
  env: string,
  body: ChangeRequestBody,
  ifRevision: number,
  opts?: WriteOptions,
) =>
  api.call(e.openChangeRequest, {
    params: { id: projectId, env },
    query: validateQuery(opts),
    body,
    headers: { 'if-match': `"rev:${ifRevision}"` },
  });

/** Applies every change as one revision; 409 CONFLICT names the keys changed after its base revision. */
export const approveChangeRequest = (projectId: string, env: string, id: string) =>
  api.call(e.approveChangeRequest, { params: one(projectId, env, id) });

export const rejectChangeRequest = (projectId: string, env: string, id: string, reason?: string) =>
  api.call(e.rejectChangeRequest, { params: one(projectId, env, id), body: reason ? { reason } : {} });

/** The author's withdrawal (204). */
export const withdrawChangeRequest = (projectId: string, env: string, id: string) =>
  api.call(e.withdrawChangeRequest, { params: one(projectId, env, id) });

/** The environment's current revision (0 before its first change): what a change request is based on. */
export async function currentRevision(projectId: string, env: string): Promise<number> {
  const { revisions } = await listRevisions(projectId, env, { limit: 1 });
  return revisions[0]?.revision ?? 0;
}
