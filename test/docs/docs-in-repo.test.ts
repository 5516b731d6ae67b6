import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync(join(root, 'fixtures/bench'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `fixtures/bench/${f}`),
];

/**
 * Paths of the development machine that a clone does not have: the workplace's shared folder (benches, tools) beside
 * the checkout, and absolute paths under /work. `<cache>/work/` and the like are not paths of the machine, so an
 * absolute path counts only where it starts a word.
 */
const OUTSIDE = [/(?:\.\.\/)+shared\//, /(?<![\w<>./-])shared\/(?:bench|tools)\b/, /(?<![\w<>.-])\/work\//];

describe('README and docs/', () => {
  it.each(pages)('%s sends a reader only to what a clone of the repository has', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const outside: string[] = [];
    for (const [i, line] of text.split('\n').entries()) {
      if (OUTSIDE.some((re) => re.test(line))) outside.push(`${page}:${i + 1}: ${line.trim()}`);
      // A relative link that leaves the repository resolves on the machine that wrote it, and nowhere else.
      for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = (m[1] ?? '').split('#')[0] ?? '';
        if (!target || /^[a-z]+:/.test(target)) continue;
        if (relative(root, resolve(dirname(join(root, page)), target)).startsWith('..')) {
          outside.push(`${page}:${i + 1}: link ${target}`);
        }
      }
    }
    expect(outside).toEqual([]);
  });
});
