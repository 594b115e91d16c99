/**
 * D74 access requests of one project (a member asks, an Owner or project Admin other than them approves for
 * a while, denies, or the requester withdraws) and D76 who has access to an environment, and why.
 */
import type { AccessEntry, AccessRequest, createAccessRequestBody } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

export type { AccessEntry, AccessRequest };
export type AccessRequestStatus = AccessRequest['status'];

/** The requester's own, or (Admins and Owners) all of the project's; `status` narrows the list. */
export const listAccessRequests = (projectId: string, status?: AccessRequestStatus) =>
  api.call(e.listAccessRequests, { params: { id: projectId }, query: status ? { status } : {} });

export const createAccessRequest = (projectId: string, body: z.input<typeof createAccessRequestBody>) =>
  api.call(e.createAccessRequest, { params: { id: projectId }, body });

/** Without `durationSeconds` the asked duration is granted; longer than asked is refused. */
export const approveAccessRequest = (projectId: string, requestId: string, durationSeconds?: number) =>
  api.call(e.approveAccessRequest, {
    params: { id: projectId, requestId },
    body: durationSeconds ? { durationSeconds } : {},
  });

export const denyAccessRequest = (projectId: string, requestId: string, reason?: string) =>
  api.call(e.denyAccessRequest, { params: { id: projectId, requestId }, body: reason ? { reason } : {} });

export const withdrawAccessRequest = (projectId: string, requestId: string) =>
  api.call(e.withdrawAccessRequest, { params: { id: projectId, requestId } });

/** D76: Admins and Owners only. */
export const getEnvAccess = (projectId: string, env: string) =>
  api.call(e.getEnvAccess, { params: { id: projectId, env } });
