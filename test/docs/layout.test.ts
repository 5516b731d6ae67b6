import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// docs/development.md's layout block is where a newcomer learns the house: every entry of src/ and every room of
// src/exec/, src/context/ and src/env/ must be named there, so a new folder or entry point cannot land unexplained.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The fenced block under "## Layout". */
function layoutBlock(): string {
  const text = readFileSync(join(root, 'docs/development.md'), 'utf8');
  const section = text.slice(text.indexOf('## Layout'));
  return /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
}

/** Entries of a folder as the layout names them: `src/exec/`, `src/app.ts`; rooms as `sandbox/`. */
function entries(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory() || /\.ts$/.test(e.name))
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
}

describe('the layout in docs/development.md', () => {
  const block = layoutBlock();

  it('is found', () => {
    expect(block.length).toBeGreaterThan(500);
  });

  it('names every entry of src/', () => {
    const missing = entries('src').filter((e) => !block.includes(`src/${e}`) && !block.includes(`src/${e.replace(/\/$/, '')}`));
    expect(missing).toEqual([]);
  });

  it('names every room of src/exec/, src/context/ and src/env/', () => {
    const rooms = ['src/exec', 'src/context', 'src/env'].flatMap((d) =>
      entries(d)
        .filter((e) => e.endsWith('/'))
        .map((e) => `${d}/${e}`),
    );
    expect(rooms.length).toBeGreaterThan(4);
    const missing = rooms.filter((r) => !block.includes(r.slice(r.lastIndexOf('/', r.length - 2) + 1)));
    expect(missing).toEqual([]);
  });
});
