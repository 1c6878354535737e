import type { Reporter, TestModule } from "vitest/node";

/**
 * Ends the run with one plain line, `tests: N passed, N failed, N skipped`, that CI and people
 * can read without knowing vitest's own summary format.
 */
export default class SummaryLineReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0 };
    for (const m of modules) {
      let failedHere = 0;
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === "passed") count.passed++;
        else if (state === "failed") failedHere++;
        else count.skipped++;
      }
      // A file that failed to load, or whose beforeAll failed (its tests then show as skipped),
      // failed even though no test did: count it once.
      if (m.state() === "failed" && failedHere === 0) failedHere = 1;
      count.failed += failedHere;
    }
    process.stdout.write(`\ntests: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped\n`);
  }
}
