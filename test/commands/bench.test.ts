import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { longestFirst, runBenchCommand } from '../../src/commands/bench.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import { benchMarkdown, benchTotals, type BenchCase } from '../../src/commands/bench-report.js';
import { makeTempDir } from '../helpers/temp-dir.js';

function io(cwd: string, env: NodeJS.ProcessEnv = {}): CliIo & { out: string; err: string } {
  const o: CliIo & { out: string; err: string } = {
    out: '',
    err: '',
    cwd,
    env: { REPGEN_PYLINT: '0', REPGEN_CONFIRM_RUNS: '1', ...env },
    stdout: (t) => void (o.out += t),
    stderr: (t) => void (o.err += t),
  };
  return o;
}

const FIXTURES = resolve(import.meta.dirname, '../../fixtures/bench');

describe('repgen bench', () => {
  it(
    "runs every case with the real executor, records judge.py on the run's own output, totals by symptom",
    { timeout: 240_000 },
    async () => {
      const root = makeTempDir('repgen-bench-');
      await cp(join(FIXTURES, 'judge.py'), join(root, 'judge.py'));
      for (const c of ['so-054', 'so-050']) await cp(join(FIXTURES, 'dl-bugs', c), join(root, 'cases', c), { recursive: true });
      const t = io(root);
      const code = await runBenchCommand(['cases', '--llm', 'none', '--out', 'results/bench.md', '--concurrency', '2'], t);
      expect(code).toBe(0);
      // Progress: which cases run and how many are done, as each starts and ends.
      expect(t.err).toContain('repgen bench: [1/2] so-050 started; 0/2 done, running so-050\n');
      expect(t.err).toContain('repgen bench: [2/2] so-054 started; 0/2 done, running so-050, so-054\n');
      const took = String.raw`\((?:[\d.]+ s|\d+ min \d\d s)\)`;
      expect(t.err).toMatch(
        new RegExp(String.raw`^repgen bench: so-05[04] ${took}: reproduced; judge: reproduced[^\n]*; 1/2 done, running so-05[04]$`, 'm'),
      );
      expect(t.err).toMatch(
        new RegExp(String.raw`^repgen bench: so-05[04] ${took}: reproduced; judge: reproduced[^\n]*; 2/2 done, none running$`, 'm'),
      );
      const json = JSON.parse(await readFile(join(root, 'results', 'bench.json'), 'utf8'));
      const byId = Object.fromEntries(json.cases.map((c: BenchCase) => [c.id, c]));
      expect(byId['so-054']).toMatchObject({ status: 'reproduced', symptom: 'crash', confirmation: '1/1', judgeReproduced: true });
      expect(byId['so-054'].judge).toMatch(/^reproduced \(RuntimeError/);
      // Incomplete code (an undefined layer class, an init function, the device) completed by tier 0's analysis.
      expect(byId['so-050']).toMatchObject({ status: 'reproduced', symptom: 'crash', judgeReproduced: true });
      expect(json.totals.falsePositives).toEqual([]);
      const md = await readFile(join(root, 'results', 'bench.md'), 'utf8');
      expect(md).toMatch(/\| so-054 \| crash \(dtype_mismatch\) \| reproduced \| 1\/1 \| 1 \|/);
      expect(md).toMatch(/\| crash \| 2 \| 2 \|/);
      expect(await readFile(join(root, 'results', 'bench-cases', 'so-054', 'repro.py'), 'utf8')).toMatch(/^import torch/);
    },
  );

  it('starts the cases that took longest in the last run first; cases it has no time for go first', () => {
    const ids = ['a', 'b', 'c', 'd'];
    expect(longestFirst(ids, new Map())).toEqual([0, 1, 2, 3]);
    expect(
      longestFirst(
        ids,
        new Map([
          ['a', 100],
          ['b', 9000],
          ['d', 500],
        ]),
      ),
    ).toEqual([2, 1, 3, 0]);
    expect(
      longestFirst(
        ids,
        new Map([
          ['a', 5],
          ['b', 5],
          ['c', 5],
          ['d', 5],
        ]),
      ),
    ).toEqual([0, 1, 2, 3]);
  });

  it('reads the last times from the results file of the same folder only; a broken one is ignored', async () => {
    const root = makeTempDir('repgen-bench-order-');
    for (const c of ['so-050', 'so-054']) await cp(join(FIXTURES, 'dl-bugs', c), join(root, 'cases', c), { recursive: true });
    await mkdir(join(root, 'results'));
    // Every run fails at once: only the order the cases start in matters here.
    const executor = new FakeExecutor(() => ({ exitCode: 1, stderr: 'no' }));
    const started = async (previous: string | null): Promise<string[]> => {
      if (previous !== null) await writeFile(join(root, 'results', 'bench.json'), previous);
      const t = io(root);
      await runBenchCommand(['cases', '--llm', 'none', '--out', 'results/bench.md', '--concurrency', '1'], t, { executor });
      return [...t.err.matchAll(/\] (so-\d+) started/g)].map((m) => m[1] ?? '');
    };
    const times = (dir: string) =>
      JSON.stringify({
        dir,
        cases: [
          { id: 'so-050', durationMs: 10 },
          { id: 'so-054', durationMs: 90_000 },
        ],
      });
    expect(await started(times(join(root, 'cases')))).toEqual(['so-054', 'so-050']);
    expect(await started(times('/elsewhere'))).toEqual(['so-050', 'so-054']);
    expect(await started('{not json')).toEqual(['so-050', 'so-054']);
    // The file the first run wrote holds both cases' times, so a second run orders by them.
    await writeFile(join(root, 'results', 'bench.json'), '');
    await started(null);
    const written = JSON.parse(await readFile(join(root, 'results', 'bench.json'), 'utf8'));
    expect(written.cases.map((c: BenchCase) => c.id)).toEqual(['so-050', 'so-054']);
  });

  it('counts a judge-refuted "reproduced" as a false positive (pure totals)', () => {
    const base = {
      summary: '',
      kind: 'value_error',
      attempts: 1,
      durationMs: 1000,
      tokens: 0,
      costUsd: 0,
      confirmation: '3/3',
      offlineFeasible: true,
      blockers: [],
    };
    const cases: BenchCase[] = [
      { ...base, id: 'a', status: 'reproduced', symptom: 'crash', judge: 'reproduced', judgeReproduced: true },
      { ...base, id: 'b', status: 'reproduced', symptom: 'silent', judge: 'not reproduced: x', judgeReproduced: false },
      { ...base, id: 'c', status: 'not_reproduced', symptom: 'silent', judge: null, judgeReproduced: null },
    ];
    expect(benchTotals(cases)).toMatchObject({
      falsePositives: ['b'],
      bySymptom: { crash: { cases: 1, reproduced: 1 }, silent: { cases: 2, reproduced: 1 } },
      byKind: { value_error: { cases: 3, reproduced: 2 } },
    });
    expect(benchMarkdown(cases, { dir: 'd', llm: 'none' })).toMatch(/False positives \(reproduced but not confirmed by judge.py\): b\./);
  });

  it('refuses a folder with no cases', async () => {
    const root = makeTempDir('repgen-bench-empty-');
    await expect(runBenchCommand(['.'], io(root))).rejects.toThrow(/no case folders/);
  });
});
