/**
 * Wire types of the API, taken from the contract package (never redefined here). Only `import type`,
 * so none of zod ends up in the bundle.
 */
import type {
  AccessToken,
  AuditEntry,
  backupCodesResponse,
  createTokenResponse,
  diffResponse,
  Environment,
  HistoryEntry,
  Member,
  mfaSetupResponse,
  myWorkspacesResponse,
  Project,
  ProjectMember,
  SessionUser,
  Variable,
  Webhook,
  WebhookDelivery,
  WebhookEvent,
  Workspace,
} from '@svcenv/contract';
import type { z } from 'zod';

export type {
  AccessToken,
  AuditEntry,
  Environment,
  HistoryEntry,
  Member,
  Project,
  ProjectMember,
  SessionUser,
  Variable,
  Webhook,
  WebhookDelivery,
  WebhookEvent,
  Workspace,
};
export type DiffResponse = z.infer<typeof diffResponse>;
export type CreatedToken = z.infer<typeof createTokenResponse>;
export type WsRole = SessionUser['wsRole'];
export type ProjectRole = ProjectMember['role'];
export type EnvPermission = ProjectMember['envPermissions'][string];
export type MyWorkspace = z.infer<typeof myWorkspacesResponse>['workspaces'][number];
export type MfaSetup = z.infer<typeof mfaSetupResponse>;
export type BackupCodes = z.infer<typeof backupCodesResponse>;
