/**
 * D70-D72: a project's connections to managed databases (Owners and project Admins), an environment's dynamic
 * secrets and their leases, and the rotations of stored credentials. A connection's password is sent, never
 * answered; a lease's values are in its create answer only (the dashboard never leases).
 */
import type {
  createConnectionBody,
  putDynamicSecretBody,
  putRotationBody,
  updateConnectionBody,
} from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

export type CreateConnectionBody = z.input<typeof createConnectionBody>;
export type UpdateConnectionBody = z.input<typeof updateConnectionBody>;
export type PutDynamicSecretBody = z.input<typeof putDynamicSecretBody>;
export type PutRotationBody = z.input<typeof putRotationBody>;

export const listConnections = (id: string) => api.call(e.listConnections, { params: { id } });

export const createConnection = (id: string, body: CreateConnectionBody) =>
  api.call(e.createConnection, { params: { id }, body });

/** Without `password` the stored one is kept (D70). */
export const updateConnection = (id: string, name: string, body: UpdateConnectionBody) =>
  api.call(e.updateConnection, { params: { id, name }, body });

export const deleteConnection = (id: string, name: string) => api.call(e.deleteConnection, { params: { id, name } });

/** Logs in and out: `{ok, message}`, the message in words. */
export const testConnection = (id: string, name: string) => api.call(e.testConnection, { params: { id, name } });

/** A new random password for the connection's own user, kept only by svcenv. */
export const rotateConnectionRoot = (id: string, name: string) =>
  api.call(e.rotateConnectionRoot, { params: { id, name } });

export const listDynamicSecrets = (id: string, env: string) => api.call(e.listDynamicSecrets, { params: { id, env } });

export const putDynamicSecret = (id: string, env: string, name: string, body: PutDynamicSecretBody) =>
  api.call(e.putDynamicSecret, { params: { id, env, name }, body });

/** 204 after every open lease was revoked. */
export const deleteDynamicSecret = (id: string, env: string, name: string) =>
  api.call(e.deleteDynamicSecret, { params: { id, env, name } });

export const listLeases = (id: string, env: string, name: string, state: 'open' | 'all' = 'all') =>
  api.call(e.listLeases, { params: { id, env, name }, query: { state } });

/** 204 once the revoke statements ran; a refusal by the database is 502 and the lease stays `revoke_failed`. */
export const revokeLease = (id: string, env: string, name: string, leaseId: string) =>
  api.call(e.revokeLease, { params: { id, env, name, leaseId } });

export const listRotations = (id: string, env: string) => api.call(e.listRotations, { params: { id, env } });

export const putRotation = (id: string, env: string, key: string, body: PutRotationBody) =>
  api.call(e.putRotation, { params: { id, env, key }, body });

export const deleteRotation = (id: string, env: string, key: string) =>
  api.call(e.deleteRotation, { params: { id, env, key } });

/** 200 after the new revision, or 502 with the rotation's `lastError`. */
export const rotateNow = (id: string, env: string, key: string) => api.call(e.rotateNow, { params: { id, env, key } });
