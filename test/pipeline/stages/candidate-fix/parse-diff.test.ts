import { describe, expect, it } from 'vitest';
import { applyFilePatch } from '../../../../src/pipeline/stages/candidate-fix/apply-hunks.js';
import { parseUnifiedDiff } from '../../../../src/pipeline/stages/candidate-fix/parse-diff.js';

const FILE =
  'def widen(xs, out):\n    body = [x * 2 for x in xs]\n    shortcut = list(xs)\n    return [a + b for a, b in zip(body, shortcut)]\n';

const GOOD = `diff --git a/toylib/blocks.py b/toylib/blocks.py
index 1111111..2222222 100644
--- a/toylib/blocks.py
+++ b/toylib/blocks.py
@@ -2,3 +2,3 @@ def widen(xs, out):
     body = [x * 2 for x in xs]
-    shortcut = list(xs)
+    shortcut = list(xs) + [0] * (out - len(xs))
     return [a + b for a, b in zip(body, shortcut)]
`;

describe('parseUnifiedDiff: a model patch read as data', () => {
  it('reads a git diff into one file patch with its hunk, section and lines, and applies it', () => {
    const parsed = parseUnifiedDiff(GOOD);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.changedLines).toBe(2);
    const [file] = parsed.files;
    expect(file).toMatchObject({ path: 'toylib/blocks.py', created: false });
    expect(file!.hunks[0]).toMatchObject({ oldStart: 2, oldLines: 3, newStart: 2, newLines: 3, section: 'def widen(xs, out):' });
    const applied = applyFilePatch(FILE, file!);
    expect(applied).toEqual({ ok: true, text: FILE.replace('shortcut = list(xs)', 'shortcut = list(xs) + [0] * (out - len(xs))') });
  });

  it('applies a hunk whose line numbers a model miscounted, where its lines are; refuses one whose lines are not in the file', () => {
    const shifted = parseUnifiedDiff(GOOD.replace('@@ -2,3 +2,3 @@', '@@ -40,3 +40,3 @@'));
    expect(shifted.ok && applyFilePatch(FILE, shifted.files[0]!).ok).toBe(true);
    const wrong = parseUnifiedDiff(GOOD.replace('-    shortcut = list(xs)', '-    shortcut = tuple(xs)'));
    expect(wrong.ok).toBe(true);
    if (!wrong.ok) return;
    const applied = applyFilePatch(FILE, wrong.files[0]!);
    expect(applied.ok).toBe(false);
    expect(!applied.ok && applied.why).toMatch(/hunk 1 of toylib\/blocks\.py \(at line 2\) does not match the file/);
    expect(applyFilePatch(null, wrong.files[0]!)).toEqual({ ok: false, why: 'toylib/blocks.py is not in the checkout' });
  });

  // timm-1078's first patch (docs/benchmarks.md, issue 41) was refused for its header: "@@ -1,6 +1,12 @@" over 5 old lines.
  it.each([
    ['counts more lines than it has', '@@ -2,9 +2,9 @@'],
    ['counts fewer lines than it has', '@@ -2,1 +2,1 @@'],
    ['counts no lines at all', '@@ -2 +2 @@'],
  ])('reads a hunk whose header %s from its lines (as git apply --recount), and applies it', (_name, header) => {
    const parsed = parseUnifiedDiff(GOOD.replace('@@ -2,3 +2,3 @@', header));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.changedLines).toBe(2);
    expect(parsed.files[0]!.hunks[0]).toMatchObject({ oldStart: 2, oldLines: 3, newStart: 2, newLines: 3 });
    expect(applyFilePatch(FILE, parsed.files[0]!)).toEqual({
      ok: true,
      text: FILE.replace('shortcut = list(xs)', 'shortcut = list(xs) + [0] * (out - len(xs))'),
    });
  });

  it('ends a recounted hunk at the next hunk, the next file, prose or trailing empty lines; its context stays strict', () => {
    const second = '--- a/toylib/other.py\n+++ b/toylib/other.py\n@@ -1,1 +1,1 @@\n-a = 1\n+a = 2\n';
    const text = `${GOOD.replace('@@ -2,3 +2,3 @@', '@@ -2,40 +2,40 @@')}@@ -4,30 +4,30 @@\n     return [a + b for a, b in zip(body, shortcut)]\n+# padded\n\n\n${second}\nThat pads the shortcut.\n+ not an edit, after prose\n`;
    const parsed = parseUnifiedDiff(text);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.files.map((f) => [f.path, f.hunks.map((h) => [h.oldLines, h.newLines])])).toEqual([
      [
        'toylib/blocks.py',
        [
          [3, 3],
          [1, 2],
        ],
      ],
      ['toylib/other.py', [[1, 1]]],
    ]);
    expect(parsed.changedLines).toBe(5);
    // A recounted hunk whose context is not the file's is refused where it is applied, as any other.
    const misquoted = parseUnifiedDiff(
      GOOD.replace('@@ -2,3 +2,3 @@', '@@ -2,6 +2,6 @@').replace('     body = [x * 2', '     body = [x * 3'),
    );
    expect(misquoted.ok).toBe(true);
    if (!misquoted.ok) return;
    expect(applyFilePatch(FILE, misquoted.files[0]!)).toMatchObject({ ok: false, why: expect.stringMatching(/does not match the file/) });
  });

  it('reads a hostile hunk in time linear in its size: 19,000 empty lines after one edit, a header naming line 1e7', () => {
    const blank = parseUnifiedDiff(`${GOOD}${'\n'.repeat(19_000)}`);
    expect(blank.ok && blank.files[0]!.hunks[0]!.lines.length).toBe(4);
    const far = parseUnifiedDiff(GOOD.replace('@@ -2,3 +2,3 @@', '@@ -10000000,3 +10000000,3 @@'));
    expect(far.ok && applyFilePatch(FILE, far.files[0]!).ok).toBe(false);
  });

  it.each([
    ['a rename', 'diff --git a/x.py b/y.py\nsimilarity index 90%\nrename from x.py\nrename to y.py\n', /renames or copies a file/],
    [
      'a rename by its headers',
      GOOD.replace('+++ b/toylib/blocks.py', '+++ b/toylib/other.py'),
      /renames toylib\/blocks\.py to toylib\/other\.py/,
    ],
    ['a deletion', '--- a/toylib/blocks.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n', /deletes toylib\/blocks\.py/],
    ['a mode change', 'diff --git a/x.py b/x.py\nold mode 100644\nnew mode 100755\n', /changes a file's mode/],
    ['a link', 'diff --git a/x.py b/x.py\nnew file mode 120000\n--- /dev/null\n+++ b/x.py\n@@ -0,0 +1 @@\n+/etc/passwd\n', /makes a link/],
    ['a binary patch', 'diff --git a/m.bin b/m.bin\nGIT binary patch\nliteral 3\n', /binary patch/],
    ['no diff at all', 'I would change widen to pad the shortcut.', /no file patch found/],
    ['a hunk without a header', '@@ -1 +1 @@\n-a\n+b\n', /no file header/],
    [
      'a hunk with no lines',
      '--- a/toylib/blocks.py\n+++ b/toylib/blocks.py\n@@ -2,3 +2,3 @@\n\n\n',
      /a hunk of toylib\/blocks\.py has no lines/,
    ],
    ['a hunk past any file', GOOD.replace('@@ -2,3 +2,3 @@', '@@ -99999999999999999999,3 +2,3 @@'), /names line 1\d{20}, past any file/],
    ['the same file twice', `${GOOD}${GOOD.split('\n').slice(2).join('\n')}`, /patches toylib\/blocks\.py twice/],
    ['a NUL byte', GOOD.replace('body', 'bo\0dy'), /NUL/],
    [
      'a C-quoted name',
      GOOD.replace('--- a/toylib/blocks.py', '--- "a/toylib/\\033blocks.py"').replace(
        '+++ b/toylib/blocks.py',
        '+++ "b/toylib/\\033blocks.py"',
      ),
      /./,
    ],
  ])('refuses %s', (_name, text, why) => {
    const parsed = parseUnifiedDiff(text);
    if (parsed.ok) {
      // A quoted name parses to a path no policy accepts (checked in path-policy.test.ts).
      expect(parsed.files[0]!.path).toContain('\0');
      return;
    }
    expect(parsed.why).toMatch(why);
  });

  it('holds a patch to its bounds: size, files, hunks and changed lines are refused above them, never cut', () => {
    expect(parseUnifiedDiff(GOOD, { maxChars: 100, maxFiles: 5, maxHunks: 30, maxChangedLines: 200 })).toMatchObject({
      ok: false,
      why: expect.stringMatching(/over the 100/),
    });
    expect(parseUnifiedDiff(GOOD, { maxChars: 20_000, maxFiles: 5, maxHunks: 30, maxChangedLines: 1 })).toMatchObject({
      ok: false,
      why: expect.stringMatching(/changes 2 lines, over the 1/),
    });
    const many = Array.from({ length: 6 }, (_, i) => GOOD.replaceAll('toylib/blocks.py', `toylib/m${i}.py`)).join('');
    expect(parseUnifiedDiff(many)).toMatchObject({ ok: false, why: expect.stringMatching(/changes 6 files, over the 5/) });
  });

  it('creates a new file from a /dev/null header, and refuses to create one that exists', () => {
    const parsed = parseUnifiedDiff('--- /dev/null\n+++ b/toylib/util.py\n@@ -0,0 +1,2 @@\n+def pad(xs, n):\n+    return xs + [0] * n\n');
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(applyFilePatch(null, parsed.files[0]!)).toEqual({ ok: true, text: 'def pad(xs, n):\n    return xs + [0] * n\n' });
    expect(applyFilePatch('x = 1\n', parsed.files[0]!).ok).toBe(false);
  });
});
