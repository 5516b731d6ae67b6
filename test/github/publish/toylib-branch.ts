/**
 * The toy project both regression-test PR suites (open-repro-pr, unmark-repro-test) put a branch on: its tested
 * commit, the test's branch and path, a file with a bug and the candidate diff that fixes it.
 */
export const BASE = 'a'.repeat(40);
export const BRANCH = 'repgen/issue-7';
export const TEST = 'tests/repro/test_issue_7.py';
export const STATS = 'def peak(xs):\n    """The largest value."""\n    return max(xs) * 1.1\n';
export const FIX = '--- a/toylib/stats.py\n+++ b/toylib/stats.py\n@@ -3 +3 @@\n-    return max(xs) * 1.1\n+    return max(xs)\n';
