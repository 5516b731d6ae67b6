import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { showNotebookValues } from '../../src/complete/notebook-values.js';

const run = (code: string): { out: string; status: number } => {
  try {
    return { out: execFileSync('/usr/bin/python3', ['-c', code], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }), status: 0 };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; status?: number };
    return { out: `${e.stdout ?? ''}${e.stderr ?? ''}`, status: e.status ?? -1 };
  }
};

describe('notebook values the report shows in a comment', () => {
  it('prints a bare expression followed by an output comment, a tuple as the notebook shows it', () => {
    const r = showNotebookValues('a = 1\nb = 2\na, b\n\n# outputs: (1, 2)\n');
    expect(r.code).toContain('print((a, b))');
    expect(r.edits[0]).toMatch(/printed 1 bare expression/);
    expect(run(r.code).out.trim()).toBe('(1, 2)');
  });

  it('reads a trailing output comment, and leaves expressions the report shows no value for alone', () => {
    const r = showNotebookValues('x = [1, 2]\nx[0]  # -> 1\nx\nlen(x)\n');
    expect(r.code.split('\n')).toEqual(['x = [1, 2]', 'print(x[0])  # -> 1', 'x', 'len(x)', '']);
  });

  it('never touches assignments, calls, statements or indented lines', () => {
    const code = 'y = f(x)\n# outputs: 3\nf(x)\n# outputs: 3\nif y:\n    y\n    # out: 3\nreturn_value == 3\n';
    const r = showNotebookValues(code);
    expect(r.code).not.toContain('print(y)');
    expect(r.code).not.toContain('print(f(x))');
    expect(r.code).toContain('    y\n');
  });

  it('asserts the first value where the same expression is shown again with another: fails while they differ, passes when they agree', () => {
    const report = (second: string) => `v = [4.0]\nv\n# outputs: [4.0]\n\nv = ${second}\nv\n#outputs: [3.6]\n`.replace('\n', '\n');
    const bug = showNotebookValues(report('[3.6]'));
    expect(bug.edits[1]).toMatch(/asserted that the expression the report shows twice/);
    expect(bug.code).toContain(`assert str(repgen_shown) == '[4.0]'`);
    const failing = run(bug.code);
    expect(failing.status).toBe(1);
    expect(failing.out).toMatch(/AssertionError: v is \[3\.6\]; the report shows \[4\.0\] for it above/);
    expect(run(showNotebookValues(report('[4.0]')).code).status).toBe(0);
  });

  it('makes no assertion when the report shows the same value both times', () => {
    const r = showNotebookValues('v = 1\nv\n# out: 1\nv\n# out: 1\n');
    expect(r.code).not.toContain('assert');
    expect(r.edits).toHaveLength(1);
  });

  it('asserts the first printed value where the same object, used another way, prints another: fails while they differ', () => {
    const code = [
      'class Acc:',
      '    def __init__(self, bug):',
      '        self.bug, self.n = bug, []',
      '    def update(self, *xs):',
      '        self.n.extend(xs)',
      '    def compute(self):',
      '        return float("nan") if self.bug and len(self.n) > 3 and all(isinstance(x, int) for x in self.n) else 0.5',
      '    def reset(self):',
      '        self.n = []',
      'metric = Acc(BUG)',
      'metric.update(1.0, 2.0, 3.0, 4.0)',
      'print(metric.compute())  # 0.5',
      'metric.reset()',
      'metric.update(1)',
      'metric.update(2)',
      'metric.update(3)',
      'metric.update(4)',
      'print(metric.compute())  # nan',
      '',
    ].join('\n');
    const r = showNotebookValues(code);
    expect(r.code).toContain(
      `repgen_shown = metric.compute()  # added by RepGen\nprint(repgen_shown)  # nan\nassert str(repgen_shown) == '0.5'`,
    );
    expect(r.edits.at(-1)).toMatch(/asserted that the value the report prints twice/);
    expect(run(r.code.replace('BUG', 'True')).status).not.toBe(0);
    expect(run(r.code.replace('BUG', 'False')).status).toBe(0);
  });

  it('leaves printed values alone when the name is assigned again in between (another computation) or the comment is words', () => {
    const other = "score = 1.5\nprint(score)  # prints '1.5'\nscore = -3.0\nprint(score)  # prints '-3.0'\n";
    expect(showNotebookValues(other).code).toBe(other);
    const words = 'x = 1\nprint(x)  # works\nprint(x)  # still works here\n';
    expect(showNotebookValues(words).code).toBe(words);
  });
});
