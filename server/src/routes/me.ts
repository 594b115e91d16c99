import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import * as me from '../services/identity/me.js';
import * as mfa from '../services/identity/mfa.js';

/** D12: the signed-in user's account and two-factor settings; JWT only (D10). */
export async function meRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const config = { auth: 'jwt' as const };
  const tags = ['me'];

  app.get('/me', { config, schema: { tags, response: { 200: c.meResponse } } }, async (req) => me.getMe(req.ctx));

  app.patch('/me', { config, schema: { tags, body: c.updateMeBody, response: { 200: c.meResponse } } }, async (req) =>
    me.updateMe(req.ctx, req.body),
  );

  app.post(
    '/me/password',
    { config, schema: { tags, body: c.changePasswordBody, response: { 204: c.noContent } } },
    async (req, reply) => {
      await me.changePassword(req.ctx, req.body);
      return reply.status(204).send(null);
    },
  );

  app.get('/me/workspaces', { config, schema: { tags, response: { 200: c.myWorkspacesResponse } } }, async (req) =>
    me.myWorkspaces(req.ctx),
  );

  app.post(
    '/me/mfa/setup',
    { config, schema: { tags, body: c.emptyBody, response: { 200: c.mfaSetupResponse } } },
    async (req) => mfa.setupMfa(req.ctx),
  );

  app.post(
    '/me/mfa/enable',
    { config, schema: { tags, body: c.mfaCodeBody, response: { 200: c.backupCodesResponse } } },
    async (req) => mfa.enableMfa(req.ctx, req.body),
  );

  app.post(
    '/me/mfa/disable',
    { config, schema: { tags, body: c.mfaCodeBody, response: { 204: c.noContent } } },
    async (req, reply) => {
      await mfa.disableMfa(req.ctx, req.body);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/me/mfa/backup-codes',
    { config, schema: { tags, body: c.mfaCodeBody, response: { 200: c.backupCodesResponse } } },
    async (req) => mfa.regenerateBackupCodes(req.ctx, req.body),
  );
}
