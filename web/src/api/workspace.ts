/** The current workspace: its name, plan and usage, and the operator's connection. */
import type { updateWorkspaceBody } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

export const renameWorkspace = (body: z.input<typeof updateWorkspaceBody>) => api.call(e.renameWorkspace, { body });

export const getBilling = () => api.call(e.getBilling);

export const getStats = () => api.call(e.getStats);

export const getConnections = () => api.call(e.getConnections);
