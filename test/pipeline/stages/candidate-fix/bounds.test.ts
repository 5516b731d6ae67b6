import { describe, expect, it } from 'vitest';
import type { CandidateRun } from '../../../../src/agent/run-candidate.js';
import type { ScriptExecutor } from '../../../../src/exec/types.js';
import { LlmOverloadedError } from '../../../../src/llm/errors.js';
import type { LlmClient, LlmRequest } from '../../../../src/llm/types.js';
import { silentLogger } from '../../../../src/log.js';
import { readCandidateAnswer, runCandidateFix, moduleOf, type PatchedCopies } from '../../../../src/pipeline/stages/candidate-fix/index.js';
import { parsePrompt } from '../../../../src/prompts/load-prompts.js';
import type { ReportResult } from '../../../../src/report/index.js';
import { fakeRunResult } from '../../../fakes/fake-executor.js';

/** The step's bounds and failures with fakes: no process runs, every call is counted. */
const prompt = parsePrompt(
  'candidate-fix',
  '---\nvariables: [report, expected, script, output, sources, context, feedback]\n---\n{{report}}{{expected}}{{script}}{{output}}{{sources}}{{context}}{{feedback}}',
  'test',
);
const final = {
  script: 'import toylib\n',
  seed: 0,
  run: fakeRunResult({ stderr: 'Traceback (most recent call last):\nValueError: x\n' }),
  reading: { traceback: null },
  match: { verdict: 'reproduced', score: 1, reasons: [] },
} as unknown as CandidateRun;
const report = { bug: { title: 't', coreProblem: 'c', observed: 'o', expected: 'e' }, reading: {} } as unknown as ReportResult;

function llm(replies: (string | Error)[]): LlmClient & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  return {
    provider: 'anthropic',
    model: 'fake',
    requests,
    complete: async (request) => {
      requests.push(request);
      const r = replies.shift();
      if (r === undefined || r instanceof Error) throw r ?? new Error('no reply scripted');
      return {
        text: r,
        model: 'fake',
        stopReason: 'end_turn',
        usage: { inputTokens: 1000, outputTokens: 100, costUsd: 0.01 },
        attempts: 1,
        durationMs: 1,
      };
    },
  };
}
const noRuns: ScriptExecutor = { name: 'none', run: () => Promise.reject(new Error('no run expected')) };
const copies = (make: PatchedCopies['make']): PatchedCopies => ({ read: async (_w, paths) => new Map(paths.map((p) => [p, null])), make });
const input = (budget: { tokens: number; costUsd: number; deadline?: number }) => ({
  final,
  confirmedSeeds: [1],
  report,
  bundles: [],
  workspace: { hostPath: '/nonexistent/checkout', packages: ['toylib'] },
  settings: { runTimeoutMs: 1000, runMemoryMb: 256 },
  budget,
});
const deps = (model: LlmClient, make: PatchedCopies['make'] = () => Promise.reject(new Error('no copy expected'))) => ({
  llm: model,
  executor: noRuns,
  prompt,
  copies: copies(make),
  log: silentLogger,
});

describe('the candidate fix: bounds and failures', () => {
  it("is not tried when the run's tokens, dollars or time are spent: no model call", async () => {
    for (const budget of [
      { tokens: 5000, costUsd: 5 },
      { tokens: 400_000, costUsd: 0 },
      { tokens: 400_000, costUsd: 5, deadline: 0 },
    ]) {
      const model = llm([]);
      const r = await runCandidateFix(input(budget), deps(model));
      expect(r.answer, JSON.stringify(budget)).toBe('not_tried');
      expect(model.requests).toEqual([]);
    }
  });

  it('asks at most 2 patches, each with a bounded answer, and stops at the step ceiling', async () => {
    const model = llm(['no diff here', 'still none', 'a third']);
    const r = await runCandidateFix(input({ tokens: 400_000, costUsd: 5 }), deps(model));
    expect(model.requests).toHaveLength(2);
    expect(model.requests.every((q) => q.maxTokens === 4096)).toBe(true);
    expect(r.attempts.map((a) => [a.result, a.noEvidence])).toEqual([
      ['no_evidence', 'bad_answer'],
      ['no_evidence', 'bad_answer'],
    ]);
    expect(r.usage).toEqual({ inputTokens: 2000, outputTokens: 200, costUsd: 0.02 });
    // The second prompt carries the first one's failure.
    expect(model.requests[1]!.messages[0]!.content).toMatch(/did not make the reproduction pass: the answer has no ```diff block/);
  });

  it('a model that does not answer: not tried, said why; the run goes on', async () => {
    const r = await runCandidateFix(
      input({ tokens: 400_000, costUsd: 5 }),
      deps(llm([new LlmOverloadedError('overloaded', { provider: 'anthropic' })])),
    );
    expect(r).toMatchObject({ answer: 'not_tried', summary: 'no candidate fix: the model did not answer (overloaded)' });
  });

  it('a copy that cannot be made is no evidence (infra), never the run failing', async () => {
    const diff = '--- a/toylib/m.py\n+++ b/toylib/m.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n';
    const r = await runCandidateFix(
      input({ tokens: 400_000, costUsd: 5 }),
      deps(llm([`\`\`\`diff\n${diff}\`\`\``, `\`\`\`diff\n${diff}\`\`\``]), () =>
        Promise.reject(new Error('ENOSPC: no space left on device')),
      ),
    );
    expect(r.attempts[0]).toMatchObject({ result: 'no_evidence', noEvidence: 'infra', diff });
    expect(r.attempts[0]!.reason).toMatch(/could not be tried: Error: ENOSPC/);
    expect(r.answer).toBe('no_evidence');
  });
});

describe('reading the answer and the modules a patch imports', () => {
  it('takes the first ```diff block and the first ```python block; a diff too long is refused', () => {
    const a = readCandidateAnswer('Fix:\n```diff\n--- a/x.py\n+++ b/x.py\n```\nCheck:\n```python\nassert True\n```\n');
    expect(a).toEqual({ ok: true, value: { diff: '--- a/x.py\n+++ b/x.py\n', check: 'assert True\n' } });
    expect(readCandidateAnswer('```diff\n' + '+x\n'.repeat(10_000) + '```').ok).toBe(false);
  });

  it('maps a patched file to the module it is imported as, inside the project packages only', () => {
    expect(moduleOf('toylib/blocks.py', ['toylib'])).toBe('toylib.blocks');
    expect(moduleOf('src/toylib/__init__.py', ['toylib'])).toBe('toylib');
    expect(moduleOf('scripts/run.py', ['toylib'])).toBeNull();
    expect(moduleOf('toylib/my-mod.py', ['toylib'])).toBeNull();
  });
});
