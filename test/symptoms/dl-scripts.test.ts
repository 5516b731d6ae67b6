import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { command, RunCommandOutput } from '../../src/commands/run.js';

/**
 * Real Python with Debian's torch, through `repgen run --json`, in-process (no extra node start per run). The
 * command module is called directly: vite cannot follow src/cli.ts's variable dynamic import.
 */
const ROOT = join(import.meta.dirname, '../..');
const ENV = { REPGEN_PYTHON: '/usr/bin/python3', PATH: process.env.PATH ?? '' };

async function runJson(script: string): Promise<RunCommandOutput> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env: ENV, cwd: ROOT };
  const code = await command.run([`fixtures/scripts/${script}`, '--json', '--timeout', '150'], io);
  expect(err.join(''), 'stderr').toBe('');
  expect(code).toBe(0);
  const text = out.join('');
  expect(text.trim().split('\n')).toHaveLength(1);
  return RunCommandOutput.parse(JSON.parse(text));
}

describe('repgen run --json on real DL bugs (Debian python3-torch)', { timeout: 200_000 }, () => {
  it('shape mismatch in a CNN classifier', async () => {
    const r = await runJson('dl-shape-mismatch.py');
    expect(r.exitCode).toBe(1);
    expect(r.exception).toEqual({ type: 'RuntimeError', message: 'mat1 and mat2 shapes cannot be multiplied (8x400 and 256x10)' });
    expect(r.symptoms.map((s) => s.kind)).toEqual(['shape_mismatch']);
    expect(r.symptoms[0]?.evidence).toMatch(/main|dl-shape-mismatch/);
  });

  it('dtype mismatch (float64 into a float32 layer)', async () => {
    const r = await runJson('dl-dtype-mismatch.py');
    expect(r.exception?.type).toBe('RuntimeError');
    expect(r.symptoms.map((s) => s.kind)).toEqual(['dtype_mismatch']);
  });

  it('CUDA asked for on a CPU-only torch: "not compiled with CUDA"', async () => {
    const r = await runJson('dl-cuda-unavailable.py');
    expect(r.exception).toEqual({ type: 'AssertionError', message: 'Torch not compiled with CUDA enabled' });
    expect(r.symptoms.map((s) => s.kind)).toEqual(['cuda_unavailable']);
  });

  it('empty parameter list (layers in a plain list)', async () => {
    const r = await runJson('dl-empty-parameters.py');
    expect(r.exception).toEqual({ type: 'ValueError', message: 'optimizer got an empty parameter list' });
    expect(r.symptoms.map((s) => s.kind)).toEqual(['value_error']);
  });

  it('NaN loss: no crash, the first non-finite line as evidence', async () => {
    const r = await runJson('dl-nan-loss.py');
    expect(r.exitCode).toBe(0);
    expect(r.exception).toBeNull();
    expect(r.symptoms.map((s) => s.kind)).toEqual(['nan_inf']);
    expect(r.symptoms[0]?.evidence).toMatch(/^Epoch \d+\/10 - loss: (inf|nan)$/);
  });

  it('loss that does not decrease (the optimizer step is missing), accuracy at chance', async () => {
    const r = await runJson('dl-loss-flat.py');
    expect(r.exception).toBeNull();
    expect(r.symptoms.map((s) => s.kind)).toEqual(['loss_not_decreasing', 'accuracy_at_chance']);
    expect(r.symptoms[0]?.evidence).toMatch(/^epoch: 1\tTrain Loss : [\d.]+.*\nepoch: 8\tTrain Loss/);
  });
});
