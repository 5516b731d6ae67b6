import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ContextBundle } from '../../../../src/context/types.js';
import {
  CANDIDATE_PROMPT_MARK,
  calledNames,
  candidateCode,
  enclosingDef,
  projectFrames,
} from '../../../../src/pipeline/stages/candidate-fix/candidate-prompt.js';

/** A module of a few functions, one of them long, with a docstring of examples (as torchmetrics' are). */
const MODULE = [
  'import torch',
  '',
  'def unrelated(a):',
  ...Array.from({ length: 30 }, (_, i) => `    a = a + ${i}  # filler of an unrelated function`),
  '    return a',
  '',
  'def _update(preds, target):',
  '    """Updates the state.',
  '',
  '    Example:',
  '        >>> _update(torch.tensor([1.0]), torch.tensor([1.0]))',
  '        (1, 1)',
  '    """',
  '    if len(preds) < 2:',
  '        raise ValueError("Needs at least two samples")',
  '    return _compute(preds, target)',
  '',
  'def _compute(',
  '    preds,',
  '    target,',
  '):',
  '    return preds.sum() / target.sum()',
  '',
  'def score(preds, target):',
  '    return _update(preds, target)',
  '',
].join('\n');
const lineOf = (text: string, needle: string): number => text.split('\n').findIndex((l) => l.includes(needle)) + 1;
const RAISE = lineOf(MODULE, 'raise ValueError');
const FRAMES = [{ path: 'pkg/metric.py', line: RAISE, function: '_update' }];
const TEXTS = new Map<string, string | null>([['pkg/metric.py', MODULE]]);

function bundle(chunks: { path: string; startLine: number; endLine: number; symbol?: string; text: string }[]): ContextBundle {
  return { rank: 1, tokens: 0, chunks: chunks.map((c) => ({ ...c, kind: 'function' as const, score: 1, reasons: [] })) };
}

describe('the candidate prompt shows the functions a fix needs, not whole files (issue 41)', () => {
  it('shows the frame’s enclosing def, numbered, with its docstring’s body cut, and the function it calls; not the rest', () => {
    const { sources } = candidateCode({ frames: FRAMES, texts: TEXTS, script: 'print(score(x, y))', bundle: undefined });
    expect(sources).toContain(`${String(RAISE).padStart(4)}|         raise ValueError("Needs at least two samples")`);
    expect(sources).toContain('def _update(preds, target):');
    expect(sources).toContain('def _compute(');
    expect(sources).toContain('def score(preds, target):');
    expect(sources).not.toContain('filler of an unrelated function');
    expect(sources).not.toContain('>>> _update');
    expect(sources).toContain('    | …');
  });

  it('keeps the sources and the context within the budget, says what it left out, and shows a chunk once', () => {
    const big = [
      'def huge(x):',
      ...Array.from({ length: 400 }, (_, i) => `    x = x * ${i} + 1  # ${'pad '.repeat(10)}`),
      '    return x',
    ].join('\n');
    const frames = Array.from({ length: 40 }, (_, i) => ({ path: 'pkg/big.py', line: 2 + i * 10, function: 'huge' }));
    const chunk = { path: 'pkg/other.py', startLine: 1, endLine: 3, symbol: 'helper', text: 'def helper():\n    return 1\n' };
    const r = candidateCode({
      frames,
      texts: new Map([['pkg/big.py', big]]),
      script: 'huge(1)',
      bundle: bundle([chunk, chunk, { path: 'pkg/big.py', startLine: 1, endLine: 5, text: 'def huge(x):' }]),
      budget: 3000,
    });
    expect(r.sources.length + r.context.length).toBeLessThanOrEqual(3000 + 200);
    expect(r.sources).toMatch(/more functions? of these files not shown: over the prompt's budget/);
    // The chunk of a function already shown above is left out; the same chunk twice is shown once.
    expect(r.context.match(/# pkg\/other\.py:1-3 \(helper\)/g)).toHaveLength(1);
    expect(r.context).not.toContain('# pkg/big.py:1-5');
  });

  it('puts the context chunks of what the script calls first, before the bundle’s order, where no frame is in the checkout', () => {
    const chunks = [
      { path: 'pkg/a.py', startLine: 1, endLine: 40, symbol: 'noise', text: `def noise():\n${'    pass\n'.repeat(300)}` },
      { path: 'pkg/b.py', startLine: 5, endLine: 9, symbol: 'Metric.r2_score', text: 'def r2_score(p, t):\n    return _inner(p, t)\n' },
      { path: 'pkg/b.py', startLine: 12, endLine: 14, symbol: '_inner', text: 'def _inner(p, t):\n    return 1\n' },
    ];
    const r = candidateCode({ frames: [], texts: new Map(), script: 'r2_score(p, t)', bundle: bundle(chunks), budget: 1500 });
    expect(r.sources).toMatch(/passes through no file of the checkout/);
    expect(r.context.indexOf('(Metric.r2_score)')).toBeGreaterThanOrEqual(0);
    expect(r.context).toContain('(_inner)');
    expect(r.context).not.toContain('(noise)');
    expect(r.context).toMatch(/1 more chunk not shown/);
  });

  it('reads a def’s signature over several lines to its colon, and a module-level line as none', () => {
    const lines = MODULE.split('\n');
    const at = lineOf(MODULE, 'return preds.sum()');
    expect(enclosingDef(lines, at - 1)).toMatchObject({ start: lineOf(MODULE, 'def _compute('), end: at });
    expect(enclosingDef(lines, 0)).toBeNull();
  });

  it('the prompt file carries the words a replay tells the candidate request by', () => {
    const prompt = readFileSync(join(import.meta.dirname, '../../../../prompts/candidate-fix.md'), 'utf8');
    expect(prompt).toContain(CANDIDATE_PROMPT_MARK);
  });
});

describe('the candidate prompt’s material is data: hostile frames, files and scripts', () => {
  it('takes only frames inside the checkout whose paths the policy accepts', () => {
    const ws = { hostPath: '/srv/co', mountPath: '/workspace' };
    const frames = projectFrames(
      [
        { file: '/workspace/pkg/m.py', line: 3, function: 'f' },
        { file: '/workspace/tests/test_m.py', line: 3, function: 't' },
        { file: '/usr/lib/python3/site.py', line: 3, function: 's' },
        { file: '/workspace/../etc/passwd', line: 1, function: 'x' },
        { file: '/srv/co/pkg/n.py', line: 9, function: 'g' },
        { file: '/workspacex/pkg/m.py', line: 3, function: 'h' },
      ],
      ws,
    );
    expect(frames.map((f) => f.path)).toEqual(['pkg/n.py', 'pkg/m.py']);
  });

  it('ignores frame lines outside the file and unreadable files; bounds the names a script calls', () => {
    const r = candidateCode({
      frames: [
        { path: 'pkg/metric.py', line: 0, function: 'x' },
        { path: 'pkg/metric.py', line: 10 ** 9, function: 'x' },
        { path: 'pkg/gone.py', line: 3, function: 'x' },
      ],
      texts: new Map([
        ['pkg/metric.py', MODULE],
        ['pkg/gone.py', null],
      ]),
      script: 'x',
      bundle: undefined,
    });
    expect(r.sources).not.toContain('filler');
    expect(calledNames(Array.from({ length: 5000 }, (_, i) => `f${i}()`).join('\n'))).toHaveLength(200);
  });

  it('reads a hostile file in bounded time: 20,000 nested defs, a 2 MB line, unclosed brackets', () => {
    const nested = Array.from({ length: 20_000 }, (_, i) => `${' '.repeat(i % 200)}def f${i}(`).join('\n');
    const oneLine = `x = ${'['.repeat(10)}${'1,'.repeat(1_000_000)}`;
    const texts = new Map([
      ['pkg/nested.py', nested],
      ['pkg/line.py', oneLine],
    ]);
    const frames = [
      { path: 'pkg/nested.py', line: 19_999, function: 'f' },
      { path: 'pkg/line.py', line: 1, function: '<module>' },
    ];
    const r = candidateCode({ frames, texts, script: 'f1(); f2()', bundle: undefined, budget: 4000 });
    expect(r.sources.length).toBeLessThan(4000 + 400);
  });
});
