import { noContent } from '../common.js';
import { endpoints as e } from '../endpoints.js';
import * as p from '../projects.js';
import { defineOperation } from './define.js';

/** Projects (D48 slugs, D57 access), their environments, the diff of two, and the project's audit log. */
const tags = ['projects'];
const params = p.projectParams;

export const listProjects = defineOperation(e.listProjects, { tags, responses: { 200: p.listProjectsResponse } });
export const createProject = defineOperation(e.createProject, {
  tags,
  body: p.createProjectBody,
  responses: { 201: p.project },
});
export const getProject = defineOperation(e.getProject, { tags, params, responses: { 200: p.project } });
export const updateProject = defineOperation(e.updateProject, {
  tags,
  params,
  body: p.updateProjectBody,
  responses: { 200: p.project },
});
export const deleteProject = defineOperation(e.deleteProject, { tags, params, responses: { 204: noContent } });
export const listEnvs = defineOperation(e.listEnvs, { tags, params, responses: { 200: p.listEnvsResponse } });
export const createEnv = defineOperation(e.createEnv, {
  tags,
  params,
  body: p.createEnvBody,
  responses: { 201: p.project },
});
export const updateEnv = defineOperation(e.updateEnv, {
  tags,
  params: p.envParams,
  body: p.updateEnvBody,
  responses: { 200: p.environment },
});
export const deleteEnv = defineOperation(e.deleteEnv, { tags, params: p.envParams, responses: { 204: noContent } });
export const diffEnvs = defineOperation(e.diffEnvs, {
  tags,
  params,
  query: p.diffQuery,
  responses: { 200: p.diffResponse },
});
export const projectAudit = defineOperation(e.projectAudit, {
  tags,
  params,
  query: p.auditQuery,
  responses: { 200: p.auditPage },
});
