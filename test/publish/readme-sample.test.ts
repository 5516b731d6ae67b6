import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ReproOutcome } from '../../src/pipeline/types.js';
import { buildResultComment } from '../../src/publish/build-result-comment.js';
import { readmeSample, replaceReadmeSample } from '../../src/publish/readme-sample.js';

// Issue 25, item 7: the README's sample comment is what the code renders (fixtures/outcomes/readme-sample.json is the
// outcome of `repgen reproduce --issue fixtures/bench/dl-bugs/so-046/issue.md --llm none`); `npm run readme-sample`
// rewrites it.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const outcome = ReproOutcome.parse(JSON.parse(readFileSync(join(root, 'fixtures/outcomes/readme-sample.json'), 'utf8')));

describe("the README's sample comment", () => {
  it('is what the comment builder renders for the fixture outcome (run `npm run readme-sample` after changing it)', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(replaceReadmeSample(readme, readmeSample(buildResultComment(outcome)))).toBe(readme);
  });

  it('catches drift: an edited sample line no longer matches', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const edited = readme.replace(
      '| **They expected** | _not stated in the report_ |',
      '| **They expected** | the linear layer to take the 19 samples |',
    );
    expect(edited).not.toBe(readme);
    expect(replaceReadmeSample(edited, readmeSample(buildResultComment(outcome)))).toBe(readme);
  });

  it('keeps the headline, the table, the folds and the Environment line, each quoted', () => {
    const sample = readmeSample(buildResultComment(outcome)).split('\n');
    expect(sample[0]).toBe('> ### RepGen: ✅ Reproduced (3 of 3 seeded runs)');
    expect(sample.every((l) => l === '>' || l.startsWith('> '))).toBe(true);
    expect(sample.some((l) => l.startsWith('> ▸ ') && l.includes('Reproduction script (`repro.py`'))).toBe(true);
    expect(sample.at(-1)).toMatch(/^> \*\*Environment:\*\* /);
  });
});
