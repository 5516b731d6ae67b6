import { describe, expect, it } from 'vitest';
import { forEachWord, tokenize, wordTokens } from '../../src/context/tokenize.js';

/** The word pattern the tokenizer used to run through matchAll: the scan must find exactly its matches. */
const WORD = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|[0-9]+/g;

// Hostile and odd input: dots in every position, digits against letters, non-ASCII letters and a lone surrogate,
// NUL bytes, Windows line ends, a 100-character identifier, a trailing dot, a file that is one long word.
const TEXTS = [
  '',
  'torch.nn.functional.cross_entropy(logits, target)',
  'self.conv1.weight.data = 1.5e-3 * x2; cls._cache..clear(); a. b .c a.1b _._ __init__',
  'ResNet50Block HTTPError getHTTPResponse2Code ÜberModel naïve_fn 变量 = café.x é_1',
  '12ab 0x1F 3.14 42. .5 a1.b2.c3 _ __ ___a',
  '\0\0def\0f():\r\n    return\t\u00a0yield \ud800x',
  `${'a'.repeat(100)} ${'B'.repeat(61)}c ${'x_'.repeat(40)}`,
  'end.',
  'z'.repeat(10_000),
];

describe('tokenize', () => {
  it('scans the same words as the word pattern, in order', () => {
    for (const text of TEXTS) {
      const got: string[] = [];
      forEachWord(text, (w) => got.push(w));
      expect(got).toEqual([...text.matchAll(WORD)].map((m) => m[0]));
    }
  });

  it('gives a text the tokens of its words, one after the other', () => {
    for (const text of TEXTS) {
      const want: string[] = [];
      for (const m of text.matchAll(WORD)) wordTokens(m[0], want);
      expect(tokenize(text)).toEqual(want);
    }
    expect(tokenize('self.conv1.weight ResNet50Block')).toEqual([
      'conv1.weight',
      'conv',
      'weight',
      'resnet50block',
      'res',
      'net',
      '50',
      'block',
    ]);
  });
});
