/** The workspace's members and pending invites (spec "Workspace endpoints"). */
import type {
  inviteAddedResponse,
  inviteBody,
  inviteSentResponse,
  invitesResponse,
  Member,
  updateMemberBody,
} from '@svcenv/contract';
import type { z } from 'zod';
import { api, path } from '../api.js';

export const listMembers = () => api.get<{ members: Member[] }>('/workspace/members');

export const updateMember = (userId: string, body: z.input<typeof updateMemberBody>) =>
  api.patch<Member>(path`/workspace/members/${userId}`, body);

export const removeMember = (userId: string) => api.del(path`/workspace/members/${userId}`);

export const listInvites = () => api.get<z.infer<typeof invitesResponse>>('/workspace/invites');

/** Someone with an account is added at once; anyone else is sent an invite email. */
export const invite = (body: z.input<typeof inviteBody>) =>
  api.post<z.infer<typeof inviteAddedResponse> | z.infer<typeof inviteSentResponse>>('/workspace/invites', body);

export const revokeInvite = (id: string) => api.del(path`/workspace/invites/${id}`);
