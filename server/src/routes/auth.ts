import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import { CSRF_HEADER, clearSessionCookie } from '../http/session-cookie.js';
import { forbidden } from '../lib/errors.js';
import type { Deps } from '../services/core/deps.js';
import {
  authOptions,
  login,
  sessionUser,
  signup,
  switchWorkspace,
  verifyMfaLogin,
} from '../services/identity/accounts.js';
import { resendVerification, verifyEmail } from '../services/identity/email-verification.js';
import { limitLoginByIp } from '../services/identity/limits.js';
import { passwordResetJobs, requestPasswordReset, resetPassword } from '../services/identity/password-reset.js';
import { inviteInfo } from '../services/workspace/team.js';

export async function authRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  const issuesSession = { config: { issuesSession: true } };

  route(app, ops.signup, async (req, reply) => reply.status(201).send(await signup(deps, req.body)), issuesSession);

  route(app, ops.login, async (req) => login(deps, req.body), {
    // D14: counted before the body is even parsed, so every request from the address counts.
    onRequest: async (req) => limitLoginByIp(deps.limiter, req.ip),
    ...issuesSession,
  });

  route(app, ops.verifyMfa, async (req) => verifyMfaLogin(deps, req.body), issuesSession);

  route(app, ops.verifyEmail, async (req) => verifyEmail(deps, req.body.token));

  route(app, ops.resendVerification, async (req, reply) => reply.status(202).send(await resendVerification(req.ctx)));

  // The reset request's job kind (services/identity/password-reset.ts) is known to every instance from start-up,
  // since any instance's runner may claim a job another one wrote.
  deps.jobs.register(passwordResetJobs(deps));

  // Ends the dashboard's session in this browser (the cookie). The custom header keeps other sites from
  // logging the user out; the JWT itself stays valid until it expires or the password changes (D9).
  route(app, ops.logout, async (req, reply) => {
    if (req.headers[CSRF_HEADER] === undefined) throw forbidden(`logout needs the ${CSRF_HEADER} header`);
    clearSessionCookie(reply, req.protocol === 'https' || deps.config.TRUST_PROXY);
    return reply.status(204).send(null);
  });

  route(app, ops.forgotPassword, async (req, reply) =>
    reply.status(202).send(await requestPasswordReset(deps, { ...req.body, ip: req.ip })),
  );

  route(app, ops.resetPassword, async (req, reply) => {
    await resetPassword(deps, req.body);
    return reply.status(204).send(null);
  });

  // Public: the invite page greets the invitee before they have an account. The token is a query parameter,
  // which the request log never writes (a path segment is only redacted when it looks like a credential).
  route(app, ops.inviteInfo, async (req) => inviteInfo(deps, { token: req.query.token, ip: req.ip }));

  route(app, ops.authOptions, async () => authOptions(deps));

  route(app, ops.getSession, async (req) => ({
    user: await sessionUser(deps.db, req.ctx.principal.userId, req.ctx.principal.workspaceId),
  }));

  route(app, ops.switchWorkspace, async (req) => switchWorkspace(req.ctx, req.body), issuesSession);
}
