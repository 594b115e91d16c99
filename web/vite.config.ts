import { defineConfig } from 'vite';

// The dashboard is served by the API server from web/dist (server/src/routes/web.ts). Hashed assets go under
// /assets so the server can cache them forever; no inline scripts, so the CSP needs no 'unsafe-inline'.
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  server: { proxy: { '/v1': 'http://127.0.0.1:8080' } },
});
