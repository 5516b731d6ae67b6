// The toylib-upper fixture of the oracle suites (issue 41 item 2): `upper` uses 1.1 where its docstring says 1.2, the
// issue states the expected value 3.6, a reproduction that asserts exact float equality (narrower than the report: no
// correct fix gives exactly 3.6), one that asserts the report's expectation as stated, the fix, and independent checks.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from './temp-dir.js';

/** toylib/stats.py at the issue's ref. */
export const UPPER_STATS = 'def upper(xs):\n    """The upper bound: 1.2 times the largest value."""\n    return max(xs) * 1.1\n';

export const UPPER_ISSUE =
  '# toylib.stats.upper returns 3.3 for [3.0], expected 3.6\n\nThe docs say the upper bound is 1.2 times the largest value, but:\n\n' +
  '```python\nfrom toylib.stats import upper\nprint(upper([3.0]))\n```\n\nprints `3.3000000000000003`. Expected: `3.6`.\n';

/** The narrow oracle: exact float equality, which fails with the fix too (3.5999999999999996). */
export const UPPER_NARROW =
  'from toylib.stats import upper\n\nu = upper([3.0])\nprint(f"upper = {u}")\nassert u == 3.6, f"upper([3.0]) is {u}, the report expects 3.6"\n';

/** The report's expectation as stated: 3.6, to float precision. */
export const UPPER_TOLERANT =
  'import math\n\nfrom toylib.stats import upper\n\nu = upper([3.0])\nprint(f"upper = {u}")\n' +
  'assert math.isclose(u, 3.6, rel_tol=1e-9), f"upper([3.0]) is {u}, the report expects 3.6"\n';

export const UPPER_FIX =
  '--- a/toylib/stats.py\n+++ b/toylib/stats.py\n@@ -3 +3 @@\n-    return max(xs) * 1.1\n+    return max(xs) * 1.2\n';

/** An independent check of the expectation: fails without the fix, passes with it. */
export const UPPER_CHECK = 'from toylib.stats import upper\n\nu = upper([3.0])\nassert abs(u - 3.6) < 1e-9, f"upper([3.0]) is {u}"\n';

/** A check as narrow as the reproduction: fails with the fix too. */
export const UPPER_NARROW_CHECK = 'from toylib.stats import upper\n\nassert upper([3.0]) == 3.6\n';

/** The project at the issue's ref, readable by the sandbox's uid. */
export function toylibUpper(): string {
  const dir = makeTempDir('repgen-toylib-upper-');
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'toylib'));
  writeFileSync(join(dir, 'toylib', '__init__.py'), '');
  writeFileSync(join(dir, 'toylib', 'stats.py'), UPPER_STATS);
  return dir;
}
