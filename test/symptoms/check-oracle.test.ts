import { describe, expect, it } from 'vitest';
import { behaviouralExpectations, sameNumber, showsObserved, stateOracle, valueNumbers } from '../../src/symptoms/check-oracle.js';
import { oracleAssertions } from '../../src/symptoms/oracle-assertions.js';
import { matchRun, readReport, readRun } from '../../src/symptoms/index.js';

/** A behavioural report: code, no error, and in words what it saw and what it expected (issue 28's first timm case). */
const SCALE_REPORT = [
  '# create_transform shows the wrong scale',
  '',
  '```python',
  'import timm',
  't = timm.data.create_transform(224, is_training=True, scale=(0.5, 1.2))',
  'print(t)',
  '```',
  '',
  'RandomResizedCrop is shown with 1.10 instead of 1.20; expected (0.500, 1.200).',
].join('\n');

const script = (assertion: string): string =>
  [
    'import timm',
    't = timm.data.create_transform(224, is_training=True, scale=(0.5, 1.2))',
    'upper = t.transforms[0].scale[1]',
    'print(f"scale = {t.transforms[0].scale}")',
    assertion,
    '',
  ].join('\n');

/** What Python prints when the assertion on line 5 of repro.py fails with `message`. */
const failedAt5 = (assertion: string, message: string, printed = 'scale = (0.5, 1.1)'): string =>
  `${printed}\nTraceback (most recent call last):\n  File "/work/repro.py", line 5, in <module>\n    ${assertion}\nAssertionError${message ? `: ${message}` : ''}\n`;

const GOOD = 'assert abs(upper - 1.2) < 1e-6, f"random_scale_range upper bound is {upper}, the report expects 1.2"';

describe('the oracle check', () => {
  const report = readReport(SCALE_REPORT);
  const exps = behaviouralExpectations(report);

  it('treats a report with expectations and no crash as behavioural, and a crash report as not', () => {
    expect(exps.length).toBeGreaterThan(0);
    const crash = readReport(
      `${SCALE_REPORT}\n\n\`\`\`\nTraceback (most recent call last):\n  File "a.py", line 1, in <module>\nValueError: bad\n\`\`\``,
    );
    expect(behaviouralExpectations(crash)).toEqual([]);
  });

  it('refuses an assertion whose expected value the report never states, naming what the report does state', () => {
    const [o] = oracleAssertions(script('assert abs(upper - 1.5) < 1e-6, f"upper is {upper}"'));
    const st = stateOracle(o!, exps);
    expect(st.ok).toBe(false);
    expect(!st.ok && st.reason).toMatch(/holds upper to 1\.5, which the report never states \(the report states: 1\.20/);
  });

  it('refuses an assertion of the value the reporter saw, and one that says only what the value must not be', () => {
    const [seen] = oracleAssertions(script('assert upper == 1.1'));
    expect(stateOracle(seen!, exps)).toMatchObject({ ok: false, reason: expect.stringMatching(/the value the reporter saw/) });
    const [not] = oracleAssertions(script('assert upper != 1.1'));
    expect(stateOracle(not!, exps)).toMatchObject({ ok: false, reason: expect.stringMatching(/must not be/) });
  });

  it('accepts an assertion of the report\'s expected value, in any of the report\'s spellings (1.2 for "1.20", a tuple)', () => {
    const [o] = oracleAssertions(script(GOOD));
    expect(stateOracle(o!, exps)).toMatchObject({ ok: true, reportObserved: '1.10' });
    const [tuple] = oracleAssertions(script('assert t.transforms[0].scale == (0.5, 1.2)'));
    expect(stateOracle(tuple!, exps)).toMatchObject({ ok: true });
  });

  it('accepts "should have raised" only where the report says it should raise, of a compatible class', () => {
    const raises = oracleAssertions('with pytest.raises(ValueError):\n    step(eta=-1)\n');
    const should = readReport(
      '# eta\n\n```python\nstep(eta=-1)\n```\n\nBoth calls execute without error. It should raise a ValueError for eta=-1.\n',
    );
    expect(stateOracle(raises[0]!, behaviouralExpectations(should))).toMatchObject({ ok: true });
    const typeError = oracleAssertions('with pytest.raises(TypeError):\n    step(eta=-1)\n');
    expect(stateOracle(typeError[0]!, behaviouralExpectations(should))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/expects ValueError/),
    });
    expect(stateOracle(raises[0]!, exps)).toMatchObject({ ok: false, reason: expect.stringMatching(/never says it should/) });
  });

  it('compares numbers to the precision the report wrote them with', () => {
    expect(sameNumber('1.10', '1.1')).toBe(true);
    expect(sameNumber('1.10', '1.0999999')).toBe(true);
    expect(sameNumber('1.10', '1.12')).toBe(false);
    expect(sameNumber('4', '4.0')).toBe(true);
    expect(sameNumber('4', '4.4')).toBe(false);
    expect(valueNumbers('torch.tensor([4.], dtype=torch.float32)')).toEqual(['4.']);
    expect(showsObserved('1.10', 'upper bound is 1.1')).toBe(true);
    expect(showsObserved('1.10', 'upper bound is 1.3')).toBe(false);
  });
});

describe('matchRun on a behavioural report (the oracle decides)', () => {
  const report = readReport(SCALE_REPORT);

  it('accepts a failing assertion of the report expectation as the reproduction, not as "the run crashed where the report shows no crash"', () => {
    const output = failedAt5(GOOD, 'random_scale_range upper bound is 1.1, the report expects 1.2');
    const m = matchRun(report, readRun(output, { exitCode: 1 }), { script: script(GOOD), output });
    expect(m.verdict).toBe('reproduced');
    expect(m.reasons.join(' ')).not.toMatch(/crashed where the report shows no crash/);
    expect(m.oracle).toMatchObject({
      form: 'compare',
      expected: '1.2',
      reportObserved: '1.10',
      observed: 'random_scale_range upper bound is 1.1, the report expects 1.2',
      held: false,
      line: 5,
    });
  });

  it('refuses a failing assertion of a value the report never states', () => {
    const bad = 'assert abs(upper - 1.5) < 1e-6, f"upper is {upper}"';
    const output = failedAt5(bad, 'upper is 1.1');
    const m = matchRun(report, readRun(output, { exitCode: 1 }), { script: script(bad), output });
    expect(m.verdict).toBe('not_reproduced');
    expect(m.reasons.join(' ')).toMatch(/which the report never states/);
  });

  it('asks for the actual value when the failing assertion prints none', () => {
    const bare = 'assert abs(upper - 1.2) < 1e-6';
    const output = failedAt5(bare, '', '');
    const quiet = script(bare).replace(/^print\(.*$/m, 'shown = str(t)');
    const m = matchRun(report, readRun(output, { exitCode: 1 }), { script: quiet, output });
    expect(m.verdict).toBe('partial');
    expect(m.reasons.join(' ')).toMatch(/never prints the actual value of upper/);
  });

  it('holds the run to the value the report saw: another wrong value is not the reported bug', () => {
    const output = failedAt5(GOOD, 'random_scale_range upper bound is 1.3, the report expects 1.2', 'scale = (0.5, 1.3)');
    const m = matchRun(report, readRun(output, { exitCode: 1 }), { script: script(GOOD), output });
    expect(m.verdict).toBe('partial');
    expect(m.reasons.join(' ')).toMatch(/where the report saw 1\.10/);
  });

  it('reads an assertion that holds as the expected behaviour (as at a fix), with its values', () => {
    const output = 'scale = (0.5, 1.2)\n';
    const m = matchRun(report, readRun(output, { exitCode: 0 }), { script: script(GOOD), output });
    expect(m.verdict).toBe('not_reproduced');
    expect(m.oracle).toMatchObject({ held: true, expected: '1.2', observed: 'scale = (0.5, 1.2)' });
  });

  it('accepts "should have raised" as a try/else that raises AssertionError, not as a faked exception', () => {
    const should = readReport(
      '# eta\n\n```python\nsched.step(eta=-1)\n```\n\nBoth calls execute without error. It should raise a ValueError for eta=-1.\n',
    );
    const s = [
      'import sched',
      'try:',
      '    sched.step(eta=-1)',
      'except ValueError as e:',
      '    print("raised:", e)',
      'else:',
      '    raise AssertionError("step(eta=-1) did not raise; the report expects a ValueError")',
      '',
    ].join('\n');
    const output = `Traceback (most recent call last):\n  File "/work/repro.py", line 7, in <module>\n    raise AssertionError("step(eta=-1) did not raise; the report expects a ValueError")\nAssertionError: step(eta=-1) did not raise; the report expects a ValueError\n`;
    const m = matchRun(should, readRun(output, { exitCode: 1 }), { script: s, output });
    expect(m.verdict).toBe('reproduced');
    expect(m.oracle).toMatchObject({ form: 'raises', expected: 'ValueError' });
  });

  it("keeps the reporter's own failing assert a reproduction when the run fails there", () => {
    const own = readReport(
      '# darknet\n\n    m = timm.create_model("darknet53", features_only=True)\n    y = m(x)\n    assert len(y) == 6 # fails\n',
    );
    const s =
      'import timm, torch\nx = torch.randn(1, 3, 256, 256)\nm = timm.create_model("darknet53", features_only=True)\ny = m(x)\nassert len(y) == 6 # fails\n';
    const output =
      'Traceback (most recent call last):\n  File "/work/repro.py", line 5, in <module>\n    assert len(y) == 6 # fails\nAssertionError\n';
    const m = matchRun(own, readRun(output, { exitCode: 1 }), { script: s, output });
    expect(m.verdict).toBe('reproduced');
    expect(m.oracle).toMatchObject({ expected: '6', held: false });
  });

  it("never asks for an output line shaped like the report's last line when that line is prose", () => {
    const prose = readReport(
      '# groups\n\n```python\nimport timm\nprint(groups)\n```\n\n```\nThe parameter falls into the last group and gets the wrong scale here.\n```\n',
    );
    const output = '[0.1, 0.2]\n';
    const m = matchRun(prose, readRun(output, { exitCode: 0 }), { script: 'import timm\nprint(groups)\n', output });
    expect(m.reasons.join(' ')).not.toMatch(/shaped like the report's last line/);
  });
});
