/** The environments of a project, and the comparison of two of them. */
import type { updateEnvBody } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

export const listEnvs = (projectId: string) => api.call(e.listEnvs, { params: { id: projectId } });

export const createEnv = (projectId: string, name: string) =>
  api.call(e.createEnv, { params: { id: projectId }, body: { name } });

/** Protection (Owners) and colour (D21). */
export const updateEnv = (projectId: string, env: string, body: z.input<typeof updateEnvBody>) =>
  api.call(e.updateEnv, { params: { id: projectId, env }, body });

export const deleteEnv = (projectId: string, env: string) => api.call(e.deleteEnv, { params: { id: projectId, env } });

/** The server's verdict on two environments, which compares real values, secrets included. */
export const diffEnvs = (projectId: string, a: string, b: string) =>
  api.call(e.diffEnvs, { params: { id: projectId }, query: { env: [a, b] } });
