/**
 * The server side of the dashboard (server/src/routes/web.ts): the built app at /, SPA fallback for the
 * links in emails, JSON 404s kept under /v1, a strict CSP, and year-long caching of hashed assets only.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, startApp, type TestApp } from '../../server/test/harness.js';

describe('dashboard served by the API server', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  it('serves index.html at / and for app routes such as the invite and verify-email links', async () => {
    for (const path of ['/', '/invite?token=abc', '/verify-email?token=x', '/projects/1234/anything']) {
      const res = await app.request('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(res.text).toContain('<div id="app"></div>');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).toContain("frame-ancestors 'none'");
    }
  });

  it('keeps unknown API paths as JSON 404 errors', async () => {
    const res = await app.request('GET', '/v1/no-such-thing');
    expect(res.status).toBe(404);
    expect(res.error).toEqual({ code: 'NOT_FOUND', message: 'no route for GET /v1/no-such-thing', field: '' });
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect((await app.request('POST', '/somewhere')).status).toBe(404);
  });

  it('caches hashed assets for a year and answers a missing asset with 404, not the app', async () => {
    const js = readdirSync(join(repoRoot, 'web', 'dist', 'assets')).find((f) => f.endsWith('.js'))!;
    const res = await app.request('GET', `/assets/${js}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('javascript');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const missing = await app.request('GET', '/assets/index-00000000.js');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('json');
    // index.html references only same-origin files: nothing inline for the CSP to allow.
    const html = (await app.request('GET', '/')).text;
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=/);
  });

  it('does not serve files outside web/dist', async () => {
    for (const path of ['/..%2fpackage.json', '/%2e%2e/%2e%2e/package.json', '/assets/..%2f..%2fpackage.json']) {
      const res = await app.request('GET', path);
      expect(res.text, path).not.toContain('"workspaces"');
    }
  });
});
