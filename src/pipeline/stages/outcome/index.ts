import type { AgentResult } from '../../../agent/index.js';
import type { StaticFinding } from '../../../agent/static-checker.js';
import type { CompletedSnippet } from '../../../agent/tier0.js';
import type { ReproPlan } from '../../../plan/types.js';
import type { ReportResult } from '../../../report/types.js';
import { assessEvidence, hasEvidence } from '../../../report/assess-evidence.js';
import type { ExitStatus, Verdict } from '../../types.js';
import type { ConfirmResult } from '../confirm/index.js';

/** Exactly what the report lacks, in words a reporter can act on. Pure. */
export function listMissing(report: ReportResult, snippet: CompletedSnippet | null): string[] {
  const out: string[] = [];
  const { facts, reading } = report;
  if (!facts.pythonBlocks.length) {
    if (facts.otherLanguageBlocks.length) {
      const langs = [...new Set(facts.otherLanguageBlocks.map((b) => b.lang))].join(', ');
      out.push(
        `Python code that triggers the bug: the report's code is not Python (${langs}: ` +
          `\`${facts.otherLanguageBlocks[0]?.firstLine ?? ''}\`), and RepGen reproduces ` +
          `Python deep-learning bugs`,
      );
    } else out.push('the code that triggers the bug: a minimal Python snippet (the report has none)');
  }
  const tier0 = agentAttempt0(snippet);
  if (tier0) out.push(tier0);
  if (snippet?.unresolved.length) {
    const names = snippet.unresolved.map((n) => `\`${n}\``).join(', ');
    out.push(`the full code: ${names} ${snippet.unresolved.length === 1 ? 'is' : 'are'} used but never defined in the report`);
  }
  // Never ask for what the report contains (issue 40): output or a stated expectation is what the bug looks like, and
  // any version it gives (a package's, or "started appearing with 1.0.7") is its versions.
  const evidence = assessEvidence(report);
  if (!evidence.output && !evidence.expectation)
    out.push('what the bug looks like: the full error message with its traceback, or the printed output/metrics that show it');
  if (!reading.versions.length && !reading.versionMentions?.length)
    out.push(
      'versions: the framework and Python versions (e.g. the output of `python -c "import torch, sys; print(torch.__version__, sys.version)"`)',
    );
  const loads = facts.dataDescriptions.filter((d) => d.startsWith('code loads data'));
  if (loads.length)
    out.push(
      `the data: shape and dtype of what ${loads
        .slice(0, 2)
        .map((d) => `\`${d.replace('code loads data: ', '')}\``)
        .join(', ')} returns, or a small synthetic stand-in`,
    );
  if (facts.attachments.length)
    out.push(
      `the attached files' content inline: RepGen never downloads attachments (${facts.attachments
        .slice(0, 3)
        .map((a) => a.url)
        .join(', ')})`,
    );
  return out;
}

/** A snippet that cannot even compile is something only the reporter can fix. */
function agentAttempt0(snippet: CompletedSnippet | null): string | null {
  const broken = snippet?.static.findings.find(
    (f) => f.severity === 'error' && !/^undefined name|referenced before assignment|outside (?:function|loop)/.test(f.message),
  );
  return broken ? `code that runs as posted: the report's code does not compile (line ${broken.line}: ${broken.message})` : null;
}

/**
 * Whether more static findings on tier 0's snippet could still change {@link runOutcome}'s decision. A late static
 * report (pyflakes' findings, then pylint's) only appends findings, and the decision reads them only through
 * agentAttempt0, where the first compile error wins: so one appended compile error that leaves the decision as it is
 * means no later finding can change it (a reproduction, a budget or infrastructure stop, a model to repair the code).
 * `confirm` may be null before the confirmation runs: it only grades a reproduction, a branch that reads no findings.
 */
export function staticFindingsCanMatter(input: Parameters<typeof runOutcome>[0]): boolean {
  const { snippet } = input;
  if (!snippet) return false;
  const late: StaticFinding = { line: 1, message: 'E0001: a later static finding', severity: 'error', tool: 'pylint' };
  const more = { ...snippet, static: { ...snippet.static, findings: [...snippet.static.findings, late] } };
  return JSON.stringify(runOutcome(input)) !== JSON.stringify(runOutcome({ ...input, snippet: more }));
}

/** Exceptions that say the run lacked something of the reporter's machine, not that the bug is absent. */
const ENVIRONMENT_EXCEPTIONS: Record<string, string> = {
  ModuleNotFoundError: 'a package that is not installed here',
  ImportError: 'a package or symbol that is not available here',
  FileNotFoundError: "a file that exists only on the reporter's machine",
  URLError: 'the network, which runs here do not have',
  ConnectionError: 'the network, which runs here do not have',
  gaierror: 'the network, which runs here do not have',
};

export interface OutcomeDecision {
  status: ExitStatus;
  summary: string;
  needsInfo: string[];
  /** The headline verdict (docs/verdicts.md). */
  verdict: Verdict;
}

/** Confirmed only when a strict majority of the seeded re-runs show the bug (docs/verdicts.md). */
export function confirmedByMajority(confirm: Pick<ConfirmResult, 'reproducedRuns' | 'totalRuns'>): boolean {
  return confirm.reproducedRuns * 2 > confirm.totalRuns;
}

/** What the seeded runs that did not show the bug did instead, one phrase each. */
export function describeOddRuns(confirm: ConfirmResult): string {
  const odd = confirm.runs.filter((r) => r.verdict !== 'reproduced');
  return odd
    .map((r) => {
      const why = r.reasons.find((x) => !/^a line shaped like|^same symptom/.test(x)) ?? r.reasons[0] ?? 'no reason recorded';
      return `seed ${r.seed}: ${r.verdict === 'partial' ? 'partly' : 'not'} (${why.length > 160 ? `${why.slice(0, 157)}…` : why})`;
    })
    .join('; ');
}

/** Stage 6: one exit status and the sentence that explains it. Pure. */
export function runOutcome(input: {
  rejection: string | null;
  report: ReportResult | null;
  plan: ReproPlan | null;
  snippet: CompletedSnippet | null;
  agent: AgentResult | null;
  confirm: ConfirmResult | null;
  llm: { available: boolean; reason: string };
  infra: string | null;
  /**
   * An import the environment should make work failed: the project's, or a declared dependency's in a run
   * (src/pipeline/environment-state.ts envImportFailure); the sentence to give. @defaultValue null
   */
  envFailure?: string | null;
  /** A module the run needs that is installed but fails to import (src/pipeline/environment-state.ts). @defaultValue null */
  environmentFailure?: string | null;
}): OutcomeDecision {
  const { rejection, report, plan, snippet, agent, confirm, llm, infra } = input;
  if (rejection)
    return {
      status: 'needs_info',
      verdict: 'needs_info',
      summary: `Needs more information: ${rejection}.`,
      needsInfo: ['a text issue body with the code that triggers the bug and the error or output it produces'],
    };
  if (infra)
    return {
      status: 'exit_infra',
      verdict: 'exit_infra',
      summary: `Stopped by an infrastructure problem, not by the bug: ${infra}.`,
      needsInfo: [],
    };
  if (!report) return { status: 'exit_infra', verdict: 'exit_infra', summary: 'Stopped before reading the report.', needsInfo: [] };
  if (input.envFailure)
    return {
      status: 'exit_env',
      verdict: 'environment_failed',
      summary: `${input.envFailure} This is the environment, not the report; nothing is asked of the reporter.`,
      needsInfo: [],
    };
  // The environment lacks what the report is about: before needs-info, since a run could not have shown anything.
  if (agent?.status === 'exit_env')
    return {
      status: 'exit_env',
      verdict: 'environment_failed',
      summary: `${agent.reason} This is the environment, not the report; nothing is asked of the reporter.`,
      needsInfo: [],
    };
  const missing = listMissing(report, snippet);
  const blockers = plan?.blockers.map((b) => b.what) ?? [];
  const blockerText = blockers.length ? ` This runner cannot give the report what it needs: ${blockers.join('; ')}.` : '';
  if (!hasEvidence(report)) {
    return {
      status: 'needs_info',
      verdict: 'needs_info',
      summary:
        'Needs more information: the report shows no code, error, output or stated expectation, so there is nothing a run ' +
        'could be checked against.',
      needsInfo: missing,
    };
  }
  if (!agent || agent.status === 'skipped') {
    return {
      status: 'needs_info',
      verdict: 'needs_info',
      summary: `Needs more information: the report has no Python code to run, and there is no model to write a script (${llm.reason}).`,
      needsInfo: missing,
    };
  }
  if (agent.status === 'exit_infra')
    return {
      status: 'exit_infra',
      verdict: 'exit_infra',
      summary: `Stopped by an infrastructure problem, not by the bug: ${agent.reason}.`,
      needsInfo: [],
    };
  if (agent.status === 'reproduced' && agent.final) {
    const oracle = agent.final.match?.oracle;
    // A silent report's reproduction may end in the script's own check after the printed line: the line is the symptom.
    const silentReport = !(report?.reading.expected ?? []).some((e) => e.category === 'crash');
    // A behavioural bug's AssertionError is the script's oracle failing: say which expectation, not the class.
    const kind = oracle
      ? `the report's expectation failing (expected ${oracle.expected}${oracle.reportObserved ? `, the report saw ${oracle.reportObserved}` : ''})`
      : agent.final.reading.exception
        ? silentReport
          ? 'the reported output'
          : `${agent.final.reading.exception.type}`
        : [...new Set(agent.final.reading.symptoms.map((s) => s.kind.replace(/_/g, ' ')))].join(', ') || 'the reported behaviour';
    const how =
      agent.tier === 0
        ? `with the report's own ` +
          `code${snippet?.edits.length ? `, completed by ${snippet.edits.length} recorded edit${snippet.edits.length === 1 ? '' : 's'}` : ''}`
        : `with a generated script (attempt ${agent.attempts.length})`;
    if (confirm && confirm.totalRuns > 0 && !confirmedByMajority(confirm)) {
      const odd = describeOddRuns(confirm);
      return {
        status: 'not_reproduced',
        verdict: 'flaky',
        summary:
          `Flaky ${confirm.reproducedRuns}/${confirm.totalRuns}: the bug showed ${how}, but only ` +
          `${confirm.reproducedRuns} of ${confirm.totalRuns} seeded re-runs showed it again (a majority is ` +
          `needed). The others: ${odd}.`,
        needsInfo: [],
      };
    }
    const runs = confirm && confirm.totalRuns > 0 ? ` in ${confirm.reproducedRuns} of ${confirm.totalRuns} seeded re-runs` : '';
    const odd =
      confirm && confirm.reproducedRuns < confirm.totalRuns
        ? ` The other${confirm.totalRuns - confirm.reproducedRuns === 1 ? '' : 's'}: ${describeOddRuns(confirm)}.`
        : '';
    return { status: 'reproduced', verdict: 'reproduced', summary: `Reproduced ${kind} ${how}${runs}.${odd}`, needsInfo: [] };
  }
  const finalMatch = agent.final?.match;
  if (finalMatch?.patternOnly) {
    const cmp = finalMatch.compared?.find((c) => c.notCompared?.length);
    const left = cmp?.notCompared?.join(', ') ?? 'the reported values';
    const why = finalMatch.reasons.at(-1)?.replace(/^pattern reproduced: the remaining values cannot be compared because /, '') ?? '';
    return {
      status: 'not_reproduced',
      verdict: 'pattern_reproduced',
      summary:
        `Pattern reproduced: the run prints the reported line with the same pattern, but ${left} cannot be ` +
        `compared because ${why}. Not counted as reproduced.`,
      needsInfo: [],
    };
  }
  // Before "no model" and "not reproduced": nothing here could show the bug while the code it needs fails to import.
  if (input.environmentFailure)
    return {
      status: 'not_reproduced',
      verdict: 'environment_failed',
      summary: `Environment failure, not a verdict on the bug: ${input.environmentFailure}.`,
      needsInfo: [],
    };
  if (agent.status === 'exit_budget')
    return {
      status: 'exit_budget',
      verdict: 'exit_budget',
      summary: `Not reproduced before the budget ran out: ${agent.reason}.${blockerText}`,
      needsInfo: [],
    };
  const dataBlockers = plan?.blockers.filter((b) => b.kind === 'data') ?? [];
  if (dataBlockers.length && !agent.final) {
    return {
      status: 'needs_info',
      verdict: 'needs_data',
      summary: `RepGen could not run the report's code: it reads data that only the reporter has.`,
      needsInfo: [
        ...dataBlockers.map((b) => {
          const what = b.what
            .replace(/^the report's data file\(s\) /, 'the data ')
            .replace(/, which are on the reporter's machine, not in the report$/, '');
          return `a small sample of ${what}, or its shape and dtype so that synthetic data can stand in for it`;
        }),
      ],
    };
  }
  if (!llm.available && snippet?.unresolved.length) {
    return {
      status: 'not_reproduced',
      verdict: 'no_model',
      summary:
        `No model configured: the report's code is incomplete (${snippet.unresolved.join(', ')} never ` +
        `defined), and filling such gaps is tier 1's work, which needs a model (${llm.reason}). Nothing is ` +
        `asked of the reporter.`,
      needsInfo: [],
    };
  }
  if (!report.reading.expected.length)
    return {
      status: 'not_reproduced',
      verdict: 'not_reproduced',
      summary: agent.final
        ? "Ran the report's code. The report shows no error or printed output that a run could be checked against, so " +
          "the run is not counted as a reproduction; its output is below for a maintainer to compare with the report's words."
        : `Not reproduced: the report shows no error or printed output to check a run against, and its code did not run ` +
          `(${agent.attempts[0]?.outcome ?? 'not run'}).${blockerText}`,
      needsInfo: [],
    };
  const crash = agent.final?.reading.exception;
  const lacked = crash ? ENVIRONMENT_EXCEPTIONS[crash.type] : undefined;
  const lackedText =
    lacked && crash ? ` The run stopped on ${crash.type} (${crash.message.split('\n')[0]?.slice(0, 160)}): it needs ${lacked}.` : '';
  if (!llm.available && snippet && !snippet.unresolved.length && agentAttempt0(snippet)) {
    return {
      status: 'needs_info',
      verdict: 'needs_info',
      summary: `Needs more information: the report's code does not compile as posted, and there is no model to repair it (${llm.reason}).`,
      needsInfo: missing.filter((m) => m.startsWith('code that runs as posted')),
    };
  }
  if (!llm.available) {
    const why = blockers.length
      ? `the report's code was not run.${blockerText}`
      : `the report's own code did not show the bug (${agent.attempts[0]?.outcome ?? 'not run'}).${lackedText}`;
    return {
      status: 'not_reproduced',
      verdict: 'no_model',
      summary: `Not reproduced by tier 0: ${why} No model is configured for tier 1 (${llm.reason}).`,
      needsInfo: [],
    };
  }
  return {
    status: 'not_reproduced',
    verdict: 'not_reproduced',
    summary: `Not reproduced: ${agent.reason}.${blockerText}${lackedText}`,
    needsInfo: [],
  };
}
