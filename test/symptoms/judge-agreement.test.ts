import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../src/exec/local/executor.js';
import { matchRun, readReport, readRun, type MatchVerdict } from '../../src/symptoms/index.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * The benchmark judge (fixtures/bench/judge.py, a copy of shared/bench/judge.py) against matchRun on real runs:
 * we agree on every correct reproduction and are at least as strict on everything else.
 */
const ROOT = join(import.meta.dirname, '../..');
const run = promisify(execFile);

async function judge(caseId: string, output: string, scriptPath: string): Promise<{ reproduced: boolean; line: string }> {
  const dir = makeTempDir('repgen-judge-');
  const outFile = join(dir, 'run.txt');
  await writeFile(outFile, output);
  try {
    const { stdout } = await run('/usr/bin/python3', [
      join(ROOT, 'fixtures/bench/judge.py'),
      join(ROOT, 'fixtures/bench/dl-bugs', caseId),
      outFile,
      scriptPath,
    ]);
    return { reproduced: true, line: stdout.trim() };
  } catch (e) {
    return { reproduced: false, line: String((e as { stdout?: string }).stdout ?? e).trim() };
  }
}

async function both(
  caseId: string,
  script: string,
): Promise<{ judge: { reproduced: boolean; line: string }; ours: MatchVerdict; reasons: string[] }> {
  const scriptPath = join(ROOT, script);
  const content = await readFile(scriptPath, 'utf8');
  const executor = createLocalExecutor({ python: '/usr/bin/python3' });
  const result = await executor
    .run({ files: [{ path: 'main.py', content }], entry: 'main.py', limits: { timeoutMs: 150_000 } })
    // Its warm server keeps the run folder until it is closed.
    .finally(() => executor.close?.());
  const report = readReport(await readFile(join(ROOT, 'fixtures/bench/dl-bugs', caseId, 'issue.md'), 'utf8'));
  const m = matchRun(report, readRun(result.output, result), { script: content, output: result.output });
  return { judge: await judge(caseId, result.output, scriptPath), ours: m.verdict, reasons: m.reasons };
}

describe('matchRun agrees with judge.py on real runs', { timeout: 200_000 }, () => {
  it.each(['so-046', 'so-054', 'so-080', 'so-101'])('%s: the reproduction in fixtures/repros is reproduced by both', async (id) => {
    const r = await both(id, `fixtures/repros/${id}.py`);
    expect(r.judge.line).toMatch(/^reproduced \(\w+Error, message overlap 1\.00\)$/);
    expect(r.ours).toBe('reproduced');
  });

  it('so-052 (silent): the judge asks for a check by hand; matchRun says "pattern reproduced" and names the loss it could not compare', async () => {
    const r = await both('so-052', 'fixtures/repros/so-052.py');
    expect(r.judge.line).toBe("reproduced (check by hand): the recorded output's shape appears");
    expect(r.ours).toBe('partial');
    expect(r.reasons.at(-1)).toMatch(
      /^pattern reproduced: the remaining values cannot be compared because they depend on (?:a model or data|the reporter's random state)/,
    );
    expect(r.reasons.join(' ')).not.toMatch(/values agree with the report/);
  });

  it.each([
    ['so-046', 'fixtures/scripts/dl-unrelated.py', false],
    ['so-080', 'fixtures/scripts/dl-shape-mismatch.py', false],
    // The judge does not look at crash scripts: a printed traceback fools it. matchRun is stricter.
    ['so-046', 'fixtures/scripts/dl-fake-print-so-046.py', true],
    ['so-046', 'fixtures/scripts/dl-fake-raise-so-046.py', true],
    ['so-091', 'fixtures/scripts/dl-fake-print-so-091.py', false],
  ] as const)('%s with %s: never reproduced by matchRun (judge fooled: %s)', async (id, script, judgeFooled) => {
    const r = await both(id, script);
    expect(r.ours).toBe('not_reproduced');
    expect(r.judge.reproduced).toBe(judgeFooled);
  });
});
