import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildResultComment } from '../../src/publish/build-result-comment.js';
import { dlBugsCassetteFiles, readDlBugsCassette, replayThroughPipeline } from '../helpers/replay-dl-bugs-cassette.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * Issue 13 on the dev cases: the verdict rules over every recorded real-model session of fixtures/cassettes/dl-bugs
 * (replayed through the real pipeline, no model, no sandbox). judge.py (fixtures/bench/judge.py, a copy of
 * shared/bench/judge.py) is run again here on each replayed final run, not taken from the recording, and every
 * "reproduced" must agree with it; every comment whose script ran must state the values it compared.
 */
const ROOT = join(import.meta.dirname, '../..');
const files = dlBugsCassetteFiles();
const exec = promisify(execFile);

async function judge(caseId: string, output: string, script: string): Promise<{ reproduced: boolean; line: string }> {
  const dir = makeTempDir('repgen-judge-');
  await writeFile(join(dir, 'run.txt'), output);
  await writeFile(join(dir, 'repro.py'), script);
  try {
    const { stdout } = await exec('/usr/bin/python3', [
      join(ROOT, 'fixtures/bench/judge.py'),
      join(ROOT, 'fixtures/bench/dl-bugs', caseId),
      join(dir, 'run.txt'),
      join(dir, 'repro.py'),
    ]);
    return { reproduced: true, line: stdout.trim() };
  } catch (e) {
    return { reproduced: false, line: String((e as { stdout?: string }).stdout ?? e).trim() };
  }
}

describe('the comments of the dl-bugs sessions', () => {
  it.each(files)('%s: a "reproduced" agrees with judge.py, and the comment states the values compared', async (file) => {
    const cassette = readDlBugsCassette(file);
    const { evidence } = await replayThroughPipeline(cassette);
    const { outcome, finalRun } = evidence;
    const caseId = cassette.case.replace(/^.*\//, '');
    if (outcome.status === 'reproduced') {
      expect(finalRun, 'a reproduction has a final run').not.toBeNull();
      const verdict = await judge(caseId, finalRun?.output ?? '', finalRun?.script ?? '');
      expect(verdict.reproduced, verdict.line).toBe(true);
    }
    const md = buildResultComment(outcome);
    if (outcome.scriptRan !== false && finalRun) {
      // The report's side and the run's side of each comparison, with whether they agree and why.
      expect(md).toMatch(/\*\*Compared:\*\*\n- .+: report `[^`]+`, run `[^`]+` — (agree|differ): /);
    }
    if (outcome.verdict === 'pattern_reproduced') expect(md).toMatch(/not compared/);
  });
});
