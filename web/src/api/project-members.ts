/** Project roles and per-environment overrides (D22). */
import type { ProjectMember, setEnvPermissionBody, setProjectRoleBody } from '@svcenv/contract';
import type { z } from 'zod';
import { api, path } from '../api.js';

type Role = z.input<typeof setProjectRoleBody>['role'];
type Permission = z.input<typeof setEnvPermissionBody>['permission'];

const memberPath = (projectId: string, userId: string) => path`/projects/${projectId}/members/${userId}`;
const overridePath = (projectId: string, userId: string, env: string) =>
  path`/projects/${projectId}/members/${userId}/envs/${env}`;

export const listProjectMembers = (projectId: string) =>
  api.get<{ members: ProjectMember[] }>(path`/projects/${projectId}/members`);

/** Adds the workspace member to the project, or changes their role. */
export const setProjectRole = (projectId: string, userId: string, role: Role) =>
  api.put<ProjectMember>(memberPath(projectId, userId), { role });

export const removeProjectMember = (projectId: string, userId: string) => api.del(memberPath(projectId, userId));

export const setEnvPermission = (projectId: string, userId: string, env: string, permission: Permission) =>
  api.put<ProjectMember>(overridePath(projectId, userId, env), { permission });

/** Back to the role's default on that environment. */
export const clearEnvPermission = (projectId: string, userId: string, env: string) =>
  api.del(overridePath(projectId, userId, env));
