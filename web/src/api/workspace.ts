/** The current workspace: its name, plan and usage, and the operator's connection. */
import type { billing, connections, stats, updateWorkspaceBody, Workspace } from '@svcenv/contract';
import type { z } from 'zod';
import { api } from '../api.js';

export const renameWorkspace = (body: z.input<typeof updateWorkspaceBody>) => api.patch<Workspace>('/workspace', body);

export const getBilling = () => api.get<z.infer<typeof billing>>('/workspace/billing');

export const getStats = () => api.get<z.infer<typeof stats>>('/workspace/stats');

export const getConnections = () => api.get<z.infer<typeof connections>>('/workspace/connections');
