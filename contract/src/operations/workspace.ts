import { noContent } from '../common.js';
import { endpoints as e } from '../endpoints.js';
import { auditPage, auditQuery } from '../projects.js';
import * as ws from '../workspace.js';
import { defineOperation } from './define.js';

/** Workspace endpoints: JWT required (spec, D10). */
const tags = ['workspace'];

export const getWorkspace = defineOperation(e.getWorkspace, { tags, responses: { 200: ws.workspace } });
export const renameWorkspace = defineOperation(e.renameWorkspace, {
  tags,
  body: ws.updateWorkspaceBody,
  responses: { 200: ws.workspace },
});
export const getBilling = defineOperation(e.getBilling, { tags, responses: { 200: ws.billing } });
export const getConnections = defineOperation(e.getConnections, { tags, responses: { 200: ws.connections } });
export const getStats = defineOperation(e.getStats, { tags, responses: { 200: ws.stats } });
export const workspaceAudit = defineOperation(e.workspaceAudit, {
  tags,
  query: auditQuery,
  responses: { 200: auditPage },
});

export const listMembers = defineOperation(e.listMembers, { tags, responses: { 200: ws.membersResponse } });
export const updateMember = defineOperation(e.updateMember, {
  tags,
  params: ws.memberParams,
  body: ws.updateMemberBody,
  responses: { 200: ws.member },
});
export const removeMember = defineOperation(e.removeMember, {
  tags,
  params: ws.memberParams,
  responses: { 204: noContent },
});

/** Someone with an account is added at once (200); anyone else is sent an invite email (202). */
export const invite = defineOperation(e.invite, {
  tags,
  body: ws.inviteBody,
  responses: { 200: ws.inviteAddedResponse, 202: ws.inviteSentResponse },
});
export const listInvites = defineOperation(e.listInvites, { tags, responses: { 200: ws.invitesResponse } });
export const revokeInvite = defineOperation(e.revokeInvite, {
  tags,
  params: ws.inviteParams,
  responses: { 204: noContent },
});
/** D17: joins the invite's workspace; the answer carries a JWT scoped to it. */
export const acceptInvite = defineOperation(e.acceptInvite, {
  tags: ['auth'],
  body: ws.acceptInviteBody,
  responses: { 200: ws.acceptInviteResponse },
});
