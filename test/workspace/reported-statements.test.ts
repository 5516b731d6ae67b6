import { describe, expect, it } from 'vitest';
import { notebookStatements } from '../../src/report/notebook-statements.js';
import { failingAssertion } from '../../src/symptoms/failing-assertion.js';
import { messageOverlap } from '../../src/symptoms/match-run.js';
import { readF2pCase, handF2p } from '../../src/workspace/bench-f2p.js';
import { reportedProjectStatements } from '../../src/workspace/reported-statements.js';

const IPY7 = `---------------------------------------------------------------------------
ImportError                               Traceback (most recent call last)
<ipython-input-3-37004d024db3> in <module>()
     26
     27 get_ipython().system('pip install -U toylib')
---> 28 import toylib
     29

/usr/local/lib/python3.6/dist-packages/toylib/helpers.py in <module>()
----> 6 from torch._six import container_abcs

ImportError: cannot import name 'container_abcs'`;

const IPY8 = `Cell In[4], line 3
      1 import torch
----> 3 out = toylib.blocks.Block(64, 128)(torch.zeros(1, 64, 8, 8))
File ~/venv/lib/python3.10/site-packages/toylib/blocks.py:42, in Block.forward(self, x)
---> 42 return x + self.skip(x)`;

describe('notebookStatements', () => {
  it("takes the marked line of the notebook's own cell, not of library frames (IPython 7 and 8)", () => {
    expect(notebookStatements(IPY7)).toEqual(['import toylib']);
    expect(notebookStatements(IPY8)).toEqual(['out = toylib.blocks.Block(64, 128)(torch.zeros(1, 64, 8, 8))']);
  });
  it('finds nothing in a plain Python traceback or in prose', () => {
    expect(
      notebookStatements('Traceback (most recent call last):\n  File "a.py", line 1, in <module>\n    import x\nImportError: no'),
    ).toEqual([]);
    expect(notebookStatements('---> 28 import toylib')).toEqual([]);
  });
});

describe('reportedProjectStatements', () => {
  it('keeps statements that import or use the project', () => {
    expect(
      reportedProjectStatements(
        [
          'import toylib',
          'from toylib.blocks import Block',
          'y = toylib.f(1)',
          'import torch',
          'get_ipython().system("pip install toylib")',
        ],
        ['toylib'],
      ),
    ).toEqual(['import toylib', 'from toylib.blocks import Block', 'y = toylib.f(1)']);
  });
  it('a package name is a word, not a pattern', () => {
    expect(reportedProjectStatements(['import toylibx', 'import a'], ['toylib', '.*'])).toEqual([]);
  });
});

describe('failingAssertion', () => {
  it("reads the reporter's assertion marked as failing as an AssertionError to reproduce", () => {
    const s = failingAssertion(['m = make()\ny = m(x)\nassert len(y) == 6 # fails']);
    expect(s).toMatchObject({ exception: { type: 'AssertionError', message: '' } });
    expect(s?.evidence).toContain('assert len(y) == 6');
  });
  it.each(['assert ok  # <- False', 'assert a == b  # AssertionError', '>>> assert f()  # this breaks'])('%s', (line) => {
    expect(failingAssertion([line])).not.toBeNull();
  });
  it('an assertion that passes, or one not marked, states nothing', () => {
    expect(failingAssertion(['assert len(y) == 6 # success', 'assert x == 1', 'assert y  # works'])).toBeNull();
  });
});

describe('messageOverlap', () => {
  it('a newer, longer message that contains every reported word is the same message', () => {
    expect(
      messageOverlap(
        "cannot import name 'container_abcs'",
        "cannot import name 'container_abcs' from 'torch._six' (/usr/lib/python3/dist-packages/torch/_six.py)",
      ),
    ).toBe(1);
  });
  it('short or different messages are compared by overlap as before', () => {
    expect(messageOverlap('bad value', 'bad value for x and many other words here')).toBeLessThan(0.6);
    expect(messageOverlap('size of tensor a must match', 'expected scalar type Float')).toBeLessThan(0.2);
  });
});

describe('fail-to-pass cases', () => {
  it('reads the three fields, or nothing for an ordinary case', () => {
    expect(readF2pCase({ repo: 'a/b', buggy_commit: 'abc1234', fix_commit: 'def5678', notes: 'x' })).toMatchObject({ repo: 'a/b' });
    expect(readF2pCase({ symptom: 'crash' })).toBeNull();
  });
  it('rejects a half-filled or hostile case.json with a one-line reason', () => {
    expect(() => readF2pCase({ repo: 'a/b', buggy_commit: 'abc1234' })).toThrow(/fix_commit/);
    expect(() => readF2pCase({ repo: '../../etc', buggy_commit: 'abc1234', fix_commit: 'abc1234' })).toThrow(/owner\/name/);
    expect(() => readF2pCase({ repo: 'a/b', buggy_commit: '--upload-pack=x', fix_commit: 'abc1234' })).toThrow(/commit SHA/);
  });
  it('by hand: fails before, passes after', () => {
    const r = (exitCode: number | null, timedOut = false) => ({ exitCode, timedOut, lastLine: '' });
    expect(handF2p(r(1), r(0))).toBe(true);
    expect(handF2p(r(null), r(0))).toBe(true);
    expect(handF2p(r(0), r(0))).toBe(false);
    expect(handF2p(r(1), r(1))).toBe(false);
    expect(handF2p(r(null, true), r(0))).toBe(false);
  });
});
