import { describe, expect, it } from 'vitest';
import type { AgentResult } from '../../../src/agent/index.js';
import type { StaticFinding } from '../../../src/agent/static-checker.js';
import type { CompletedSnippet } from '../../../src/agent/tier0.js';
import type { ReportResult } from '../../../src/report/types.js';
import { runOutcome, staticFindingsCanMatter } from '../../../src/pipeline/stages/outcome/index.js';

const report = {
  facts: { pythonBlocks: ['x = f()'], otherLanguageBlocks: [], dataDescriptions: [], attachments: [] },
  reading: { expected: [{ kind: 'exception' }], versions: [{ name: 'torch' }] },
} as unknown as ReportResult;

const snippet = (findings: StaticFinding[] = [], unresolved: string[] = []) =>
  ({
    script: 'x = f()\n',
    edits: [],
    unresolved,
    static: { findings, undefinedNames: [], tools: ['pyflakes'] },
  }) as unknown as CompletedSnippet;

const agent = (status: AgentResult['status'], final: boolean) =>
  ({
    status,
    reason: status,
    tier: 0,
    attempts: [{ outcome: 'run_mismatch' }],
    final: final ? { reading: { exception: { type: 'RuntimeError', message: 'boom' }, symptoms: [] }, match: null } : null,
  }) as unknown as AgentResult;

const input = (over: Partial<Parameters<typeof runOutcome>[0]>): Parameters<typeof runOutcome>[0] => ({
  rejection: null,
  report,
  plan: null,
  snippet: snippet(),
  agent: agent('not_reproduced', true),
  confirm: null,
  llm: { available: false, reason: 'no LLM' },
  infra: null,
  ...over,
});

describe('staticFindingsCanMatter: whether a late static report could change the outcome', () => {
  it('not once the run reproduced the bug, nor after an infrastructure or budget stop', () => {
    expect(staticFindingsCanMatter(input({ agent: agent('reproduced', true) }))).toBe(false);
    expect(staticFindingsCanMatter(input({ infra: 'the executor could not run the probe' }))).toBe(false);
    expect(staticFindingsCanMatter(input({ agent: agent('exit_infra', false) }))).toBe(false);
    expect(staticFindingsCanMatter(input({ agent: agent('exit_budget', true) }))).toBe(false);
  });

  it('not when a model could repair the code, nor when pyflakes already found a compile error (the first one wins)', () => {
    expect(staticFindingsCanMatter(input({ llm: { available: true, reason: '' } }))).toBe(false);
    const broken = snippet([{ line: 2, message: 'invalid syntax', severity: 'error', tool: 'pyflakes' }]);
    expect(staticFindingsCanMatter(input({ snippet: broken }))).toBe(false);
    expect(staticFindingsCanMatter(input({ snippet: snippet([], ['model']) }))).toBe(false);
    expect(staticFindingsCanMatter(input({ snippet: null }))).toBe(false);
  });

  it('yes when tier 0 did not reproduce and there is no model: a compile error turns the outcome into needs_info', () => {
    expect(staticFindingsCanMatter(input({}))).toBe(true);
    const late = snippet([{ line: 1, message: 'E1120: no value', severity: 'error', tool: 'pylint' }]);
    expect(runOutcome(input({ snippet: late })).status).toBe('needs_info');
    expect(runOutcome(input({})).status).toBe('not_reproduced');
    // A skipped agent lists what the report lacks, the compile error with it.
    expect(staticFindingsCanMatter(input({ agent: agent('skipped', false) }))).toBe(true);
  });
});

describe('a report with code and no error or output (issue 28 item 4)', () => {
  const prose = { ...report, reading: { ...report.reading, expected: [] } } as unknown as ReportResult;

  it('runs the code and says it could not check it: never needs-info, never reproduced', () => {
    const d = runOutcome(input({ report: prose }));
    expect(d.status).toBe('not_reproduced');
    expect(d.summary).toMatch(/^Ran the report's code\./);
    expect(d.needsInfo).toEqual([]);
  });

  it('asks the reporter only when there is no code either', () => {
    const none = { ...prose, facts: { ...prose.facts, pythonBlocks: [] } } as unknown as ReportResult;
    expect(runOutcome(input({ report: none, agent: null })).status).toBe('needs_info');
  });
});

describe('the summary of a reproduction names its symptom', () => {
  const reproduced = (expected: { category: string }[]) =>
    runOutcome(
      input({
        report: { ...report, reading: { ...report.reading, expected } } as unknown as ReportResult,
        agent: { ...agent('reproduced', true), tier: 1, attempts: [{ outcome: 'reproduced' }] } as unknown as AgentResult,
      }),
    ).summary;

  it("a crash report: the exception's class; a silent report ended by the script's own check: the reported output", () => {
    expect(reproduced([{ category: 'crash' }])).toMatch(/^Reproduced RuntimeError with a generated script/);
    expect(reproduced([{ category: 'silent' }])).toMatch(/^Reproduced the reported output with a generated script/);
  });
});
