import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints `N passed, N failed` (and skipped) as the very last line of a run: CI reads that line,
 * and vitest's own summary has another shape.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      let moduleTests = 0;
      for (const test of mod.children.allTests()) {
        moduleTests += 1;
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
      // A file that failed to load has no tests but is a failure all the same.
      if (moduleTests === 0 && mod.state() === 'failed') failed += 1;
    }
    failed += unhandledErrors.length;
    // Printed after vitest's own summary so that it is the final line.
    setImmediate(() => process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`));
  }
}
