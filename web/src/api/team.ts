/** The workspace's members and pending invites (spec "Workspace endpoints"). */
import type { inviteBody, updateMemberBody } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

export const listMembers = () => api.call(e.listMembers);

export const updateMember = (userId: string, body: z.input<typeof updateMemberBody>) =>
  api.call(e.updateMember, { params: { userId }, body });

export const removeMember = (userId: string) => api.call(e.removeMember, { params: { userId } });

export const listInvites = () => api.call(e.listInvites);

/** Someone with an account is added at once; anyone else is sent an invite email. */
export const invite = (body: z.input<typeof inviteBody>) => api.call(e.invite, { body });

export const revokeInvite = (id: string) => api.call(e.revokeInvite, { params: { id } });
