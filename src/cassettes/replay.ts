import type { StaticChecker, StaticReport } from '../agent/static-checker.js';
import type { RunRequestInput, RunResult, ScriptExecutor } from '../exec/types.js';
import { LlmBadResponseError, LlmError } from '../llm/errors.js';
import type { LlmClient, LlmResponse } from '../llm/types.js';
import { hashLlmRequest, hashRunRequest, hashText } from './hash.js';
import type { Cassette } from './schema.js';
import { CANDIDATE_PROMPT_MARK } from '../pipeline/stages/candidate-fix/candidate-prompt.js';
import type { PatchedCopies } from '../pipeline/stages/candidate-fix/scratch-copy.js';

/**
 * Replays a cassette through the real pipeline. The model's replies are served in recorded order — the
 * n-th request gets the n-th reply — and each request's hash is checked against the recorded one: a
 * mismatch (a prompt changed since the recording) is reported as drift, not an error, so a prompt change
 * shows its effect on the loop with the same model answers. Script runs and static checks are served by
 * what was run (their hash), since a drifted run may ask for them in another order; a script the cassette
 * never saw gets an infrastructure failure, also reported as drift. Asking the model more often than the
 * recording did throws a typed LLM error (drift too). See docs/cassettes.md.
 */

export interface Drift {
  port: 'llm' | 'executor' | 'checker' | 'copies';
  /** Which call (1-based) of that port. */
  index: number;
  message: string;
  /** Set when it happened once the candidate-fix step (issue 41) had begun: after its first model call. */
  candidateStep?: true;
}

export interface CassetteReplay {
  llm: LlmClient;
  /** The candidate fix's checkout reads and copies, served in recorded order (no checkout needed). */
  copies: PatchedCopies;
  executor: ScriptExecutor;
  checker: StaticChecker;
  /** What did not match the recording, in the order it happened. */
  drift: Drift[];
  /**
   * Reported, not drift: a candidate-fix request (recorded and asked both carry the step's prompt) whose text changed,
   * its recorded reply served in its place. The step's prompt is cut to what a fix needs under a budget (issue 41), so
   * its text follows the prompt's selection rules; what the step then does with the same replies is still checked
   * (its copies, its runs, how many replies it asks for, what it concludes).
   */
  tolerated: Drift[];
  /** Model calls served so far, of `cassette.calls.length`. */
  callsServed(): number;
}

export function replayCassette(cassette: Cassette): CassetteReplay {
  const drift: Drift[] = [];
  const tolerated: Drift[] = [];
  let nextCall = 0;
  let inCandidate = false;
  const report = (d: Drift): void => {
    drift.push(inCandidate ? { ...d, candidateStep: true } : d);
  };
  const llm: LlmClient = {
    provider: cassette.provider,
    model: cassette.model,
    complete(request) {
      const index = nextCall++;
      const call = cassette.calls[index];
      const asked = request.messages[0]?.content ?? '';
      if (asked.includes(CANDIDATE_PROMPT_MARK)) inCandidate = true;
      if (!call) {
        report({ port: 'llm', index: index + 1, message: `request ${index + 1} asked, the recording has ${cassette.calls.length}` });
        return Promise.reject(
          new LlmBadResponseError(`cassette ${cassette.case}: no recorded reply for request ${index + 1}`, { provider: cassette.provider }),
        );
      }
      const hash = hashLlmRequest(request);
      if (hash !== call.requestHash) {
        const d: Drift = { port: 'llm', index: index + 1, message: describeRequestDrift(call.request, request) };
        const wasCandidate = call.request.messages[0]?.content.includes(CANDIDATE_PROMPT_MARK) ?? false;
        if (wasCandidate && asked.includes(CANDIDATE_PROMPT_MARK)) tolerated.push({ ...d, candidateStep: true });
        else report(d);
      }
      if (call.error) return Promise.reject(new LlmError(`${call.error.name}: ${call.error.message}`, { provider: cassette.provider }));
      const r = call.response!;
      const response: LlmResponse = {
        text: r.text,
        model: r.model,
        stopReason: r.stopReason,
        usage: r.usage,
        attempts: 1,
        durationMs: r.durationMs ?? 0,
      };
      return Promise.resolve(response);
    },
  };

  const unusedRuns = cassette.runs.map((_, i) => i);
  let runCount = 0;
  const executor: ScriptExecutor = {
    name: cassette.executor,
    run(request: RunRequestInput) {
      runCount++;
      const hash = hashRunRequest(request);
      const at = unusedRuns.findIndex((i) => cassette.runs[i]?.requestHash === hash);
      // The same script run twice (a probe, a re-run) is served once per recording, then again from its last answer.
      const found = at >= 0 ? unusedRuns.splice(at, 1)[0] : cassette.runs.findLastIndex((r) => r.requestHash === hash);
      if (found !== undefined && found >= 0) return Promise.resolve(cassette.runs[found]!.result);
      report({ port: 'executor', index: runCount, message: `run ${runCount} (${request.entry}) is not in the recording` });
      return Promise.resolve(notRecorded(`cassette ${cassette.case}: this script was not run when the cassette was recorded`));
    },
  };

  let checkCount = 0;
  const checker: StaticChecker = {
    check(script: string) {
      checkCount++;
      const found = cassette.checks.find((c) => c.scriptHash === hashText(script));
      if (found) return Promise.resolve(found.report as StaticReport);
      report({ port: 'checker', index: checkCount, message: `static check ${checkCount} is of a script not in the recording` });
      return Promise.resolve({ findings: [], undefinedNames: [], tools: ['none: script not in the cassette'] });
    },
  };
  const ops = [...(cassette.candidateCopies ?? [])];
  let copyCount = 0;
  const copies: PatchedCopies = {
    read(_workspace, paths) {
      copyCount++;
      const op = ops.shift();
      if (op?.op !== 'read')
        report({ port: 'copies', index: copyCount, message: `read ${copyCount} of the checkout is not in the recording` });
      const texts = op?.op === 'read' ? op.texts : {};
      return Promise.resolve(new Map(paths.map((p) => [p, texts[p] ?? null])));
    },
    make(workspace, paths) {
      copyCount++;
      const op = ops.shift();
      const dispose = (): Promise<void> => Promise.resolve();
      if (op?.op !== 'make' || op.paths.join('\0') !== paths.join('\0')) {
        report({ port: 'copies', index: copyCount, message: `copy ${copyCount} (${paths.join(', ')}) is not in the recording` });
        return Promise.resolve({ ok: false, why: 'this copy was not made when the cassette was recorded', dispose });
      }
      // Nothing is written: the runs against the copy are served from the recording by what they run.
      if (op.ok)
        return Promise.resolve({ ok: true, workspace: { ...workspace, hostPath: `${workspace.hostPath}-cassette-copy` }, dispose });
      return Promise.resolve({ ok: false, why: op.why ?? 'the patch did not apply', dispose });
    },
  };
  return { llm, copies, executor, checker, drift, tolerated, callsServed: () => Math.min(nextCall, cassette.calls.length) };
}

/**
 * The settings a replay runs under: the recorded ones, with the candidate-fix step as the recording had it (off for a
 * cassette that does not say: it was recorded before the step, and one more model call would exhaust its replies). Pure.
 */
export function replaySettings(cassette: Pick<Cassette, 'settings' | 'candidateFix'>): Record<string, unknown> {
  return { ...cassette.settings, suggestFix: cassette.candidateFix ?? false };
}

/** Where a request first differs from the recorded one, in a line. Pure. */
export function describeRequestDrift(
  recorded: Cassette['calls'][number]['request'],
  actual: { system?: string; messages: { role: string; content: string }[] },
): string {
  if ((recorded.system ?? '') !== (actual.system ?? ''))
    return `system prompt changed (${firstDifference(recorded.system ?? '', actual.system ?? '')})`;
  if (recorded.messages.length !== actual.messages.length)
    return `${actual.messages.length} messages, recorded ${recorded.messages.length}`;
  for (let i = 0; i < recorded.messages.length; i++) {
    const a = actual.messages[i]!;
    const r = recorded.messages[i]!;
    if (a.role !== r.role || a.content !== r.content)
      return `message ${i + 1} (${a.role}) changed (${firstDifference(r.content, a.content)})`;
  }
  return 'request limits changed (max tokens, temperature or stop)';
}

function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const line = a.slice(0, i).split('\n').length;
  return `from line ${line}: recorded ${JSON.stringify(a.slice(i, i + 40))}, now ${JSON.stringify(b.slice(i, i + 40))}`;
}

function notRecorded(message: string): RunResult {
  return {
    executor: 'cassette',
    exitCode: null,
    signal: null,
    timedOut: false,
    oomKilled: false,
    durationMs: 0,
    cpuMs: null,
    peakMemoryMb: null,
    stdout: '',
    stderr: '',
    output: '',
    stdoutBytes: 0,
    stderrBytes: 0,
    stdoutTruncated: false,
    stderrTruncated: false,
    outputCapBytes: 1,
    files: [],
    isolation: { network: 'none', sandbox: 'cassette', notes: [] },
    infra: { kind: 'sandbox_failed', message },
  };
}
