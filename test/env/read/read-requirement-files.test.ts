import { describe, expect, it } from 'vitest';
import {
  MAX_INCLUDE_DEPTH,
  MAX_REQUIREMENTS,
  readRequirementsFile,
  RequirementFilesError,
} from '../../../src/env/read/read-requirement-files.js';

/** `n` requirement lines: `pkg<offset+i>==1.0`. */
const lines = (n: number, offset = 0): string => Array.from({ length: n }, (_, i) => `pkg${offset + i}==1.0`).join('\n');
/** `n` requirement lines, cheap to make (the ceilings count lines, not names). */
const many = (n: number): string => 'torch==1.0\n'.repeat(n);

describe('readRequirementsFile: -r includes read iteratively, with ceilings said as errors (issue 38)', () => {
  it('1.77 M requirements through a chain of 51 files (the issue: the stack overflowed, the spec was skipped in silence): a RequirementFilesError naming the ceiling', () => {
    const files = new Map<string, string>();
    for (let i = 0; i < 51; i++) files.set(`r${i}.txt`, `${i < 50 ? `-r r${i + 1}.txt\n` : ''}${many(34_700)}`);
    const err = (() => {
      try {
        return readRequirementsFile('r0.txt', files);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(RequirementFilesError);
    expect((err as Error).message).toBe(`r0.txt: its -r includes go deeper than ${MAX_INCLUDE_DEPTH} files (at r${MAX_INCLUDE_DEPTH}.txt)`);
  });

  it('the same count side by side (one file including 51, each shallow): the count ceiling, said', () => {
    const files = new Map<string, string>([['requirements.txt', Array.from({ length: 51 }, (_, i) => `-r r${i}.txt`).join('\n')]]);
    for (let i = 0; i < 51; i++) files.set(`r${i}.txt`, many(34_700));
    expect(() => readRequirementsFile('requirements.txt', files)).toThrow(`more than ${MAX_REQUIREMENTS} requirements`);
  });

  it('a chain as deep as the ceiling and as many requirements as the ceiling are read whole, includes in place, in order', () => {
    const files = new Map<string, string>();
    for (let i = 0; i < MAX_INCLUDE_DEPTH; i++)
      files.set(`d/r${i}.txt`, `a${i}\n${i < MAX_INCLUDE_DEPTH - 1 ? `-r ./r${i + 1}.txt\n` : ''}b${i}`);
    const names = readRequirementsFile('d/r0.txt', files).map((d) => d.req.name);
    const half = Array.from({ length: MAX_INCLUDE_DEPTH }, (_, i) => `a${i}`);
    const back = Array.from({ length: MAX_INCLUDE_DEPTH }, (_, i) => `b${MAX_INCLUDE_DEPTH - 1 - i}`);
    expect(names).toEqual([...half, ...back]);
    const full = new Map([['requirements.txt', lines(MAX_REQUIREMENTS)]]);
    const read = readRequirementsFile('requirements.txt', full);
    expect(read).toHaveLength(MAX_REQUIREMENTS);
    expect(read[MAX_REQUIREMENTS - 1]).toMatchObject({ where: `requirements.txt:${MAX_REQUIREMENTS}` });
  });
});
