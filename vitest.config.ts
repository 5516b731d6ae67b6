import { defineConfig } from 'vitest/config';

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
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
