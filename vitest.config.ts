import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Live-service tests (real Anthropic, a real cluster) only when asked for: `npm run test:e2e` with E2E_*=1.
    exclude: process.env.E2E ? [] : ['test/**/*.e2e.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores: real Python runs are heavy; keep two files at a time.
    maxWorkers: 2,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
