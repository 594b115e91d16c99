/** Project roles and per-environment overrides (D22). */
import type { setEnvPermissionBody, setProjectRoleBody } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

type Role = z.input<typeof setProjectRoleBody>['role'];
type Permission = z.input<typeof setEnvPermissionBody>['permission'];

export const listProjectMembers = (projectId: string) => api.call(e.listProjectMembers, { params: { id: projectId } });

/** Adds the workspace member to the project, or changes their role. */
/** D73: `expiresAt` makes the role temporary (null: permanent); the same call extends it. */
export const setProjectRole = (projectId: string, userId: string, role: Role, expiresAt: string | null = null) =>
  api.call(e.setProjectRole, { params: { id: projectId, userId }, body: { role, expiresAt } });

export const removeProjectMember = (projectId: string, userId: string) =>
  api.call(e.removeProjectMember, { params: { id: projectId, userId } });

/** D73: `expiresAt` makes the permission temporary (null: permanent); the same call extends it. */
export const setEnvPermission = (
  projectId: string,
  userId: string,
  env: string,
  permission: Permission,
  expiresAt: string | null = null,
) => api.call(e.setEnvPermission, { params: { id: projectId, userId, env }, body: { permission, expiresAt } });

/** Back to the role's default on that environment. */
export const clearEnvPermission = (projectId: string, userId: string, env: string) =>
  api.call(e.clearEnvPermission, { params: { id: projectId, userId, env } });
