import { existsSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import fastifyStatic from '@fastify/static';
import { API_PREFIX } from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import { body } from '../http/errors.js';

/**
 * The dashboard: the static build of `web/` (web/dist, made by `npm ci`'s postinstall and
 * refreshed by `npm start`) served at `/`, same origin as the API, so it needs no CORS.
 *
 * - Hashed files under /assets are cached for a year (`immutable`); everything else is revalidated.
 * - Any other GET that is not a file and not under /v1 gets index.html, so that links from emails
 *   (`/invite?token=...`, `/verify-email?token=...`) and reloads of deep links open the app.
 * - A strict Content-Security-Policy: scripts and styles only from this origin, no inline code.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // QR codes of two-factor enrollment are drawn as data: images.
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const YEAR_MS = 365 * 24 * 3600 * 1000;

export async function webRoutes(app: FastifyInstance, { distDir }: { distDir: string }) {
  // Only the reply.sendFile decorator (range, ETag, traversal-safe); routing is ours.
  await app.register(fastifyStatic, { root: distDir, serve: false });

  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('content-security-policy', DASHBOARD_CSP);
    return payload;
  });

  app.get('/*', { schema: { hide: true } }, async (request, reply) => {
    const path = request.url.split('?')[0]!;
    // Unknown API paths stay JSON 404s (the spec's error body), never the app.
    if (path === API_PREFIX || path.startsWith(`${API_PREFIX}/`)) {
      return reply.status(404).send(body('NOT_FOUND', `no route for GET ${path}`));
    }
    if (!existsSync(join(distDir, 'index.html'))) {
      return reply
        .status(503)
        .type('text/plain; charset=utf-8')
        .send('The dashboard is not built. Run `npm run build:web` (npm ci and npm start do it for you).\n');
    }
    let rel: string;
    try {
      rel = normalize(decodeURIComponent(path)).replace(/^[/\\]+/, '');
    } catch {
      return reply.status(400).send(body('VALIDATION', 'malformed path', 'path'));
    }
    if (rel && !rel.startsWith('..') && extname(rel) && existsSync(join(distDir, rel))) {
      if (rel.startsWith('assets/')) return reply.sendFile(rel, { maxAge: YEAR_MS, immutable: true });
      reply.header('cache-control', 'no-cache');
      return reply.sendFile(rel, { cacheControl: false });
    }
    // A missing asset is a 404, not the app (a stale index.html must not get HTML for its script).
    if (rel.startsWith('assets/')) return reply.status(404).send(body('NOT_FOUND', `no file ${path}`));
    reply.header('cache-control', 'no-cache');
    return reply.type('text/html; charset=utf-8').sendFile('index.html', { cacheControl: false });
  });
}
