import { describe, expect, it } from 'vitest';
import { readOperatorEnv } from '../../src/config/operator-env.js';
import { RepoConfig } from '../../src/config/repo-config.js';
import { CancelledError } from '../../src/errors.js';
import { reproduceIssue } from '../../src/pipeline/reproduce-issue.js';
import { resolveRunSpec } from '../../src/pipeline/run-spec.js';
import type { EnvPorts } from '../../src/pipeline/stages/env/index.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import { MemoryPublisher } from '../fakes/memory-publisher.js';
import { memorySource } from '../fakes/memory-source.js';
import { CRASH_ISSUE, GOOD_SCRIPT, simulate } from '../fakes/repro-fixtures.js';

/** A report whose own code shows the crash: tier 0 reproduces it without a model. */
const ISSUE = { title: 'Linear layer shape error', body: `${CRASH_ISSUE}\n\`\`\`python\n${GOOD_SCRIPT}\`\`\`\n` };

describe('reproduceIssue(spec, ports, signal)', () => {
  it('reads the issue from the source, runs the stages under the policy, publishes one report with the spec', async () => {
    const spec = resolveRunSpec(
      readOperatorEnv({ REPGEN_PYLINT: '0', REPGEN_MAX_COST_USD: '0.5', REPGEN_RUN_TIMEOUT_MS: '7000' }),
      RepoConfig.parse({ caps: { costUsd: 100 }, setup: ['echo setup'] }),
      { jobId: 'job-1' },
    );
    const executor = new FakeExecutor(simulate);
    const publisher = new MemoryPublisher();
    const source = memorySource(ISSUE);
    const result = await reproduceIssue(spec, { source, publisher, executor, llm: null }, new AbortController().signal);

    expect(source.calls).toEqual(['readIssue', 'checkout']);
    expect(result.evidence.outcome.status).toBe('reproduced');
    expect(publisher.reports).toHaveLength(1);
    const report = publisher.reports[0]!;
    expect(report.source).toBe('memory#1');
    expect(report.spec.caps.costUsd).toEqual({ value: 0.5, ceiling: 0.5, from: 'operator' });
    expect(report.evidence.spec?.caps.costUsd.value).toBe(0.5);
    expect(report.evidence.outcome.notes).toContain(
      "the repository config asked for $100 (costUsd); the operator's ceiling of $0.5 applies",
    );
    expect(result.published.locations).toEqual(['memory:1']);
    // Every script run went through the policy: the repository's setup first, the operator's time ceiling, the job label.
    expect(executor.requests.length).toBeGreaterThan(1);
    for (const r of executor.requests) {
      expect(r.setup[0]).toBe('echo setup');
      expect(r.limits.timeoutMs).toBeLessThanOrEqual(7000);
      expect(r.labels['repgen-job']).toBe('job-1');
      expect(r.network).toBe(false);
    }
    expect(publisher.progressLines[0]).toEqual({ stage: 'intake', message: 'reading the issue (memory#1)' });
    expect(publisher.progressLines.map((p) => p.stage)).toContain('publish');
  });

  it("the executor's host checks start before the env stage, which they overlap instead of following", async () => {
    const spec = resolveRunSpec(readOperatorEnv({ REPGEN_PYLINT: '0' }), null, {});
    const order: string[] = [];
    const executor = Object.assign(new FakeExecutor(simulate), {
      prepare: async (): Promise<void> => void order.push('executor checks'),
    });
    const env = {
      specFor: async () => (order.push('env spec'), null),
      builder: {} as EnvPorts['builder'],
    };
    const result = await reproduceIssue(
      spec,
      { source: memorySource(ISSUE), publisher: new MemoryPublisher(), executor, env, llm: null },
      new AbortController().signal,
    );
    expect(result.evidence.outcome.status).toBe('reproduced');
    expect(order).toEqual(['executor checks', 'env spec']);
  });

  it('a cancelled run publishes nothing and throws CancelledError', async () => {
    const spec = resolveRunSpec(readOperatorEnv({ REPGEN_PYLINT: '0' }), null, {});
    const publisher = new MemoryPublisher();
    const controller = new AbortController();
    const executor = new FakeExecutor((req, script) =>
      req.entry === 'probe.py' ? (controller.abort(), simulate(req, script)) : simulate(req, script),
    );
    await expect(
      reproduceIssue(spec, { source: memorySource(ISSUE), publisher, executor, llm: null }, controller.signal),
    ).rejects.toBeInstanceOf(CancelledError);
    expect(publisher.reports).toEqual([]);
  });

  it('a source that fails (a deleted issue) ends before any script runs', async () => {
    const spec = resolveRunSpec(readOperatorEnv({}), null, {});
    const executor = new FakeExecutor(simulate);
    const source = { label: 'gone', readIssue: async () => Promise.reject(new Error('issue deleted')), checkout: async () => null };
    await expect(
      reproduceIssue(spec, { source, publisher: new MemoryPublisher(), executor, llm: null }, new AbortController().signal),
    ).rejects.toThrow('issue deleted');
    expect(executor.requests).toEqual([]);
  });
});
