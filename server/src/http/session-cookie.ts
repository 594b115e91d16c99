import { SIGNED_IN_COOKIE } from '@svcenv/contract/constants';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { forbidden } from '../lib/errors.js';
import { JWT_LIFETIME_S } from '../services/identity/authn.js';

/**
 * The dashboard's session in every tab of the browser (ADR 0014). Every answer that issues a
 * session JWT also sets it as an httpOnly, SameSite=Strict cookie: injected script cannot read it, and no
 * other site's page makes the browser send it. Requests that authenticate with the cookie must also carry
 * `X-Svcenv-CSRF` (any value): a custom header, which no other origin can add without a CORS preflight the
 * server never grants. An Authorization header, when present, is used instead; access tokens never come from
 * the cookie, and pull (`auth: token`) ignores it.
 */
export const SESSION_COOKIE = 'svcenv_session';
export const CSRF_HEADER = 'x-svcenv-csrf';

export function setSessionCookie(reply: FastifyReply, token: string, secure: boolean): void {
  reply.setCookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'strict',
    // Plain HTTP is served only on loopback (D4); behind TLS (certificate or proxy) the cookie is Secure.
    secure,
    path: '/',
    maxAge: JWT_LIFETIME_S,
  });
  // Whether the session is valid stays the server's answer alone; this only says that asking is worth it.
  reply.setCookie(SIGNED_IN_COOKIE, '1', { sameSite: 'strict', secure, path: '/', maxAge: JWT_LIFETIME_S });
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', secure, path: '/' });
  reply.clearCookie(SIGNED_IN_COOKIE, { sameSite: 'strict', secure, path: '/' });
}

/** `Bearer <cookie>` for a request without an Authorization header, or undefined; refuses a cookie without the CSRF header. */
export function sessionCookieCredential(request: FastifyRequest, mode: string): string | undefined {
  const cookie = request.cookies?.[SESSION_COOKIE];
  if (!cookie || mode === 'token') return undefined;
  if (request.headers[CSRF_HEADER] === undefined) {
    throw forbidden(`a session cookie must be sent with the ${CSRF_HEADER} header`);
  }
  return `Bearer ${cookie}`;
}
