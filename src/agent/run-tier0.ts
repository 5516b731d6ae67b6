import type { ScriptExecutor, Workspace } from '../exec/types.js';
import type { Logger } from '../log.js';
import type { AttemptRecord } from './types.js';
import type { ReproPlan } from '../plan/types.js';
import type { ReportResult } from '../report/types.js';
import { parsePython } from '../context/python-syntax.js';
import { candidateList, searchCandidates, type Finished } from './candidate-search.js';
import { ATTEMPT_SEED, mismatchFeedback, runCandidate, type CandidateRun } from './run-candidate.js';
import type { CompletedSnippet } from './tier0.js';

/** Runs at once in tier 0's search (candidate-search.ts): cheap on a CPU runner, and it halves the wall clock. @defaultValue 2 */
export const TIER0_PARALLEL = 2;

export interface Tier0Result {
  attempts: AttemptRecord[];
  /** The reproducing run, else the best-scoring one; null when nothing ran. */
  final: CandidateRun | null;
  reproduced: boolean;
  infra: string | null;
}

const RANK = { reproduced: 2, partial: 1, not_reproduced: 0 } as const;

function better(a: CandidateRun, b: CandidateRun | null): boolean {
  if (!b) return true;
  return (
    RANK[a.match.verdict] > RANK[b.match.verdict] || (RANK[a.match.verdict] === RANK[b.match.verdict] && a.match.score > b.match.score)
  );
}

/**
 * Tier 0's search: the completion's candidates run, two at a time, until the symptom matcher accepts one (the
 * lowest-numbered that reproduces wins; candidate-search.ts). A
 * completion that cannot run (blocking missing names, code that does not compile, a plan blocker) is one
 * attempt that says why, and nothing runs.
 */
export async function runTier0(
  input: {
    snippet: CompletedSnippet;
    report: ReportResult;
    plan: ReproPlan;
    budget: { runTimeoutMs: number; runMemoryMb: number; deadline: number };
  },
  deps: {
    executor: ScriptExecutor;
    workspace?: Workspace;
    log: Logger;
    now?: () => number;
    onAttempt?: (a: AttemptRecord) => void | Promise<void>;
    onActivity?: (what: string) => void | Promise<void>;
    /** Work for a slot left free while a reproduction waits on lower-numbered candidates (early confirmation runs). */
    spare?: (leader: CandidateRun) => Promise<void> | null;
  },
  signal?: AbortSignal,
): Promise<Tier0Result> {
  const now = deps.now ?? Date.now;
  const { snippet } = input;
  const edits = snippet.edits.map((e) => e.detail);
  const attempts: AttemptRecord[] = [];
  const record = async (a: AttemptRecord) => {
    attempts.push(a);
    deps.log.info({ attempt: a.n, outcome: a.outcome }, 'tier-0 attempt finished');
    await deps.onAttempt?.(a);
  };
  const started = now();
  const base = { n: 1, tier: 0 as const, bundle: null, script: snippet.script, edits };
  const parsed = await parsePython(snippet.script);
  // pyflakes compiles with CPython, which catches what tree-sitter forgives (inconsistent indentation).
  const syntaxFinding = snippet.static.findings.find(
    (f) =>
      f.tool === 'pyflakes' &&
      f.severity === 'error' &&
      !/^undefined name|referenced before assignment|outside (?:function|loop)/.test(f.message),
  );
  let refusal: AttemptRecord | null = null;
  if (snippet.unresolved.length || !snippet.candidates.length) {
    const why = snippet.missing.filter((m) => m.blocking).map((m) => `\`${m.name}\` (${m.why})`);
    refusal = {
      ...base,
      outcome: 'incomplete_code',
      feedback: `not run: the report's code uses ${why.join('; ') || 'names it never defines'}`,
    };
  } else if (!parsed.ok || syntaxFinding) {
    const where = syntaxFinding
      ? `line ${syntaxFinding.line}: ${syntaxFinding.message}`
      : `line ${parsed.problems[0]?.line ?? '?'}: ${parsed.problems[0]?.text ?? ''}`;
    refusal = { ...base, outcome: 'syntax_error', feedback: `not run: the report's code does not parse (${where})` };
  } else if (input.plan.blockers.length) {
    refusal = { ...base, outcome: 'unavailable_here', feedback: `not run: ${input.plan.blockers.map((b) => b.what).join('; ')}` };
  }
  if (refusal) {
    refusal.durationMs = now() - started;
    await record(refusal);
    return { attempts, final: null, reproduced: false, infra: null };
  }

  const candidates = snippet.candidates;
  const N = candidates.length;
  const label = (i: number): string => (N > 1 ? `candidate ${i + 1}/${N} (${candidates[i]?.label ?? ''})` : (candidates[i]?.label ?? ''));
  const finished: (Finished | undefined)[] = new Array(N);
  let recorded = 0;
  /**
   * Records the finished candidates in order, up to the first still running (attempts are numbered in order); at the
   * end (`all`), past the ones that never ended (cancelled: a lower-numbered candidate had reproduced).
   */
  const recordDone = async (all: boolean): Promise<void> => {
    while (recorded < N && (finished[recorded] || all)) {
      if (!finished[recorded]) {
        recorded += 1;
        continue;
      }
      const { run, ms } = finished[recorded] as Finished;
      const i = recorded;
      recorded += 1;
      const common = {
        ...base,
        n: i + 1,
        script: run.script,
        edits: N > 1 ? [...edits, `${label(i)}; ${candidates[i]?.added.length ?? 0} line(s) added by RepGen`] : edits,
        durationMs: ms,
      };
      if (run.run.infra) {
        await record({ ...common, outcome: 'infra', feedback: `the executor failed: ${run.run.infra.kind}: ${run.run.infra.message}` });
        continue;
      }
      const ok = run.match.verdict === 'reproduced';
      const pattern = !ok && run.match.patternOnly === true;
      const feedback = ok
        ? `reproduced with ${label(i)}: ${run.match.reasons.join('; ')}`
        : pattern
          ? `${label(i)}: ${run.match.reasons.join('; ')}`
          : `${label(i)}: ${mismatchFeedback(input.report.reading, run)}`;
      await record({ ...common, outcome: ok ? 'reproduced' : pattern ? 'pattern_reproduced' : 'run_mismatch', feedback });
    }
  };
  const outcome = await searchCandidates(
    N,
    (i, sig) =>
      runCandidate(
        candidates[i]?.script ?? '',
        { report: input.report.reading, seed: ATTEMPT_SEED, settings: input.budget },
        { executor: deps.executor, workspace: deps.workspace },
        sig,
      ),
    {
      width: TIER0_PARALLEL,
      mayStart: (i) => i === 0 || now() < input.budget.deadline,
      now,
      onStart: (running) => deps.onActivity?.(`running tier 0 ${N > 1 ? `${candidateList(running)} of ${N}` : "on the report's code"}`),
      onFinish: async (i, f) => {
        finished[i] = f;
        await recordDone(false);
      },
      spare: deps.spare,
    },
    signal,
  );
  await recordDone(true);
  const infra = outcome.infra;
  if (infra !== null)
    return { attempts, final: infra.run, reproduced: false, infra: `${infra.run.run.infra?.kind}: ${infra.run.run.infra?.message}` };
  if (outcome.winner !== null) return { attempts, final: outcome.winner.run, reproduced: true, infra: null };
  let final: CandidateRun | null = null;
  for (const f of finished) if (f && better(f.run, final)) final = f.run;
  return { attempts, final, reproduced: false, infra: null };
}
