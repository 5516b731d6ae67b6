import type { ScriptExecutor, Workspace } from '../exec/types.js';
import type { Logger } from '../log.js';
import type { AttemptRecord } from './types.js';
import type { ReproPlan } from '../plan/types.js';
import type { ReportResult } from '../report/types.js';
import { parsePython } from '../context/python-syntax.js';
import { ATTEMPT_SEED, mismatchFeedback, runCandidate, type CandidateRun } from './run-candidate.js';
import type { CompletedSnippet } from './tier0.js';

/** Candidate runs at once: the search runs them in pairs (cheap on a CPU runner, halves the wall clock). @defaultValue 2 */
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
 * Tier 0's search: the completion's candidates run (in pairs) until the symptom matcher accepts one. A
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

  let final: CandidateRun | null = null;
  const candidates = snippet.candidates;
  for (let i = 0; i < candidates.length; i += TIER0_PARALLEL) {
    if (i > 0 && now() >= input.budget.deadline) break;
    const batch = candidates.slice(i, i + TIER0_PARALLEL);
    const which = batch.length > 1 ? `s ${i + 1}–${i + batch.length}` : ` ${i + 1}`;
    await deps.onActivity?.(
      `running tier 0 ${candidates.length > 1 ? `candidate${which} of ${candidates.length}` : "on the report's code"}`,
    );
    const t0 = now();
    const runs = await Promise.all(
      batch.map((c) =>
        runCandidate(
          c.script,
          { report: input.report.reading, seed: ATTEMPT_SEED, settings: input.budget },
          { executor: deps.executor, workspace: deps.workspace },
          signal,
        ),
      ),
    );
    for (let k = 0; k < runs.length; k += 1) {
      const run = runs[k] as CandidateRun;
      const cand = batch[k];
      const n = i + k + 1;
      const label = candidates.length > 1 ? `candidate ${n}/${candidates.length} (${cand?.label ?? ''})` : (cand?.label ?? '');
      const common = {
        ...base,
        n,
        script: run.script,
        edits: candidates.length > 1 ? [...edits, `${label}; ${cand?.added.length ?? 0} line(s) added by RepGen`] : edits,
        durationMs: now() - t0,
      };
      if (run.run.infra) {
        await record({ ...common, outcome: 'infra', feedback: `the executor failed: ${run.run.infra.kind}: ${run.run.infra.message}` });
        return { attempts, final: run, reproduced: false, infra: `${run.run.infra.kind}: ${run.run.infra.message}` };
      }
      const ok = run.match.verdict === 'reproduced';
      const pattern = !ok && run.match.patternOnly === true;
      const feedback = ok
        ? `reproduced with ${label}: ${run.match.reasons.join('; ')}`
        : pattern
          ? `${label}: ${run.match.reasons.join('; ')}`
          : `${label}: ${mismatchFeedback(input.report.reading, run)}`;
      await record({ ...common, outcome: ok ? 'reproduced' : pattern ? 'pattern_reproduced' : 'run_mismatch', feedback });
      if (better(run, final)) final = run;
    }
    if (final?.match.verdict === 'reproduced') return { attempts, final, reproduced: true, infra: null };
    // The pattern showed and only values of the reporter's random state differ: no other candidate does better.
    if (attempts.some((a) => a.outcome === 'pattern_reproduced')) return { attempts, final, reproduced: false, infra: null };
  }
  return { attempts, final, reproduced: false, infra: null };
}
