import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { CSRF_HEADER, clearSessionCookie } from '../http/session-cookie.js';
import { forbidden } from '../lib/errors.js';
import type { Deps } from '../services/core/deps.js';
import { login, sessionUser, signup, switchWorkspace, verifyMfaLogin } from '../services/identity/accounts.js';
import { resendVerification, verifyEmail } from '../services/identity/email-verification.js';
import { limitLoginByIp } from '../services/identity/limits.js';
import { passwordResetJobs, requestPasswordReset, resetPassword } from '../services/identity/password-reset.js';
import { inviteInfo } from '../services/workspace/team.js';

export async function authRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['auth'];

  app.post(
    '/auth/signup',
    { config: { issuesSession: true }, schema: { tags, body: c.signupBody, response: { 201: c.authResponse } } },
    async (req, reply) => reply.status(201).send(await signup(deps, req.body)),
  );

  app.post(
    '/auth/login',
    {
      // D14: counted before the body is even parsed, so every request from the address counts.
      onRequest: async (req) => limitLoginByIp(deps.limiter, req.ip),
      config: { issuesSession: true },
      schema: { tags, body: c.loginBody, response: { 200: c.loginResponse } },
    },
    async (req) => login(deps, req.body),
  );

  app.post(
    '/auth/verify-mfa',
    {
      config: { issuesSession: true },
      schema: { tags, body: c.verifyMfaBody, response: { 200: c.verifyMfaResponse } },
    },
    async (req) => verifyMfaLogin(deps, req.body),
  );

  app.post(
    '/auth/verify-email',
    { schema: { tags, body: c.verifyEmailBody, response: { 200: c.verifyEmailResponse } } },
    async (req) => verifyEmail(deps, req.body.token),
  );

  app.post(
    '/auth/resend-verification',
    { config: { auth: 'jwt' }, schema: { tags, body: c.emptyBody, response: { 202: c.resendVerificationResponse } } },
    async (req, reply) => reply.status(202).send(await resendVerification(req.ctx)),
  );

  // The reset request's job kind (services/password-reset.ts) is known to every instance from start-up,
  // since any instance's runner may claim a job another one wrote.
  deps.jobs.register(passwordResetJobs(deps));

  // Ends the dashboard's session in this browser (the cookie). The custom header keeps other sites from
  // logging the user out; the JWT itself stays valid until it expires or the password changes (D9).
  app.post(
    '/auth/logout',
    { schema: { tags, body: c.emptyBody, response: { 204: c.noContent } } },
    async (req, reply) => {
      if (req.headers[CSRF_HEADER] === undefined) throw forbidden(`logout needs the ${CSRF_HEADER} header`);
      clearSessionCookie(reply, req.protocol === 'https' || deps.config.TRUST_PROXY);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/auth/forgot-password',
    { schema: { tags, body: c.forgotPasswordBody, response: { 202: c.forgotPasswordResponse } } },
    async (req, reply) => reply.status(202).send(await requestPasswordReset(deps, { ...req.body, ip: req.ip })),
  );

  app.post(
    '/auth/reset-password',
    { schema: { tags, body: c.resetPasswordBody, response: { 204: c.noContent } } },
    async (req, reply) => {
      await resetPassword(deps, req.body);
      return reply.status(204).send(null);
    },
  );

  // Public: the invite page greets the invitee before they have an account. The token is a query parameter,
  // which the request log never writes (a path segment is only redacted when it looks like a credential).
  app.get(
    '/auth/invite',
    { schema: { tags, querystring: c.inviteInfoQuery, response: { 200: c.inviteInfoResponse } } },
    async (req) => inviteInfo(deps, { token: req.query.token, ip: req.ip }),
  );

  app.get(
    '/auth/session',
    { config: { auth: 'jwt' }, schema: { tags, response: { 200: c.sessionResponse } } },
    async (req) => ({ user: await sessionUser(deps.db, req.ctx.principal.userId, req.ctx.principal.workspaceId) }),
  );

  app.post(
    '/auth/switch-workspace',
    {
      config: { auth: 'jwt', issuesSession: true },
      schema: { tags, body: c.switchWorkspaceBody, response: { 200: c.switchWorkspaceResponse } },
    },
    async (req) => switchWorkspace(req.ctx, req.body),
  );
}
