import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import * as projects from '../services/projects/projects.js';
import * as variables from '../services/variables/variables.js';

export async function projectRoutes(app: FastifyInstance) {
  route(app, ops.listProjects, async (req) => ({ projects: await projects.listProjects(req.ctx) }));

  route(app, ops.createProject, async (req, reply) =>
    reply.status(201).send(await projects.createProject(req.ctx, req.body)),
  );

  route(app, ops.getProject, async (req) => projects.getProject(req.ctx, { projectId: req.params.id }));

  route(app, ops.updateProject, async (req) =>
    projects.updateProject(req.ctx, { projectId: req.params.id, ...req.body }),
  );

  route(app, ops.deleteProject, async (req, reply) => {
    await projects.deleteProject(req.ctx, { projectId: req.params.id });
    return reply.status(204).send(null);
  });

  route(app, ops.listEnvs, async (req) => ({ envs: await projects.listEnvs(req.ctx, { projectId: req.params.id }) }));

  route(app, ops.createEnv, async (req, reply) =>
    reply.status(201).send(await projects.createEnv(req.ctx, { projectId: req.params.id, name: req.body.name })),
  );

  route(app, ops.updateEnv, async (req) =>
    projects.updateEnv(req.ctx, { projectId: req.params.id, env: req.params.env, ...req.body }),
  );

  route(app, ops.deleteEnv, async (req, reply) => {
    await projects.deleteEnv(req.ctx, { projectId: req.params.id, env: req.params.env });
    return reply.status(204).send(null);
  });

  route(app, ops.diffEnvs, async (req) => {
    const [a, b] = req.query.env as [string, string];
    return variables.diffEnvs(req.ctx, { projectId: req.params.id, a, b });
  });

  route(app, ops.projectAudit, async (req) =>
    projects.projectAudit(req.ctx, { projectId: req.params.id, ...req.query }),
  );
}
