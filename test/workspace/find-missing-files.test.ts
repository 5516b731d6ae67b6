import { describe, expect, it } from 'vitest';
import { missingFilesNote, missingFilesRecord, missingObjects, missingPaths } from '../../src/workspace/find-missing-files.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

describe('missingObjects / missingPaths', () => {
  it('reads the `?` lines of rev-list and maps them to every path of the tree that holds them', () => {
    expect([...missingObjects(`${C}\n?${A}\n${B}\n?${B}\n?not-an-id\n`)]).toEqual([A, B]);
    const lsTree = [
      `100644 blob ${A}\tdocs/guide.md`,
      `100644 blob ${C}\tpkg/__init__.py`,
      `100755 blob ${B}\tdocs/odd name\nwith newline.sh`,
      `160000 commit ${A}\tvendor/sub`,
      `100644 blob ${A}\tREADME.md`,
      '',
    ].join('\0');
    expect(missingPaths(lsTree, new Set([A, B]))).toEqual(['README.md', 'docs/guide.md', 'docs/odd name\nwith newline.sh']);
  });
});

describe('missingFilesNote', () => {
  it('says how many and names the first few, control characters shown and long names cut', () => {
    expect(missingFilesNote(['docs/a.md'], 'v1.0')).toBe(
      'The checkout lacks 1 file the repository has at v1.0 (missing from the mirror, so not checked out): docs/a.md.',
    );
    const many = Array.from({ length: 20 }, (_, i) => `docs/page-${String(i).padStart(2, '0')}.md`);
    const note = missingFilesNote(['docs/x\ny.md', 'd/'.repeat(200), ...many], 'abc123');
    expect(note).toMatch(/^The checkout lacks 22 files the repository has at abc123 /);
    expect(note).toContain('docs/x?y.md');
    expect(note).toContain('docs/page-05.md, and 14 more.');
    expect(note).not.toContain('page-06');
    expect(note.length).toBeLessThan(600);
    expect(missingFilesRecord(many.concat(many, many))).toEqual({ count: 60, paths: [...many, ...many, ...many].slice(0, 50) });
  });
});
