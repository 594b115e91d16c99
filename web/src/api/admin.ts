/** Instance administration (D69): administrators only; the signup mode is public (the auth pages read it). */
import type { PlanName, SignupMode } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import { api } from '../api.js';

export const listInstanceWorkspaces = () => api.call(e.adminListWorkspaces);

export const setWorkspacePlan = (id: string, plan: PlanName) =>
  api.call(e.adminSetPlan, { params: { id }, body: { plan } });

export const listInstanceUsers = () => api.call(e.adminListUsers);

/** D54's one-hour link, in the answer only: shown once to the administrator, who hands it over. */
export const makeResetLink = (id: string) => api.call(e.adminResetLink, { params: { id } });

export const getInstanceSettings = () => api.call(e.adminGetSettings);

export const updateInstanceSettings = (signup: SignupMode) => api.call(e.adminUpdateSettings, { body: { signup } });
