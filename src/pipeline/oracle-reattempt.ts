// Issue 41 item 2, after stage 5b: a candidate under which the independent check of the report's expectation turns
// from failing to passing while the reproduction still fails says the reproduction's oracle is narrower than the
// report. The loop goes back once with that finding (src/agent/reattempt.ts); a new reproduction is confirmed as usual
// and the same patch, with no new model call, is run against it. It replaces the suspect one only when the patch turns
// it green; every other end keeps the first and is recorded.
import type { AgentDeps, AgentInput, AgentResult, CandidateRun } from '../agent/index.js';
import { oracleFindingMessage, runOracleReattempt, type OracleFinding } from '../agent/reattempt.js';
import type { LlmUsage } from '../llm/types.js';
import { addUsage, NO_USAGE } from '../llm/usage.js';
import type { Prompt } from '../prompts/load-prompts.js';
import type { CandidateAttempt, CandidateFixRecord, OracleReattempt } from './stages/candidate-fix/types.js';
import type { ConfirmResult } from './stages/confirm/index.js';

export interface ReattemptPorts {
  /** The agent's input and deps as the first round had them. */
  agentInput: AgentInput;
  agentDeps: AgentDeps;
  findingPrompt: Prompt;
  /** The confirmation runs of a new reproduction (stage 5 as the first had it); null when the run makes none. */
  confirm: (final: CandidateRun) => Promise<ConfirmResult | null>;
  /** Whether the outcome reads these as a confirmed reproduction (what gates stage 5b). */
  confirmed: (agent: AgentResult, confirm: ConfirmResult | null) => boolean;
  /** The same candidate, numbered `n`, against the new reproduction and its confirmed seeds. */
  rerun: (candidate: CandidateAttempt, n: number, final: CandidateRun, confirm: ConfirmResult | null) => Promise<CandidateAttempt>;
  progress: (message: string) => void | Promise<void>;
  now: () => number;
}

/** The oracle_suspect candidate whose check vouches for it (fails without the patch, passes with it), if any. */
export function suspectCandidate(
  record: CandidateFixRecord,
): (CandidateAttempt & { check: NonNullable<CandidateAttempt['check']> }) | null {
  const a = record.attempts.find((x) => x.result === 'oracle_suspect' && x.check?.unpatched === 'failed' && x.check.patched === 'passed');
  return a?.check ? { ...a, check: a.check } : null;
}

/** Sends the loop back when a candidate found the oracle suspect; the record (with `reattempt`) and the adopted agent and confirmation. */
export async function reattemptOnSuspectOracle(
  record: CandidateFixRecord,
  agent: AgentResult,
  spent: LlmUsage,
  ports: ReattemptPorts,
  signal?: AbortSignal,
): Promise<{ record: CandidateFixRecord; adopted: { agent: AgentResult; confirm: ConfirmResult | null } | null }> {
  const suspect = suspectCandidate(record);
  const first = agent.final;
  if (!suspect || !first) return { record, adopted: null };
  const started = ports.now();
  const suspectAttempt = [...agent.attempts].reverse().find((a) => a.script === first.script)?.n ?? 0;
  const finding: OracleFinding = {
    attempt: suspectAttempt,
    script: first.script,
    expected: ports.agentInput.report.bug.expected,
    output: suspect.runs[0]?.outputExcerpt ?? '',
    check: suspect.check.script,
    checkOutput: suspect.check.patchedExcerpt,
    diff: suspect.diff,
  };
  await ports.progress(
    `candidate fix ${suspect.n} makes the report's expectation true, yet the reproduction still fails with it: ` +
      'writing the reproduction again with that finding',
  );
  const round = await runOracleReattempt(
    { ...ports.agentInput, usageSoFar: spent, finding, attemptsSoFar: agent.attempts },
    { ...ports.agentDeps, findingPrompt: ports.findingPrompt },
    signal,
  );
  const base: OracleReattempt = {
    candidate: suspect.n,
    status: 'not_made',
    reason: round.reason,
    suspectAttempt,
    suspectScript: first.script,
    feedback: round.attempts.length ? oracleFindingMessage(ports.findingPrompt, finding) : '',
    attempts: round.attempts.map((a) => a.n),
    script: null,
    confirmation: null,
    rerun: null,
    adopted: false,
    usage: { ...round.usage },
  };
  const done = (r: OracleReattempt, adopted: { agent: AgentResult; confirm: ConfirmResult | null } | null = null) => ({
    record: withReattempt(record, r, ports.now() - started),
    adopted,
  });
  if (!round.attempts.length) return done(base);
  if (round.status !== 'reproduced' || !round.final) return done({ ...base, status: 'not_reproduced' });
  const merged: AgentResult = {
    status: 'reproduced',
    reason: round.reason,
    tier: 1,
    attempts: [...agent.attempts, ...round.attempts],
    final: round.final,
    // The round's model calls are the step's (record.usage): counted once.
    usage: agent.usage,
  };
  await ports.progress(`the reproduction written again (attempt ${round.attempts.at(-1)?.n}) shows the bug: confirming it`);
  const confirm = await ports.confirm(round.final);
  const reproduced = {
    ...base,
    script: round.final.script,
    confirmation: confirm && { reproducedRuns: confirm.reproducedRuns, totalRuns: confirm.totalRuns },
  };
  if (!ports.confirmed(merged, confirm))
    return done({ ...reproduced, status: 'not_confirmed', reason: 'the confirmation runs did not hold the new reproduction' });
  await ports.progress(`running candidate fix ${suspect.n} against the new reproduction (the same patch, no new model call)`);
  const rerun = await ports.rerun(suspect, record.attempts.length + 1, round.final, confirm);
  const status = rerun.result === 'fix_sensitive' ? 'fix_sensitive' : rerun.result === 'no_evidence' ? 'no_evidence' : 'still_fails';
  const r: OracleReattempt = { ...reproduced, status, reason: rerun.reason, rerun, adopted: status === 'fix_sensitive' };
  return done(r, r.adopted ? { agent: merged, confirm } : null);
}

/** The record with the round: its usage and time added; when adopted, the rerun is the answer. Pure. */
export function withReattempt(record: CandidateFixRecord, r: OracleReattempt, durationMs: number): CandidateFixRecord {
  const usage = addUsage({ ...NO_USAGE, ...record.usage }, r.usage);
  const out: CandidateFixRecord = {
    ...record,
    reattempt: r,
    usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, costUsd: usage.costUsd },
    durationMs: record.durationMs + Math.max(0, durationMs),
  };
  if (!r.adopted || !r.rerun) return out;
  const n = record.attempts.length;
  return {
    ...out,
    answer: 'yes',
    result: 'fix_sensitive',
    attempts: [...record.attempts, r.rerun],
    diff: r.rerun.diff,
    summary:
      `${n} candidate change${n === 1 ? '' : 's'}: the reproduction passes with candidate ${r.candidate} and fails without it, ` +
      `once written again after its first version still failed with that change`,
  };
}

/** The comment's sentence on the round, checkable against the attempts and the confirmation it names. Pure. */
export function reattemptSentence(r: OracleReattempt): string {
  const first = `The first reproduction${r.suspectAttempt ? ` (attempt ${r.suspectAttempt})` : ''}`;
  const why = `${first} still failed with candidate ${r.candidate} although an independent check of the report's expectation passed with it`;
  const again = `${why}; written again with that finding`;
  const last = r.attempts.at(-1);
  const runs = r.confirmation ? `${r.confirmation.reproducedRuns}/${r.confirmation.totalRuns} runs` : '';
  const confirmed = runs ? `, confirmed in ${runs}` : '';
  const reason = r.reason.replace(/[.\s]+$/, '');
  switch (r.status) {
    case 'fix_sensitive':
      return `${again}, the reproduction (attempt ${last}${confirmed}) fails without the change and passes with it, and replaced the first.`;
    case 'still_fails':
      return `${again} (attempt ${last}${confirmed}), it still fails with the change, so the first stays: ${reason}.`;
    case 'no_evidence':
      return `${again} (attempt ${last}${confirmed}), it gave no evidence with the change, so the first stays: ${reason}.`;
    case 'not_confirmed':
      return `${again} (attempt ${last}), it did not hold in the confirmation runs (${runs || 'none'}), so the first stays.`;
    case 'not_reproduced':
      return `${again} (attempts ${r.attempts.join(', ')}), no script showed the bug (${reason}), so the first stays.`;
    default:
      return `${why}; it was not written again: ${reason}.`;
  }
}
