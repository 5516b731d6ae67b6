import type { FixRunOutcome } from '../workspace/fix-verdict.js';

/**
 * `git bisect run` semantics over a confirmed reproduction, as pure functions: a step is good (the repro
 * exits 0), bad (the reported symptom shows) or skipped (exit 125: the commit could not be checked out,
 * built or imported, or the repro failed for another reason than the reported one). A skipped commit is
 * never counted as bad, so a broken commit in the middle cannot be blamed for the regression.
 */

export type StepVerdict = 'good' | 'bad' | 'skip';

export interface BisectCommit {
  sha: string;
  subject: string;
}

export interface StepRecord {
  verdict: StepVerdict;
  why: string;
}

export type BisectNext =
  /** Test this commit next; `left` commits are still suspect, about `steps` more runs to go. */
  | { kind: 'test'; sha: string; left: number; steps: number }
  /** Exactly one commit can be the first bad one. */
  | { kind: 'found'; sha: string }
  /** Skipped commits hide which one it is: the first bad commit is one of these (oldest first). */
  | { kind: 'ambiguous'; candidates: string[] };

/**
 * The next commit to test. `commits` are the first-parent commits after GOOD up to and including BAD,
 * oldest first; BAD (the last) is known bad without a record. The suspects lie after the newest good commit
 * and up to the oldest bad one; the commit nearest their middle that was not skipped is tested next (the
 * one below the middle on a tie, as git does), so each step halves the range whatever was skipped. Pure.
 */
export function nextBisectStep(commits: readonly BisectCommit[], records: ReadonlyMap<string, StepRecord>): BisectNext {
  if (!commits.length) throw new Error('nextBisectStep: no commits between GOOD and BAD');
  let hi = commits.length - 1;
  for (let i = 0; i < commits.length - 1; i++) {
    if (records.get(commits[i]!.sha)?.verdict === 'bad') {
      hi = i;
      break;
    }
  }
  let lo = -1;
  for (let i = hi - 1; i >= 0; i--) {
    if (records.get(commits[i]!.sha)?.verdict === 'good') {
      lo = i;
      break;
    }
  }
  const open: number[] = [];
  for (let i = lo + 1; i < hi; i++) if (!records.has(commits[i]!.sha)) open.push(i);
  if (!open.length) {
    if (hi - lo === 1) return { kind: 'found', sha: commits[hi]!.sha };
    return { kind: 'ambiguous', candidates: commits.slice(lo + 1, hi + 1).map((c) => c.sha) };
  }
  const mid = (lo + hi) / 2;
  const pick = open.reduce((best, i) => (Math.abs(i - mid) < Math.abs(best - mid) ? i : best), open[0]!);
  const left = hi - lo;
  return { kind: 'test', sha: commits[pick]!.sha, left, steps: Math.ceil(Math.log2(left)) };
}

/**
 * One step's verdict from its seeded runs (the fix check's run outcomes): the reported symptom in any run
 * is bad (a flaky bug shows in some seeds only); every run exiting 0 is good; anything else is a skip with
 * its reason, never bad. Pure.
 */
export function stepVerdict(outcomes: readonly FixRunOutcome[], observed: readonly string[] = []): StepRecord {
  const n = outcomes.length;
  const first = (o: FixRunOutcome): string => observed[outcomes.indexOf(o)] ?? '';
  if (!n) return { verdict: 'skip', why: 'no run was made' };
  const bad = outcomes.filter((o) => o === 'reproduces').length;
  if (bad) return { verdict: 'bad', why: `the reported bug shows in ${bad}/${n} run${n === 1 ? '' : 's'}` };
  if (outcomes.every((o) => o === 'passed'))
    return { verdict: 'good', why: `the reproduction exits 0 in ${n}/${n} run${n === 1 ? '' : 's'}` };
  if (outcomes.includes('infra')) return { verdict: 'skip', why: `the run could not be made: ${first('infra')}`.slice(0, 300) };
  return {
    verdict: 'skip',
    why: `the reproduction fails for another reason than the reported bug: ${first('fails_otherwise')}`.slice(0, 300),
  };
}

/** A ref as people read it: a full commit SHA shortened to 12 characters, any other ref as it is. Pure. */
export function shortRef(ref: string): string {
  return /^[0-9a-f]{40}$/i.test(ref) ? ref.slice(0, 12) : ref;
}

/**
 * The pull request a first-parent commit names: GitHub's merge subject (`Merge pull request #123 from …`)
 * or a squash merge's trailing `(#123)`. Pure.
 */
export function pullRequestOf(subject: string): number | null {
  const m = /^Merge pull request #(\d{1,7})\b/.exec(subject) ?? /\(#(\d{1,7})\)\s*$/.exec(subject);
  return m ? Number(m[1]) : null;
}

/**
 * Which changed files of the first bad commit lie inside a package the reproduction imports (by the top-level
 * import name: `timm/models/convnext.py` is inside `timm`, also for a `src/` layout). The comment says which,
 * so a maintainer can check the verdict against the diff; none means the blame is doubtful. Pure.
 */
export function filesInImportedPackages(changed: readonly string[], imports: readonly string[]): string[] {
  const tops = new Set(imports.map((m) => m.split('.')[0]!).filter(Boolean));
  return changed.filter((f) => {
    if (!f.endsWith('.py') && !/\.(c|cc|cpp|cu|h|hpp|pyx)$/.test(f)) return false;
    const parts = f.split('/');
    const inPkg = parts[0] === 'src' ? parts.slice(1) : parts;
    const top = (inPkg.length > 1 ? inPkg[0] : inPkg[0]?.replace(/\.py$/, '')) ?? '';
    return tops.has(top);
  });
}

/**
 * The project files a failing run's output shows traceback frames in (`File "/workspace/timm/models/maxxvit.py",
 * line 216`), relative to the checkout: `roots` are where the run saw it (the sandbox mount, the host path). A first
 * bad commit that changes one of them changed code the failure passes through, a sharper check than the package.
 * Read line by line, so a traceback whose start was cut from the output still counts. Pure.
 */
export function tracebackFilesIn(output: string, roots: readonly string[]): Set<string> {
  const out = new Set<string>();
  const prefixes = roots.filter(Boolean).map((r) => (r.endsWith('/') ? r : `${r}/`));
  for (const m of output.matchAll(/^\s*File "([^"\n]{1,500})", line \d+/gm)) {
    const file = m[1]!;
    const root = prefixes.find((p) => file.startsWith(p));
    if (root) out.add(file.slice(root.length));
  }
  return out;
}
