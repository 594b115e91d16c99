/**
 * Projects. Their environments are in envs.ts. Every answer carries the caller's `access` (D57), which
 * the pages read (lib/access.ts) to offer only what the server would allow.
 */
import type { createProjectBody, Project, updateProjectBody } from '@svcenv/contract';
import type { z } from 'zod';
import { api, path } from '../api.js';

export const listProjects = () => api.get<{ projects: Project[] }>('/projects');

export const getProject = (id: string) => api.get<Project>(path`/projects/${id}`);

export const createProject = (body: z.input<typeof createProjectBody>) => api.post<Project>('/projects', body);

export const updateProject = (id: string, body: z.input<typeof updateProjectBody>) =>
  api.patch<Project>(path`/projects/${id}`, body);

export const deleteProject = (id: string) => api.del(path`/projects/${id}`);
