import { describe, expect, it } from 'vitest';
import { neutralizeMentions } from '../../src/publish/neutralize.js';

const ZWJ = '\u200D';

describe('neutralizeMentions', () => {
  it.each([
    ['cc @octocat', `cc @${ZWJ}octocat`],
    ['see #12', `see #${ZWJ}12`],
    ['fixed in pytorch/pytorch#4321', `fixed in pytorch/pytorch#${ZWJ}4321`],
    ['GH-77', `GH-${ZWJ}77`],
  ])('neutralises %j', (input, output) => {
    expect(neutralizeMentions(input)).toBe(output);
  });

  it.each([['mail me at a@b.org'], ['&#123; is an entity'], ['`#5` in inline code']])('leaves %j alone', (input) => {
    expect(neutralizeMentions(input)).toBe(input);
  });
});
