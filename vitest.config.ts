import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { globRegExp, SLOW_SUITES } from './vitest.slow-suites.js';

const SLOW = SLOW_SUITES.map(globRegExp);

/**
 * The slow suites first, each group in vitest's own order (its timings from the last run, else the file's size). In a
 * fresh clone there are no timings, and a slow suite whose file is small (the escape suite's three one-line files)
 * would otherwise start last and run alone while the other workers idle.
 */
class SlowSuitesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const slow = (f: TestSpecification): boolean => SLOW.some((re) => re.test(relative(process.cwd(), f.moduleId)));
    return [...sorted.filter(slow), ...sorted.filter((f) => !slow(f))];
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Live-service tests (real Anthropic, a real cluster) only when asked for: `npm run test:e2e` with E2E_*=1.
    exclude: process.env.E2E ? [] : ['test/**/*.e2e.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Most suites wait on real processes (sandbox starts, timeouts, Redis) more than they compute: four files at a
    // time on two cores keeps the cores busy, also when other work competes for them (docs/development.md: 263 s
    // with two `yes` running, against 343 s with three files at a time and 444 s with two).
    maxWorkers: 4,
    // A test file runs in a worker that has already loaded RepGen's modules: importing them again for each of ~215
    // files was a third of the suite's CPU time. Files restore what they change (process.env, cwd) in after-hooks.
    isolate: false,
    sequence: { sequencer: SlowSuitesFirst },
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    // One temp root per run (TMPDIR), checked empty and removed at the end; each test file's makeTempDir folders go
    // when the file ends. The suite leaves nothing in /tmp (test/helpers/temp-root.ts).
    globalSetup: ['./test/helpers/temp-root.ts'],
    setupFiles: ['./test/helpers/remove-temp-dirs.ts'],
  },
});
