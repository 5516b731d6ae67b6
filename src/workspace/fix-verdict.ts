import { z } from 'zod';
import { OracleValues } from '../symptoms/types.js';

/**
 * Fail-to-pass: a confirmed reproduction exits non-zero while the bug is there and 0 once it is fixed.
 * A fix check re-runs it against the project at a fixing ref and reads each run the same way.
 */

export const FixVerdict = z.enum(['fixed', 'still_reproduces', 'inconclusive']);
export type FixVerdict = z.infer<typeof FixVerdict>;

/** How one run at the fixing ref ended. */
export const FixRunOutcome = z.enum(['passed', 'reproduces', 'fails_otherwise', 'infra']);
export type FixRunOutcome = z.infer<typeof FixRunOutcome>;

export const FixRun = z.object({
  seed: z.number().int(),
  outcome: FixRunOutcome,
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  timedOut: z.boolean(),
  /** What the run showed: the symptoms read from its output, or the infrastructure failure. */
  observed: z.string(),
  /** The end of its output. */
  outputExcerpt: z.string(),
  /** A behavioural reproduction's oracle as this run showed it: held (the fix works) or failed, with the value. */
  oracle: OracleValues.optional(),
});
export type FixRun = z.infer<typeof FixRun>;

export const FixCheck = z.object({
  /** The ref as asked (`--verify-fix REF`, a PR's head branch). */
  ref: z.string(),
  /** The commit it resolved to; null when it could not be resolved or checked out. */
  sha: z.string().nullable(),
  verdict: FixVerdict,
  /** One sentence: why this verdict. */
  reason: z.string(),
  runs: z.array(FixRun),
  /** A behavioural reproduction's oracle at both refs (issue 28): what it showed at the buggy ref and at this one. */
  oracle: z
    .object({
      assertion: z.string(),
      expected: z.string(),
      quote: z.string(),
      reportObserved: z.string().optional(),
      /** What the reproduction showed at the buggy ref (the assertion's message or printed value); null when unknown. */
      atBuggy: z.string().nullable(),
      /** What the first run here showed; null when it printed nothing. */
      atFix: z.string().nullable(),
      /** The assertion held in every run here. */
      heldAtFix: z.boolean(),
    })
    .optional(),
});
export type FixCheck = z.infer<typeof FixCheck>;

/** The oracle as the reproduction showed it at the buggy ref (evidence, or the last reproduced run's record). */
export interface BuggyOracle {
  assertion: string;
  expected: string;
  quote: string;
  reportObserved?: string;
  observed?: string | null;
}

/** The oracle's values at the buggy ref and at the fix, from the runs there; undefined when nothing asserted one. Pure. */
export function fixOracle(buggy: BuggyOracle | undefined, runs: readonly Pick<FixRun, 'oracle'>[]): FixCheck['oracle'] {
  const here = runs.find((r) => r.oracle)?.oracle;
  const base = buggy ?? here;
  if (!base) return undefined;
  const reportObserved = buggy?.reportObserved ?? here?.reportObserved;
  return {
    assertion: base.assertion,
    expected: base.expected,
    quote: base.quote,
    ...(reportObserved ? { reportObserved } : {}),
    atBuggy: buggy?.observed ?? null,
    atFix: here?.observed ?? null,
    heldAtFix: runs.length > 0 && runs.every((r) => r.oracle?.held === true),
  };
}

/** The facts of one run that decide its outcome. */
export interface FixRunFacts {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  infra: string | null;
  /** The symptom matcher found the report's bug in this run. */
  reproduces: boolean;
}

/** One run: 0 without a signal is a pass; the report's symptom again is the bug; anything else is another failure. Pure. */
export function classifyFixRun(f: FixRunFacts): FixRunOutcome {
  if (f.infra) return 'infra';
  if (f.reproduces) return 'reproduces';
  if (f.exitCode === 0 && !f.signal && !f.timedOut) return 'passed';
  return 'fails_otherwise';
}

/**
 * The verdict over all runs. Fixed only when every run passed; still reproducing when the bug showed and
 * no run passed; anything mixed or different (a new error, a timeout, the runner failing) is inconclusive,
 * since a repro that now fails for another reason says nothing about the fix. Pure.
 */
export function fixVerdict(outcomes: readonly FixRunOutcome[]): { verdict: FixVerdict; reason: string } {
  const n = outcomes.length;
  const count = (o: FixRunOutcome): number => outcomes.filter((x) => x === o).length;
  if (!n) return { verdict: 'inconclusive', reason: 'no run was made' };
  if (count('passed') === n) return { verdict: 'fixed', reason: `the reproduction exits 0 in ${n}/${n} runs` };
  if (count('reproduces') > 0 && count('passed') === 0) {
    return { verdict: 'still_reproduces', reason: `the reported bug still shows in ${count('reproduces')}/${n} runs` };
  }
  const parts = (['passed', 'reproduces', 'fails_otherwise', 'infra'] as const)
    .filter((o) => count(o))
    .map((o) => `${o.replace('_', ' ')} ${count(o)}`);
  if (count('infra') === n) return { verdict: 'inconclusive', reason: 'every run failed for infrastructure reasons' };
  if (count('fails_otherwise') && !count('passed') && !count('reproduces')) {
    return { verdict: 'inconclusive', reason: `the reproduction now fails for another reason (not the reported bug): ${parts.join(', ')}` };
  }
  return { verdict: 'inconclusive', reason: `the runs disagree: ${parts.join(', ')}` };
}
