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
  it("warms the attempts' seed first, then each confirmation seed, with the runs' own shape", async () => {
    let release: (ok: boolean) => void = () => undefined;
    const ex = recordingExecutor((req) => (req.seed === 0 ? new Promise((r) => (release = r)) : Promise.resolve(true)));
    warmRuns(ex, { report: { versions: [] }, settings, confirmRuns: 3, workspace }, silentLogger);
    await settle();
    // The confirmation seeds wait for the first: their imports would slow tier 0's.
    expect(ex.asked.map((r) => r.seed)).toEqual([0]);
    release(true);
    await settle();
    expect(ex.asked.map((r) => r.seed)).toEqual([0, 1, 1001, 2001]);
    for (const r of ex.asked) {
      expect(r.env).toEqual({ REPGEN_SEED: String(r.seed) });
      expect(r.workspace).toEqual(workspace);
      expect(r.limits).toMatchObject({ timeoutMs: 30_000, memoryMb: 2048 });
    }
  });

  it('a refused or failing warm-up throws nowhere; an executor without warmUp is left alone', async () => {
    const ex = recordingExecutor(() => Promise.reject(new Error('pool full')));
    expect(() => warmRuns(ex, { report: { versions: [] }, settings, confirmRuns: 2 }, silentLogger)).not.toThrow();
    await settle();
    expect(ex.asked.map((r) => r.seed)).toEqual([0, 1, 1001]);
    const bare: ScriptExecutor = { name: 'bare', run: () => Promise.reject(new Error('unused')) as Promise<RunResult> };
    expect(() => warmRuns(bare, { report: { versions: [] }, settings, confirmRuns: 3 }, silentLogger)).not.toThrow();
  });
});
