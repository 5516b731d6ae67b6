import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';
import { SLOW_SUITES } from './vitest.slow-suites.js';

export { SLOW_SUITES };

/**
 * `npm run test:quick`: the inner loop, under a minute on a quiet two-core machine. It leaves out the suites whose
 * time goes to real processes (SLOW_SUITES, vitest.slow-suites.ts). `npm test` (vitest.config.ts) runs them all; run
 * it before pushing.
 */
export default mergeConfig(
  base,
  defineConfig({
    test: {
      // mergeConfig appends to vitest.config.ts's own exclude list.
      exclude: SLOW_SUITES,
    },
  }),
);
