/**
 * The suites whose time goes to real processes: Redis and its workers, bubblewrap sandbox runs, environment builds
 * with uv, Python end to end, context builds on real repositories, bisects. `npm run test:quick`
 * (vitest.quick.config.ts) leaves them out; `npm test` (vitest.config.ts) starts them first, so that none of them is
 * left to run alone at the end. The list and the times are in docs/development.md, "Running the tests".
 */
export const SLOW_SUITES = [
  // Redis: the queue, the App's webhook server and the workers (processes, BullMQ's stalled checks).
  'test/**/*.redis.test.ts',
  // The sandbox: bubblewrap, the launcher, the warm pool, the local executor, the executors' conformance suites.
  'test/exec/sandbox/**',
  'test/exec/warm/**',
  'test/exec/local/**',
  'test/exec/executor-conformance.test.ts',
  'test/exec/kubernetes/conformance.test.ts',
  // Environments built with uv, and scripts run in them.
  'test/env/env-run.test.ts',
  'test/env/build/extension-build.test.ts',
  'test/env/build/project-build.test.ts',
  'test/env/uv-builder.test.ts',
  'test/pipeline/stages/env/import-ladder.test.ts',
  // Hostile builds (issue 38): uv, bwrap and Python under attack from a package's or a build command's code.
  'test/security/hostile-build/**',
  // Python end to end: bisects, the GitHub Action, the pipeline and the commands on real Python, the DL scripts'
  // judge agreement, the regression test under pytest, tier 0's probes.
  'test/bisect/run-bisect.test.ts',
  'test/commands/reproduce-bisect.test.ts',
  'test/action/run-action.test.ts',
  'test/pipeline/real-executor.test.ts',
  'test/pipeline/workspace-tier1.test.ts',
  'test/pipeline/stages/candidate-fix/candidate-fix.test.ts',
  'test/pipeline/oracle-reattempt.test.ts',
  'test/commands/run.test.ts',
  'test/commands/bench.test.ts',
  'test/commands/bench-f2p.test.ts',
  'test/symptoms/judge-agreement.test.ts',
  'test/symptoms/dl-scripts.test.ts',
  'test/github/build-repro-test.test.ts',
  'test/security/hostile-checker.test.ts',
  'test/complete/probes.test.ts',
  // Many processes each: the CLI's input checks as processes, hostile git repositories, Python in fake pods,
  // the context index on worker threads.
  'test/cli/validate-input.test.ts',
  'test/security/hostile-git.test.ts',
  'test/exec/kubernetes/executor.test.ts',
  'test/context/index/parallel-index.test.ts',
  // Real waits on timeouts of the HTTP stack.
  'test/llm/http-timeouts.test.ts',
  // Prettier and eslint over the whole repository: `npm run lint` and `npm run format:check` in the inner loop.
  'test/architecture/code-style.test.ts',
];

/** The glob forms the list uses: `**` any folders, `*` within one name. */
export function globRegExp(glob: string): RegExp {
  const escaped = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `^${escaped
      .replace(/\*\*\/?/g, '\u0000')
      .replace(/\*/g, '[^/]*')
      .replace(/\u0000/g, '.*')}$`,
  );
}
