import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { topLevelStop, unreachedChecksNote, withoutUnreachedChecks } from '../../../../src/pipeline/stages/confirm/unreached-checks.js';
import { makeTempDir } from '../../../helpers/temp-dir.js';

/** torchmetrics #1573's shape: the symptom's check fails, the reporter's hope after it never runs on the bug. */
const HOPE = [
  'score = 82685.53', // 1
  'print(score)', // 2
  'assert score <= 1.0, f"score is {score}, never above 1"', // 3
  'assert score < 0.0, f"score is {score}, the report expects a negative value"', // 4
  'print("done")', // 5
].join('\n');

const lineCount = (s: string) => s.split('\n').length;

describe('checks no run reached are taken out, every line kept', () => {
  it('the check after the failing one becomes `pass` with its text as a comment; the note names both lines', async () => {
    const t = await withoutUnreachedChecks(HOPE, [3, 3, 3, 3]);
    expect(t).not.toBeNull();
    const lines = t!.script.split('\n');
    expect(lineCount(t!.script)).toBe(lineCount(HOPE));
    expect(lines[2]).toBe(HOPE.split('\n')[2]);
    expect(lines[3]).toBe(
      'pass  # RepGen: not checked, no run reaches it (each stops at line 3): assert score < 0.0, f"score is {score}, the report expects a negative value"',
    );
    expect(lines[4]).toBe('print("done")');
    expect(t!.removed).toEqual([{ line: 4, endLine: 4, text: HOPE.split('\n')[3] }]);
    expect(unreachedChecksNote(t!)).toMatch(
      /^Took out 1 check\(s\) after the failed check at line 3 that no run reached \(every run stopped there\): line 4 `assert score < 0\.0/,
    );
  });

  it('runs that stopped at different lines, or at none, leave the script as it is', async () => {
    expect(await withoutUnreachedChecks(HOPE, [3, 4])).toBeNull();
    expect(await withoutUnreachedChecks(HOPE, [3, null])).toBeNull();
    expect(await withoutUnreachedChecks(HOPE, [])).toBeNull();
    expect(await withoutUnreachedChecks(HOPE, [4])).toBeNull(); // nothing after line 4 is a check
    expect(await withoutUnreachedChecks(HOPE, [99])).toBeNull();
  });

  it('inside a loop only what follows the loop goes: a later check of its body may have run in an earlier pass', async () => {
    const s = ['for x in [1, 2]:', '    assert x < 2', '    assert x > 0', 'assert x == 3', 'raise SystemExit(1)'].join('\n');
    const t = await withoutUnreachedChecks(s, [2]);
    expect(t!.removed.map((r) => r.line)).toEqual([4, 5]);
    expect(t!.script.split('\n')[2]).toBe('    assert x > 0');
  });

  it("inside `if __name__ == '__main__':` and `with`, later checks of the block go too; a finally clause stays", async () => {
    const s = [
      'import sys', // 1
      "if __name__ == '__main__':", // 2
      '    with open(__file__) as f:', // 3
      '        assert f.read(0) == "x"', // 4
      '        assert v == 1', // 5
      '    try:', // 6
      '        pass', // 7
      '    finally:', // 8
      '        assert True', // 9
      '    sys.exit(2)', // 10
      '    sys.exit(0)', // 11
    ].join('\n');
    const t = await withoutUnreachedChecks(s, [4]);
    expect(t!.removed.map((r) => r.line)).toEqual([5, 9, 10]);
    // A finally clause that follows the stop is after it too; one around the stop would run, and is not after it.
    const around = ['try:', '    assert int("1") == 2', '    assert v', 'finally:', '    assert True', 'assert False'].join('\n');
    expect((await withoutUnreachedChecks(around, [2]))!.removed.map((r) => r.line)).toEqual([3, 6]);
  });

  it('assert calls and failing exits count; `sys.exit(0)`, prints and checks inside earlier definitions do not', async () => {
    const s = [
      'import sys, torch', // 1
      'def check(v):', // 2
      '    assert v', // 3
      'torch.testing.assert_close(torch.ones(1), torch.zeros(1))', // 4
      'torch.testing.assert_close(v, v)', // 5
      'print(v)', // 6
      'sys.exit(0)', // 7
      'check(v)', // 8
      'exit(3)', // 9
    ].join('\n');
    const t = await withoutUnreachedChecks(s, [4]);
    expect(t!.removed.map((r) => r.line)).toEqual([5, 9]);
    expect(t!.script.split('\n')[2]).toBe('    assert v');
  });

  it('a check over several lines keeps its line count: `pass` on the first, comments after', async () => {
    const s = ['assert 1 == 0', 'assert (', '    x == 2', '), "no"', 'print(x)'].join('\n');
    const t = await withoutUnreachedChecks(s, [1]);
    expect(t!.removed).toEqual([{ line: 2, endLine: 4, text: 'assert (' }]);
    expect(t!.script.split('\n')).toEqual([
      'assert 1 == 0',
      'pass  # RepGen: not checked, no run reaches it (each stops at line 1): assert (',
      '# x == 2',
      '# ), "no"',
      'print(x)',
    ]);
  });

  it('after a crash nothing goes: the checks that follow are all the script says of the working call', async () => {
    const s = ['import torch', 'y = torch.ones(6).reshape(-1, 7)', 'assert tuple(y.shape) == (6,)'].join('\n');
    expect(await withoutUnreachedChecks(s, [2])).toBeNull();
    // A failed check stated as a raise or an assert call is a check as an assert is.
    expect(
      (await withoutUnreachedChecks(s.replace('y = torch', 'raise SystemExit(1)\ny = torch'), [2]))!.removed.map((r) => r.line),
    ).toEqual([4]);
    expect((await withoutUnreachedChecks(`torch.testing.assert_close(1, 2)\n${s}`, [1]))!.removed.map((r) => r.line)).toEqual([4]);
  });

  it('statements on the stop line itself, a check sharing its line with code, and a broken script are left alone', async () => {
    expect(await withoutUnreachedChecks('assert 1 == 0; assert x == 2\n', [1])).toBeNull();
    expect(await withoutUnreachedChecks('assert 1 == 0\nassert x == 2; print(x)\n', [1])).toBeNull();
    expect(await withoutUnreachedChecks('assert 1 == 0\nassert x == (\n', [1])).toBeNull();
    // A trailing comment stays after the kept text; a lone check in a branch becomes a `pass` the branch can hold.
    const t = await withoutUnreachedChecks('assert 1 == 0\nif x:\n    raise AssertionError("x")  # the bug\n', [1]);
    expect(t!.script).toBe(
      'assert 1 == 0\nif x:\n    pass  # RepGen: not checked, no run reaches it (each stops at line 1): raise AssertionError("x")  # the bug\n',
    );
  });

  it('hostile: the kept text of a check cannot end the comment or start code (one line, newlines stay comments)', async () => {
    const s = 'assert 1 == 0\nassert x, """\nimport os; os.system("id")\n"""\n';
    const t = await withoutUnreachedChecks(s, [1]);
    expect(t!.script.split('\n').slice(1, 4)).toEqual([
      'pass  # RepGen: not checked, no run reaches it (each stops at line 1): assert x, """',
      '# import os; os.system("id")',
      '# """',
    ]);
  });
});

describe('where a run stopped', () => {
  const frame = (file: string, fn: string, line: number) => ({ file, function: fn, line });
  const tb = (frames: ReturnType<typeof frame>[]) => ({
    traceback: { frames, exception: { type: 'AssertionError', message: '' }, chain: [] },
  });

  it("the script's own top-level frame, not a module it imports nor a function it calls", () => {
    const reading = tb([
      frame('/work/repro.py', '<module>', 12),
      frame('/work/repro.py', 'check', 3),
      frame('/ws/toylib/__init__.py', '<module>', 1),
    ]);
    expect(topLevelStop(reading as never)).toBe(12);
    expect(topLevelStop(tb([frame('/ws/toylib/repro_utils.py', '<module>', 4)]) as never)).toBeNull();
    expect(topLevelStop({ traceback: null })).toBeNull();
  });

  it('on a real run: the edited script fails at the same line with the same output as the original', async () => {
    const dir = makeTempDir('repgen-unreached-');
    const original = join(dir, 'repro.py');
    writeFileSync(original, HOPE);
    const a = spawnSync('python3', [original], { encoding: 'utf8' });
    expect(a.status).toBe(1);
    const stop = Number(/File ".*repro\.py", line (\d+), in <module>/.exec(a.stderr)?.[1]);
    expect(stop).toBe(3);
    const t = await withoutUnreachedChecks(HOPE, [stop]);
    writeFileSync(original, t!.script);
    const b = spawnSync('python3', [original], { encoding: 'utf8' });
    expect([b.status, b.stdout, b.stderr]).toEqual([a.status, a.stdout, a.stderr]);
    // With the bug gone (a score of 0.0, as the maintainers' fix gives) the edited script passes and the original fails.
    writeFileSync(original, t!.script.replace('82685.53', '0.0'));
    expect(execFileSync('python3', [original], { encoding: 'utf8' })).toBe('0.0\ndone\n');
    writeFileSync(original, HOPE.replace('82685.53', '0.0'));
    expect(spawnSync('python3', [original]).status).toBe(1);
  });
});
