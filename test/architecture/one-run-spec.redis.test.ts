// Issue 14's "one way to start a run": the CLI, the bench and the App's worker each resolve the same run spec
// from the same operator settings and hand the pipeline the same settings through reproduceIssue.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { runBenchCommand } from '../../src/commands/bench.js';
import { runReproduceCommand } from '../../src/commands/reproduce.js';
import { readOperatorEnv } from '../../src/config/operator-env.js';
import type { RunStages } from '../../src/pipeline/ports.js';
import type { ReproSettings } from '../../src/pipeline/settings.js';
import { resolveRunSpec } from '../../src/pipeline/run-spec.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import { simulate } from '../fakes/repro-fixtures.js';
import { commentPayload, postWebhook } from '../github/webhook-fixtures.js';
import { makeGitRepo, reproducedOutcome, SECRET, startHarness, type Harness } from '../workers/harness.js';
import { waitFor } from '../helpers/poll.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** The operator's settings, all away from their defaults. */
const OPERATOR = {
  REPGEN_MAX_ATTEMPTS: '4',
  REPGEN_MAX_TOKENS: '12345',
  REPGEN_MAX_COST_USD: '0.5',
  REPGEN_WALL_CLOCK_MS: '600000',
  REPGEN_RUN_TIMEOUT_MS: '7000',
  REPGEN_RUN_MEMORY_MB: '1536',
  REPGEN_CONFIRM_RUNS: '2',
  REPGEN_PARALLEL_RUNS: '1',
  REPGEN_ATTEMPTS_PER_BUNDLE: '2',
  REPGEN_PYLINT: '0',
  REPGEN_TIER0: 'true',
  REPGEN_PROBE_CACHE_DIR: 'off',
};

interface Seen {
  settings: ReproSettings;
  llmReason: string | undefined;
}

/** Stages 1-5 that record what reached them and run one greedy script through the executor they were given. */
function recordingStages(into: Seen[]): RunStages {
  return async (input, deps, signal) => {
    // A script that asks for more than the operator allows: the executor handed over must hold it to the ceilings.
    await deps.executor.run(
      { files: [{ path: 'x.py', content: 'print(1)\n' }], entry: 'x.py', limits: { timeoutMs: 3_600_000, memoryMb: 65_536 } },
      signal,
    );
    into.push({ settings: input.settings, llmReason: deps.llmReason });
    return {
      outcome: reproducedOutcome(),
      report: null,
      plan: null,
      probe: null,
      context: null,
      tier0: null,
      finalRun: null,
      confirm: null,
    };
  };
}

function io(cwd: string, env: NodeJS.ProcessEnv): CliIo {
  return { cwd, env, stdout: () => undefined, stderr: () => undefined };
}

let h: Harness;
let repo: ReturnType<typeof makeGitRepo>;
let root: string;
beforeAll(async () => {
  h = await startHarness('one-spec', { github: { issues: { 77: { title: 't', body: 'RuntimeError: boom' } } } });
  repo = makeGitRepo();
  root = makeTempDir('repgen-one-spec-');
  await mkdir(join(root, 'cases', 'case-1'), { recursive: true });
  await writeFile(join(root, 'cases', 'case-1', 'issue.md'), 'RuntimeError: boom\n');
  await writeFile(join(root, 'issue.md'), 'RuntimeError: boom\n');
});
afterAll(async () => {
  await h?.close();
  repo?.cleanup();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('one run spec for every entry point', () => {
  it('the CLI, the bench and the worker hand the pipeline the same settings, caps and limits', async () => {
    const seen: Record<'cli' | 'bench' | 'worker', Seen[]> = { cli: [], bench: [], worker: [] };
    const executors = { cli: new FakeExecutor(simulate), bench: new FakeExecutor(simulate), worker: new FakeExecutor(simulate) };

    const env = { ...OPERATOR, PATH: process.env.PATH ?? '' };
    expect(
      await runReproduceCommand(['--issue', 'issue.md', '--out', 'out', '--llm', 'none'], io(root, env), {
        stages: recordingStages(seen.cli),
        executor: executors.cli,
      }),
    ).toBe(0);
    await runBenchCommand(['cases', '--llm', 'none', '--out', 'bench/results.md'], io(root, env), {
      stages: recordingStages(seen.bench),
      executor: executors.bench,
      llm: null,
    });
    const w = await h.startWorker(null, OPERATOR, { executor: executors.worker, llm: null, stages: recordingStages(seen.worker) });
    await postWebhook(
      h.app.url,
      'issue_comment',
      commentPayload('/repgen', { issueNumber: 77, sender: { login: 'Codertocat' }, cloneUrl: repo.path }),
      { secret: SECRET },
    );
    await waitFor(() => seen.worker.length > 0 && [...h.gh.comments.values()].some((c) => /Reproduced/.test(c.body)), {
      what: 'the worker run',
    });
    await w.close(0);

    const expected = resolveRunSpec(readOperatorEnv(OPERATOR), null, {}).settings;
    expect(expected).toMatchObject({ maxAttempts: 4, maxTokens: 12345, maxCostUsd: 0.5, runTimeoutMs: 7000, runMemoryMb: 1536 });
    for (const where of ['cli', 'bench', 'worker'] as const) {
      expect(seen[where], where).toHaveLength(1);
      expect(seen[where][0]?.settings, where).toEqual(expected);
      expect(seen[where][0]?.llmReason, where).toMatch(/^no LLM/);
      // The executor the pipeline got imposes the operator's run limits on a script that asks for more.
      const greedy = executors[where].requests.find((r) => r.entry === 'x.py');
      expect(greedy?.limits, where).toMatchObject({ timeoutMs: 7000, memoryMb: 1536 });
    }
  });
});
