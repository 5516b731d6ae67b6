import type { Symptom } from './types.js';

/** A trailing comment saying the line fails: `# fails`, `# <- False`, `# AssertionError`, `# this breaks`. */
const FAILS =
  /#\s*(?:<-+\s*|\^+\s*)?(?:(?:this|it|here|which)\s+)?(?:fails?|failing|false|raises(?:\s+assertionerror)?|assertionerror|breaks|error|not ok)\b/i;

/**
 * A silent bug stated as the reporter's own assertion, marked in their code as the line that fails
 * (`assert len(y) == 6  # fails`): the reproduction must end in that AssertionError, and once fixed pass it.
 * Returns the expected symptom, or null when no assertion is marked failing. Pure.
 */
export function failingAssertion(codeBlocks: readonly string[]): Symptom | null {
  for (const code of codeBlocks) {
    for (const line of code.split('\n')) {
      const m = /^\s*(?:>>>\s*)?(assert\b[^#]*?)\s*(#.*)$/.exec(line);
      if (m?.[1] && m[2] && FAILS.test(m[2]) && !/#\s*(?:passes|works|ok\b|success|true\b)/i.test(m[2])) {
        return {
          kind: 'wrong_values',
          category: 'silent',
          evidence: `the report's assertion fails: ${m[1].trim()}`,
          exception: { type: 'AssertionError', message: '' },
        };
      }
    }
  }
  return null;
}
