/**
 * Projects. Their environments are in envs.ts. Every answer carries the caller's `access` (D57), which
 * the pages read (lib/access.ts) to offer only what the server would allow.
 */
import type { createProjectBody, updateProjectBody } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

export const listProjects = () => api.call(e.listProjects);

export const getProject = (id: string) => api.call(e.getProject, { params: { id } });

export const createProject = (body: z.input<typeof createProjectBody>) => api.call(e.createProject, { body });

export const updateProject = (id: string, body: z.input<typeof updateProjectBody>) =>
  api.call(e.updateProject, { params: { id }, body });

export const deleteProject = (id: string) => api.call(e.deleteProject, { params: { id } });
