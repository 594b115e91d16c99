/**
 * Prints the plain closing line CI reads in any language ("tests: N passed, N failed, N skipped"),
 * since Vitest's own summary is not one of the formats CI recognises, and names every test that passed
 * only on its retry (vitest.config.ts), so a flaky test is seen rather than absorbed.
 */
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const flaky: string[] = [];
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') {
          passed++;
          if (t.diagnostic()?.flaky) flaky.push(`${relative(process.cwd(), m.moduleId)} > ${t.fullName}`);
        } else if (state === 'failed') failed++;
        else skipped++;
      }
    }
    for (const name of flaky) process.stdout.write(`\nflaky (failed, then passed on its retry): ${name}`);
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
