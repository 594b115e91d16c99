import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Each package's tests live in <package>/test; server tests start real servers, so give them room.
    include: ['*/test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One retry: the browser suites drive Chromium on a shared 2-core machine, where one stalled frame in
    // 450 tests must not throw a whole run away. A test that passes only on its retry is not hidden: the
    // closing summary names it as flaky (.ci/summary-reporter.ts), and a test that fails twice fails the run.
    retry: 1,
    // The CLI end-to-end tests need the compiled executable (cli/README.md); the dashboard tests the built app.
    globalSetup: ['./cli/test/global-setup.ts', './web/test/global-setup.ts'],
    reporters: ['default', './.ci/summary-reporter.ts'],
  },
});
