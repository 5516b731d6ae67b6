// The toylib fixture of the tier-1 and candidate-fix suites: `widen`'s shortcut keeps the input's width when the block
// changes it (a ValueError), the issue that reports it, its reproduction and the fix a maintainer would write.

/** toylib/blocks.py at the issue's ref. */
export const WIDEN_BLOCKS =
  'def widen(xs, out):\n    body = [x * 2 for x in xs] + [0] * (out - len(xs))\n    shortcut = list(xs)\n    if len(body) != len(shortcut):\n        raise ValueError(f"widths differ: {len(body)} vs {len(shortcut)}")\n    return [a + b for a, b in zip(body, shortcut)]\n';

/** The report: the traceback of `widen([1, 2], 3)`. */
export const WIDEN_ISSUE = `# toylib.blocks.widen fails when out != len(xs)

Calling \`widen\` with a wider output fails:

\`\`\`
Traceback (most recent call last):
  File "run.py", line 3, in <module>
    widen([1, 2], 3)
  File "/home/u/.venv/lib/python3.10/site-packages/toylib/blocks.py", line 5, in widen
    raise ValueError(f"widths differ: {len(body)} vs {len(shortcut)}")
ValueError: widths differ: 3 vs 2
\`\`\`
`;

/** The reproduction: the report's call. */
export const WIDEN_REPRO = 'from toylib.blocks import widen\n\nprint(widen([1, 2], 3))\n';

/** The fix a maintainer would write: the shortcut padded to the output's width. */
export const WIDEN_FIX = `--- a/toylib/blocks.py
+++ b/toylib/blocks.py
@@ -2,3 +2,3 @@ def widen(xs, out):
     body = [x * 2 for x in xs] + [0] * (out - len(xs))
-    shortcut = list(xs)
+    shortcut = list(xs) + [0] * (out - len(xs))
     if len(body) != len(shortcut):
`;

/** A model's answer carrying a diff (and an independent check of the expectation). */
export function candidateAnswer(diff: string, check?: string): string {
  return `The shortcut must be padded.\n\n\`\`\`diff\n${diff}\`\`\`\n${check ? `\n\`\`\`python\n${check}\`\`\`\n` : ''}`;
}
