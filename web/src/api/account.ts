/** The signed-in account (`/v1/me*`, D12) and its two-factor setup (D13). */

import type { changePasswordBody, updateMeBody } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

export const updateMe = (body: z.input<typeof updateMeBody>) => api.call(e.updateMe, { body });

/** D9: ends every session of the account, this one included. */
export const changePassword = (body: z.input<typeof changePasswordBody>) => api.call(e.changePassword, { body });

export const listMyWorkspaces = () => api.call(e.listMyWorkspaces);

/** D68: which of the caller's workspaces holds a project they can see (by id or slug); 404 for any other. */
export const findProjectWorkspace = (project: string) => api.call(e.findProjectWorkspace, { query: { project } });

export const setupMfa = () => api.call(e.setupMfa);

/** D9: enabling ends every session too; the answer is the backup codes, shown once. */
export const enableMfa = (code: string) => api.call(e.enableMfa, { body: { code } });

export const disableMfa = (code: string) => api.call(e.disableMfa, { body: { code } });

export const regenerateBackupCodes = (code: string) => api.call(e.regenerateBackupCodes, { body: { code } });
