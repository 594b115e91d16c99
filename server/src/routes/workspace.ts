import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import * as team from '../services/workspace/team.js';
import * as ws from '../services/workspace/workspace.js';

/** Workspace endpoints: JWT required (spec, D10). */
export async function workspaceRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const config = { auth: 'jwt' as const };
  const tags = ['workspace'];

  app.get('/workspace', { config, schema: { tags, response: { 200: c.workspace } } }, async (req) =>
    ws.getWorkspace(req.ctx),
  );
  app.patch(
    '/workspace',
    { config, schema: { tags, body: c.updateWorkspaceBody, response: { 200: c.workspace } } },
    async (req) => ws.renameWorkspace(req.ctx, req.body),
  );
  app.get('/workspace/billing', { config, schema: { tags, response: { 200: c.billing } } }, async (req) =>
    ws.billing(req.ctx),
  );
  app.get('/workspace/connections', { config, schema: { tags, response: { 200: c.connections } } }, async (req) =>
    ws.connections(req.ctx),
  );
  app.get('/workspace/stats', { config, schema: { tags, response: { 200: c.stats } } }, async (req) =>
    ws.stats(req.ctx),
  );
  app.get(
    '/workspace/audit',
    { config, schema: { tags, querystring: c.auditQuery, response: { 200: c.auditPage } } },
    async (req) => ws.workspaceAudit(req.ctx, req.query),
  );

  app.get('/workspace/members', { config, schema: { tags, response: { 200: c.membersResponse } } }, async (req) => ({
    members: await team.listMembers(req.ctx),
  }));
  app.patch(
    '/workspace/members/:userId',
    { config, schema: { tags, params: c.memberParams, body: c.updateMemberBody, response: { 200: c.member } } },
    async (req) => team.changeRole(req.ctx, { ...req.params, ...req.body }),
  );
  app.delete(
    '/workspace/members/:userId',
    { config, schema: { tags, params: c.memberParams, response: { 204: c.noContent } } },
    async (req, reply) => {
      await team.removeMember(req.ctx, req.params);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/workspace/invites',
    {
      config,
      schema: { tags, body: c.inviteBody, response: { 200: c.inviteAddedResponse, 202: c.inviteSentResponse } },
    },
    async (req, reply) => {
      const result = await team.invite(req.ctx, req.body);
      return reply.status(result.status).send(result.body);
    },
  );
  app.get('/workspace/invites', { config, schema: { tags, response: { 200: c.invitesResponse } } }, async (req) => ({
    invites: await team.listInvites(req.ctx),
  }));
  app.delete(
    '/workspace/invites/:id',
    { config, schema: { tags, params: c.inviteParams, response: { 204: c.noContent } } },
    async (req, reply) => {
      await team.revokeInvite(req.ctx, req.params);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/auth/accept-invite',
    {
      config: { ...config, issuesSession: true },
      schema: { tags: ['auth'], body: c.acceptInviteBody, response: { 200: c.acceptInviteResponse } },
    },
    async (req) => team.acceptInvite(req.ctx, req.body),
  );
}
