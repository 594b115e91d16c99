/** The environments of a project, and the comparison of two of them. */
import type { diffResponse, Environment, Project, updateEnvBody } from '@svcenv/contract';
import type { z } from 'zod';
import { api, path } from '../api.js';

const envPath = (projectId: string, env: string) => path`/projects/${projectId}/envs/${env}`;

export const listEnvs = (projectId: string) => api.get<{ envs: Environment[] }>(path`/projects/${projectId}/envs`);

export const createEnv = (projectId: string, name: string) =>
  api.post<Project>(path`/projects/${projectId}/envs`, { name });

/** Protection (Owners) and colour (D21). */
export const updateEnv = (projectId: string, env: string, body: z.input<typeof updateEnvBody>) =>
  api.patch<Environment>(envPath(projectId, env), body);

export const deleteEnv = (projectId: string, env: string) => api.del(envPath(projectId, env));

/** The server's verdict on two environments, which compares real values, secrets included. */
export const diffEnvs = (projectId: string, a: string, b: string) =>
  api.get<z.infer<typeof diffResponse>>(path`/projects/${projectId}/diff`, { env: [a, b] });
