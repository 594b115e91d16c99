/** The signed-in account (`/v1/me*`, D12) and its two-factor setup (D13). */
import type {
  backupCodesResponse,
  changePasswordBody,
  meResponse,
  mfaSetupResponse,
  myWorkspacesResponse,
  updateMeBody,
} from '@svcenv/contract';
import type { z } from 'zod';
import { api } from '../api.js';

type BackupCodes = z.infer<typeof backupCodesResponse>;

export const updateMe = (body: z.input<typeof updateMeBody>) => api.patch<z.infer<typeof meResponse>>('/me', body);

/** D9: ends every session of the account, this one included. */
export const changePassword = (body: z.input<typeof changePasswordBody>) => api.post<void>('/me/password', body);

export const listMyWorkspaces = () => api.get<z.infer<typeof myWorkspacesResponse>>('/me/workspaces');

export const setupMfa = () => api.post<z.infer<typeof mfaSetupResponse>>('/me/mfa/setup');

/** D9: enabling ends every session too; the answer is the backup codes, shown once. */
export const enableMfa = (code: string) => api.post<BackupCodes>('/me/mfa/enable', { code });

export const disableMfa = (code: string) => api.post<void>('/me/mfa/disable', { code });

export const regenerateBackupCodes = (code: string) => api.post<BackupCodes>('/me/mfa/backup-codes', { code });
