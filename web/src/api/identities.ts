/** Workload identities (D60): the Owner's list, create, edit and delete; the exchange itself is the CI's. */
import type { createIdentityBody, updateIdentityBody } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

export type CreateIdentityBody = z.input<typeof createIdentityBody>;
export type UpdateIdentityBody = z.input<typeof updateIdentityBody>;

export const listIdentities = () => api.call(e.listIdentities);

export const createIdentity = (body: CreateIdentityBody) => api.call(e.createIdentity, { body });

export const updateIdentity = (id: string, body: UpdateIdentityBody) =>
  api.call(e.updateIdentity, { params: { id }, body });

export const deleteIdentity = (id: string) => api.call(e.deleteIdentity, { params: { id } });
