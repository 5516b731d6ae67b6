import { describe, expect, it } from 'vitest';
import { readOperatorEnv, unknownRepgenVariables } from '../../src/config/operator-env.js';
import { RepoConfig } from '../../src/config/repo-config.js';
import { SetupError } from '../../src/errors.js';
import { ReproSettings } from '../../src/pipeline/settings.js';
import { llmChoice, resolveRunSpec } from '../../src/pipeline/run-spec.js';

const operator = (env: Record<string, string> = {}) => readOperatorEnv(env);

describe('resolveRunSpec: the operator caps are ceilings', () => {
  it('an operator cap of $0.50 holds against a repo config asking $100 and a /repgen flag asking more', () => {
    const repo = RepoConfig.parse({ caps: { costUsd: 100, tokens: 5_000_000, minutes: 240, attempts: 50 } });
    const spec = resolveRunSpec(operator({ REPGEN_MAX_COST_USD: '0.5' }), repo, { caps: { costUsd: 1000, attempts: 1000 } });
    expect(spec.settings.maxCostUsd).toBe(0.5);
    expect(spec.caps.costUsd).toEqual({ value: 0.5, ceiling: 0.5, from: 'operator' });
    // The other caps: the operator's defaults, never the repository's larger asks.
    expect(spec.settings.maxTokens).toBe(400_000);
    expect(spec.settings.wallClockMs).toBe(1_800_000);
    expect(spec.settings.maxAttempts).toBe(15);
    expect(spec.notes).toContain("the repository config asked for $100 (costUsd); the operator's ceiling of $0.5 applies");
    expect(spec.notes).toContain("the request asked for $1000 (costUsd); the operator's ceiling of $0.5 applies");
  });

  it('a repository and a request may lower each cap; the lowest wins and says who set it', () => {
    const repo = RepoConfig.parse({ caps: { costUsd: 1, attempts: 4, minutes: 10 } });
    const spec = resolveRunSpec(operator(), repo, { caps: { costUsd: 0.25, tokens: 50_000, minutes: 20 } });
    expect(spec.caps.costUsd).toMatchObject({ value: 0.25, from: 'request' });
    expect(spec.caps.attempts).toMatchObject({ value: 4, from: 'repo' });
    expect(spec.caps.tokens).toMatchObject({ value: 50_000, from: 'request' });
    expect(spec.caps.minutes).toMatchObject({ value: 10, from: 'repo' });
    expect(spec.settings).toMatchObject({ maxCostUsd: 0.25, maxAttempts: 4, maxTokens: 50_000, wallClockMs: 600_000 });
    expect(spec.notes).toEqual([]);
  });

  it('without a config and a request, a run gets exactly the one set of defaults', () => {
    const spec = resolveRunSpec(operator(), null, {});
    expect(spec.settings).toEqual(ReproSettings.parse({}));
    expect(spec.settings).toMatchObject({ maxAttempts: 15, maxTokens: 400_000, maxCostUsd: 5, wallClockMs: 1_800_000 });
    expect(spec.executor.kind).toBe('local');
    expect(spec.policy).toMatchObject({ minGpus: 0, network: false, setup: [], maxTimeoutMs: 120_000, maxMemoryMb: 4096 });
  });

  it('a config file without caps (the defaults) changes no cap: absent is not a request', () => {
    const spec = resolveRunSpec(operator({ REPGEN_MAX_ATTEMPTS: '30', REPGEN_MAX_COST_USD: '9' }), RepoConfig.parse({}), {});
    expect(spec.settings).toMatchObject({ maxAttempts: 30, maxCostUsd: 9 });
  });

  it('a zero dollar cap runs without a model, and says why', () => {
    const env = operator({ ANTHROPIC_API_KEY: 'sk-ant-test-key-123' });
    expect(resolveRunSpec(env, null, {}).llm.provider).toBe('anthropic');
    const spec = resolveRunSpec(env, RepoConfig.parse({ caps: { costUsd: 0 } }), {});
    expect(spec.llm.provider).toBe('none');
    expect(spec.llm.apiKey).toBeUndefined();
    expect(spec.llm.reason).toMatch(/caps.costUsd is 0 \(the repository config\)/);
  });

  it('hostile requests are refused, not half-applied: negative, NaN, unknown keys', () => {
    for (const caps of [{ costUsd: -1 }, { attempts: Number.NaN }, { attempts: 2.5 }, { minutes: 0 }, { tokens: Infinity }]) {
      expect(() => resolveRunSpec(operator(), null, { caps })).toThrow(SetupError);
    }
    expect(() => resolveRunSpec(operator(), null, { caps: { budget: 1 } } as never)).toThrow(SetupError);
  });

  it("the repository's policy: image, GPU, setup, network only on Kubernetes with an allowlist, the job label", () => {
    const repo = RepoConfig.parse({
      executor: { kind: 'kubernetes', image: 'img:1' },
      setup: ['pip install -e .'],
      network: { allow: ['pypi.org'] },
    });
    const spec = resolveRunSpec(operator(), repo, { gpu: true, jobId: 'repro-1' });
    expect(spec.executor.kind).toBe('kubernetes');
    expect(spec.policy).toMatchObject({
      image: 'img:1',
      minGpus: 1,
      setup: ['pip install -e .'],
      network: true,
      labels: { 'repgen-job': 'repro-1' },
    });
    const local = resolveRunSpec(operator(), RepoConfig.parse({ network: { allow: ['pypi.org'] } }), {});
    expect(local.policy.network).toBe(false);
    expect(local.notes.join('\n')).toMatch(/local sandbox stays offline/);
  });

  it('/repgen --llm: a provider name picks the provider, anything else is a model', () => {
    expect(llmChoice('openai')).toEqual({ provider: 'openai' });
    expect(llmChoice('claude-opus-5')).toEqual({ model: 'claude-opus-5' });
    expect(llmChoice(null)).toEqual({});
    const spec = resolveRunSpec(operator({ ANTHROPIC_API_KEY: 'sk-ant-test-key-123' }), null, llmChoice('claude-opus-5'));
    expect(spec.llm).toMatchObject({ provider: 'anthropic', model: 'claude-opus-5' });
  });
});

describe('readOperatorEnv', () => {
  it('names a bad variable in a SetupError', () => {
    expect(() => readOperatorEnv({ REPGEN_MAX_COST_USD: 'lots' })).toThrow(/invalid REPGEN_MAX_COST_USD/);
    expect(() => readOperatorEnv({ REPGEN_SANDBOX: 'unshare' })).toThrow(/unshare is no longer offered/);
  });

  it('empty means unset', () => {
    expect(readOperatorEnv({ REPGEN_MAX_COST_USD: '' }).REPGEN_MAX_COST_USD).toBe(5);
  });

  it('lists REPGEN_ names it does not know (a typo must not pass in silence), not the sandbox ones', () => {
    expect(unknownRepgenVariables({ REPGEN_MAX_COST: '0.5', REPGEN_MAX_COST_USD: '1', REPGEN_SEED: '1', HOME: '/root' })).toEqual([
      'REPGEN_MAX_COST',
    ]);
  });
});

describe('resolveRunSpec: the candidate fix (issue 41)', () => {
  it('is on by default, and the operator, the repository and the request can each only turn it off', () => {
    expect(resolveRunSpec(operator(), null, {}).settings.suggestFix).toBe(true);
    const byRepo = resolveRunSpec(operator(), RepoConfig.parse({ suggestFix: false }), {});
    expect(byRepo.settings.suggestFix).toBe(false);
    expect(byRepo.notes).toContain('no candidate fix: turned off by the repository config (suggestFix: false)');
    expect(resolveRunSpec(operator(), null, { suggestFix: false }).settings.suggestFix).toBe(false);
    const byOperator = resolveRunSpec(operator({ REPGEN_SUGGEST_FIX: '0' }), RepoConfig.parse({ suggestFix: true }), { suggestFix: true });
    expect(byOperator.settings.suggestFix).toBe(false);
    expect(byOperator.notes).toEqual([]);
  });
});
