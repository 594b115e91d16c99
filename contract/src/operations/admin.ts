import * as admin from '../admin.js';
import { emptyBody } from '../common.js';
import { endpoints as e } from '../endpoints.js';
import { defineOperation } from './define.js';

/** D69: instance administration; administrators only (others 403), through a session (JWT). */
const tags = ['admin'];

export const adminListWorkspaces = defineOperation(e.adminListWorkspaces, {
  tags,
  responses: { 200: admin.adminWorkspacesResponse },
});
export const adminSetPlan = defineOperation(e.adminSetPlan, {
  tags,
  params: admin.adminWorkspaceParams,
  body: admin.setPlanBody,
  responses: { 200: admin.adminWorkspace },
});
export const adminListUsers = defineOperation(e.adminListUsers, {
  tags,
  responses: { 200: admin.adminUsersResponse },
});
export const adminResetLink = defineOperation(e.adminResetLink, {
  tags,
  params: admin.adminUserParams,
  body: emptyBody,
  responses: { 200: admin.resetLinkResponse },
});
export const adminGetSettings = defineOperation(e.adminGetSettings, {
  tags,
  responses: { 200: admin.instanceSettings },
});
export const adminUpdateSettings = defineOperation(e.adminUpdateSettings, {
  tags,
  body: admin.updateInstanceSettingsBody,
  responses: { 200: admin.instanceSettings },
});
