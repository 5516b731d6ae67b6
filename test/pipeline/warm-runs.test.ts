import { describe, expect, it } from 'vitest';
import type { RunRequestInput, RunResult, ScriptExecutor } from '../../src/exec/types.js';
import { silentLogger } from '../../src/log.js';
import { warmRuns } from '../../src/pipeline/warm-runs.js';

const settings = { runTimeoutMs: 30_000, runMemoryMb: 2048 };
const workspace = { hostPath: '/srv/checkout' };

/** An executor that records its warm-ups and answers them when told. */
function recordingExecutor(answer: (req: RunRequestInput) => Promise<boolean>): ScriptExecutor & { asked: RunRequestInput[] } {
  const asked: RunRequestInput[] = [];
  return {
    name: 'fake',
    asked,
    run: () => Promise.reject(new Error('no runs here')) as Promise<RunResult>,
    warmUp: (req) => {
      asked.push(req);
      return answer(req);
    },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe('warmRuns', () => {
  it("warms once, with the runs' own shape: the fork server it starts serves every seed", async () => {
    const ex = recordingExecutor(() => Promise.resolve(true));
    warmRuns(ex, { report: { versions: [] }, settings, workspace }, silentLogger);
    await settle();
    expect(ex.asked.map((r) => r.seed)).toEqual([0]);
    const [r] = ex.asked;
    expect(r?.env).toEqual({ REPGEN_SEED: '0' });
    expect(r?.workspace).toEqual(workspace);
    expect(r?.limits).toMatchObject({ timeoutMs: 30_000, memoryMb: 2048 });
  });

  it('a refused or failing warm-up throws nowhere; an executor without warmUp is left alone', async () => {
    const ex = recordingExecutor(() => Promise.reject(new Error('pool full')));
    expect(() => warmRuns(ex, { report: { versions: [] }, settings }, silentLogger)).not.toThrow();
    await settle();
    expect(ex.asked.map((r) => r.seed)).toEqual([0]);
    const bare: ScriptExecutor = { name: 'bare', run: () => Promise.reject(new Error('unused')) as Promise<RunResult> };
    expect(() => warmRuns(bare, { report: { versions: [] }, settings }, silentLogger)).not.toThrow();
  });
});
