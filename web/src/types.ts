/**
 * Types the dashboard derives from the contract's schemas. The contract's own types (Project, Variable,
 * Member, …) are imported from `@svcenv/contract` where they are used. Only `import type`, so none of zod
 * ends up in the bundle.
 */
import type {
  createTokenResponse,
  diffResponse,
  invitesResponse,
  mfaSetupResponse,
  myWorkspacesResponse,
  ProjectMember,
  SessionUser,
} from '@svcenv/contract';
import type { z } from 'zod';

export type DiffResponse = z.infer<typeof diffResponse>;
export type CreatedToken = z.infer<typeof createTokenResponse>;
export type WsRole = SessionUser['wsRole'];
export type ProjectRole = ProjectMember['role'];
export type MyWorkspace = z.infer<typeof myWorkspacesResponse>['workspaces'][number];
export type MfaSetup = z.infer<typeof mfaSetupResponse>;
export type PendingInvite = z.infer<typeof invitesResponse>['invites'][number];
