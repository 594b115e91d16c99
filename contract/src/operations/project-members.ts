import { noContent } from '../common.js';
import { endpoints as e } from '../endpoints.js';
import { projectParams } from '../projects.js';
import * as ws from '../workspace.js';
import { defineOperation } from './define.js';

/** D22: project members and per-environment overrides (Owner or project Admin). */
const tags = ['project members'];

export const listProjectMembers = defineOperation(e.listProjectMembers, {
  tags,
  params: projectParams,
  responses: { 200: ws.projectMembersResponse },
});
export const setProjectRole = defineOperation(e.setProjectRole, {
  tags,
  params: ws.projectMemberParams,
  body: ws.setProjectRoleBody,
  responses: { 200: ws.projectMember },
});
export const removeProjectMember = defineOperation(e.removeProjectMember, {
  tags,
  params: ws.projectMemberParams,
  responses: { 204: noContent },
});
export const setEnvPermission = defineOperation(e.setEnvPermission, {
  tags,
  params: ws.projectMemberEnvParams,
  body: ws.setEnvPermissionBody,
  responses: { 200: ws.projectMember },
});
export const clearEnvPermission = defineOperation(e.clearEnvPermission, {
  tags,
  params: ws.projectMemberEnvParams,
  responses: { 204: noContent },
});
