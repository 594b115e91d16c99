import * as account from '../account.js';
import { emptyBody, noContent } from '../common.js';
import { endpoints as e } from '../endpoints.js';
import { defineOperation } from './define.js';

/** D12: the signed-in user's account and two-factor settings; JWT only (D10). */
const tags = ['me'];

export const getMe = defineOperation(e.getMe, { tags, responses: { 200: account.meResponse } });
export const updateMe = defineOperation(e.updateMe, {
  tags,
  body: account.updateMeBody,
  responses: { 200: account.meResponse },
});
export const changePassword = defineOperation(e.changePassword, {
  tags,
  body: account.changePasswordBody,
  responses: { 204: noContent },
});
export const listMyWorkspaces = defineOperation(e.listMyWorkspaces, {
  tags,
  responses: { 200: account.myWorkspacesResponse },
});
/** D68: the caller's workspace that holds a project they can see, by id or slug; 404 otherwise. */
export const findProjectWorkspace = defineOperation(e.findProjectWorkspace, {
  tags,
  query: account.projectWorkspaceQuery,
  responses: { 200: account.projectWorkspaceResponse },
});
export const setupMfa = defineOperation(e.setupMfa, {
  tags,
  body: emptyBody,
  responses: { 200: account.mfaSetupResponse },
});
export const enableMfa = defineOperation(e.enableMfa, {
  tags,
  body: account.mfaCodeBody,
  responses: { 200: account.backupCodesResponse },
});
export const disableMfa = defineOperation(e.disableMfa, {
  tags,
  body: account.mfaCodeBody,
  responses: { 204: noContent },
});
export const regenerateBackupCodes = defineOperation(e.regenerateBackupCodes, {
  tags,
  body: account.mfaCodeBody,
  responses: { 200: account.backupCodesResponse },
});
