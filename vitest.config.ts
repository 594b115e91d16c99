import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Each package's tests live in <package>/test; server tests start real servers, so give them room.
    include: ['*/test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The CLI end-to-end tests need the compiled executable (cli/README.md); the dashboard tests the built app.
    globalSetup: ['./cli/test/global-setup.ts', './web/test/global-setup.ts'],
    reporters: ['default', './.ci/summary-reporter.ts'],
  },
});
