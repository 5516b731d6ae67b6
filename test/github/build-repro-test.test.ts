import { execFileSync, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildReproTest, reproTestPath } from '../../src/github/publish/build-repro-test.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** The generated regression test, run by the real pytest: XFAIL while the bug exists, a failure once fixed. */
const PY = '/usr/bin/python3';
const dir = makeTempDir('repgen-pytest-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runPytest(script: string, markers: string[], fixedBy?: string): { status: number | null; out: string } {
  const file = join(dir, `test_issue_7_${Math.random().toString(36).slice(2)}.py`);
  writeFileSync(
    file,
    buildReproTest({
      issueNumber: 7,
      issueUrl: 'https://github.com/o/r/issues/7',
      script,
      markers,
      timeoutS: 60,
      ...(fixedBy ? { fixedBy } : {}),
    }),
  );
  const res = spawnSync(PY, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', file], { cwd: dir, encoding: 'utf8' });
  return { status: res.status, out: res.stdout + res.stderr };
}

const BUG = 'x = [1, 2]\nprint("value\'s \\"quoted\\" \\\\ backslash")\nraise IndexError("list index out of range")\n';

describe('buildReproTest', () => {
  it('is written where the PR puts it', () => {
    expect(reproTestPath(12)).toBe('tests/repro/test_issue_12.py');
  });

  it('is valid Python whatever quotes and backslashes the script holds', () => {
    const file = join(dir, 'compile_check.py');
    writeFileSync(
      file,
      buildReproTest({
        issueNumber: 7,
        issueUrl: 'https://github.com/o/r/issues/7',
        script: `${BUG}s = """triple"""\n`,
        markers: ['IndexError: list index out of range'],
      }),
    );
    execFileSync(PY, ['-m', 'py_compile', file]);
  });

  it('reports XFAIL while the bug reproduces (pytest exits 0)', () => {
    const { status, out } = runPytest(BUG, ['IndexError: list index out of range']);
    expect(out).toMatch(/1 xfailed/);
    expect(status).toBe(0);
  });

  it('fails (strict XPASS) once the bug is fixed, so the marker gets removed on purpose', () => {
    const { status, out } = runPytest('print("all good")\n', ['IndexError: list index out of range']);
    expect(out).toMatch(/XPASS\(strict\)|1 failed/);
    expect(status).toBe(1);
  });

  it('still counts a run that prints the bug symptom without crashing as the bug', () => {
    const { out } = runPytest('print("IndexError: list index out of range")\n', ['IndexError: list index out of range']);
    expect(out).toMatch(/1 xfailed/);
  });

  it('once the fix is verified it is a plain test: passes on the fixed code, fails if the bug comes back', () => {
    const fixed = runPytest('print("all good")\n', ['IndexError: list index out of range'], 'pull request #3 at abc');
    expect(fixed.out).toMatch(/1 passed/);
    expect(fixed.status).toBe(0);
    const back = runPytest(BUG, ['IndexError: list index out of range'], 'pull request #3 at abc');
    expect(back.out).toMatch(/1 failed/);
    expect(back.status).toBe(1);
  });

  it("a behavioural bug: the script's assertion of the report's expectation is what the test fails with, under strict xfail", () => {
    const oracle = {
      assertion: 'assert n == 4, f"pooled length is {n}, the report expects 4"',
      expected: '4',
      quote: 'The pooled length returns 3, expected 4 """ \\',
    };
    const script = (n: number) => `n = ${n}\nprint(f"pooled length = {n}")\n${oracle.assertion}\n`;
    const file = join(dir, 'test_issue_7_oracle.py');
    const content = buildReproTest({
      issueNumber: 7,
      issueUrl: 'https://github.com/o/r/issues/7',
      script: script(3),
      markers: [],
      oracle,
      timeoutS: 60,
    });
    writeFileSync(file, content);
    expect(content).toContain('@pytest.mark.xfail(strict=True');
    expect(content).toMatch(
      /The report's expectation, asserted by the script \(expected 4, from the report: "The pooled length returns 3, expected 4/,
    );
    expect(content).toContain(`ORACLE = ${JSON.stringify(oracle.assertion)}`);
    // Without the marker, the failure message is the report's expectation and the run's own output.
    const plain = join(dir, 'test_issue_7_oracle_plain.py');
    writeFileSync(plain, content.replace(/^@pytest\.mark\.xfail.*$/m, ''));
    const failing = spawnSync(PY, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', plain], { cwd: dir, encoding: 'utf8' });
    expect(failing.stdout).toMatch(/the report's expectation fails: assert n == 4/);
    expect(failing.stdout).toMatch(/pooled length is 3, the report expects 4/);
    const xfail = spawnSync(PY, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', file], { cwd: dir, encoding: 'utf8' });
    expect(xfail.stdout).toMatch(/1 xfailed/);
    const fixed = runPytest(script(4), []);
    expect(fixed.out).toMatch(/XPASS\(strict\)|1 failed/);
  });

  it('the fix named in the docstring cannot break out of it', () => {
    const file = join(dir, 'fixed_by_check.py');
    writeFileSync(
      file,
      buildReproTest({
        issueNumber: 7,
        issueUrl: 'https://github.com/o/r/issues/7',
        script: BUG,
        markers: [],
        fixedBy: 'x"""\nimport os; os.system("id")\\',
      }),
    );
    execFileSync(PY, ['-m', 'py_compile', file]);
    const imports = spawnSync(
      PY,
      [
        '-c',
        'import ast,sys; m=ast.parse(open(sys.argv[1]).read()); print(sum(isinstance(n,(ast.Import,ast.ImportFrom)) for n in m.body))',
        file,
      ],
      { encoding: 'utf8' },
    );
    expect(imports.stdout.trim()).toBe('2');
  });
});
