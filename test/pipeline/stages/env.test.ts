import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readOperatorEnv } from '../../../src/config/operator-env.js';
import type { BuiltEnv, EnvBuilder, EnvSpec, ProjectBuildResult } from '../../../src/env/types.js';
import { buildResultComment } from '../../../src/publish/build-result-comment.js';
import { reproduceIssue } from '../../../src/pipeline/reproduce-issue.js';
import { silentLogger } from '../../../src/log.js';
import { candidateNotes } from '../../../src/pipeline/env-evidence.js';
import { resolveRunSpec } from '../../../src/pipeline/run-spec.js';
import { defaultEnvPorts } from '../../../src/pipeline/stages/env/default-env-ports.js';
import { envFailureSummary, prepareEnv, type EnvPorts } from '../../../src/pipeline/stages/env/index.js';
import { ReproOutcome } from '../../../src/pipeline/types.js';
import { envSpec } from '../../fakes/env-spec.js';
import { FakeExecutor } from '../../fakes/fake-executor.js';
import { MemoryPublisher } from '../../fakes/memory-publisher.js';
import { memorySource } from '../../fakes/memory-source.js';
import { CRASH_ISSUE, GOOD_SCRIPT, simulate } from '../../fakes/repro-fixtures.js';

const ISSUE = { title: 'Linear layer shape error', body: `${CRASH_ISSUE}\n\`\`\`python\n${GOOD_SCRIPT}\`\`\`\n` };

const SPEC: EnvSpec = envSpec({
  requirements: [
    { name: 'numpy', specifier: '<1.24', extras: [], source: 'era', why: 'the ref is from 2019' },
    { name: 'absl-py', specifier: '', extras: [], source: 'repo', why: 'requirements.txt:3 absl-py' },
  ],
  notes: ['the report asked for a CUDA build of torch; the CPU build was used'],
});

const ENV: BuiltEnv = {
  python: '/cache/envs/abc/bin/python',
  readOnlyPaths: ['/cache/envs/abc'],
  pythonVersion: '3.11.7',
  lockHash: 'a'.repeat(64),
  lock: 'absl-py==2.1.0\nnumpy==1.23.5\n',
  pins: { 'absl-py': '2.1.0', numpy: '1.23.5' },
  substitutions: [{ name: 'torch', wanted: '2.8.0+cu129', got: '2.8.0', why: 'no CUDA build runs here' }],
  cached: true,
  buildMs: 1200,
};

function ports(result: Awaited<ReturnType<EnvBuilder['build']>> | Error, spec: EnvSpec | null = SPEC): EnvPorts & { builds: number } {
  const p = {
    builds: 0,
    specFor: async () => spec,
    builder: {
      build: async () => {
        p.builds += 1;
        if (result instanceof Error) throw result;
        return result;
      },
    },
  };
  return p;
}

describe('the environment stage', () => {
  it('builds nothing when the spec function finds nothing to build', async () => {
    const p = ports({ ok: true, env: ENV }, null);
    const lines: string[] = [];
    const r = await prepareEnv(
      { issue: ISSUE, repoDir: null, checkout: null },
      p,
      (_s, m) => void lines.push(m),
      new AbortController().signal,
    );
    expect(r).toEqual({ kind: 'none' });
    expect(p.builds).toBe(0);
    expect(lines).toEqual([]);
  });

  it('says how many packages it builds, and a builder that throws is a failed build, not a crash', async () => {
    const lines: string[] = [];
    const r = await prepareEnv(
      { issue: ISSUE, repoDir: '/repo', checkout: '/repo' },
      ports(new Error('uv: not found')),
      (_s, m) => void lines.push(m),
      new AbortController().signal,
    );
    expect(lines).toEqual(['building the environment (2 packages)']);
    expect(r.kind).toBe('failed');
    if (r.kind === 'failed') expect(r.failure.message).toBe('uv: not found');
  });

  it("runs every script of the job with the env's interpreter and records the env in evidence and comment", async () => {
    const spec = resolveRunSpec(readOperatorEnv({ REPGEN_PYLINT: '0' }), null, {});
    const executor = new FakeExecutor(simulate);
    const publisher = new MemoryPublisher();
    const result = await reproduceIssue(
      spec,
      { source: memorySource(ISSUE), publisher, executor, llm: null, env: ports({ ok: true, env: ENV }) },
      new AbortController().signal,
    );
    expect(executor.requests.length).toBeGreaterThan(1);
    for (const r of executor.requests) expect(r.interpreter).toBe(ENV.python);
    const o = ReproOutcome.parse(result.evidence.outcome);
    expect(o.status).toBe('reproduced');
    expect(o.env).toMatchObject({ lockHash: ENV.lockHash, pins: ENV.pins, cached: true, failure: null, lock: ENV.lock });
    expect(o.environment['env']).toBe(`Python 3.11.7, 2 pinned packages, lock ${'a'.repeat(12)}, reused`);
    expect(o.notes).toContain('Environment: torch 2.8.0+cu129 was asked, 2.8.0 was used (no CUDA build runs here).');
    expect(o.notes).toContain('Environment: the report asked for a CUDA build of torch; the CPU build was used');
    expect(publisher.progressLines.map((l) => l.message)).toContain('building the environment (2 packages)');
  });

  it("records each key package's version and the source that decided it in evidence.json and the comment", async () => {
    const spec = resolveRunSpec(readOperatorEnv({ REPGEN_PYLINT: '0' }), null, {});
    const decisions = [
      { name: 'torch', specifier: '==2.7.*', version: null, source: 'report' as const, why: 'the report: “torch 2.7”' },
      { name: 'numpy', specifier: '<1.24', version: '1.23.5', source: 'base' as const, why: "the base interpreter's 1.23.5" },
    ];
    const publisher = new MemoryPublisher();
    const result = await reproduceIssue(
      spec,
      {
        source: memorySource(ISSUE),
        publisher,
        executor: new FakeExecutor(simulate),
        llm: null,
        env: ports({ ok: true, env: ENV }, { ...SPEC, decisions }),
      },
      new AbortController().signal,
    );
    const o = ReproOutcome.parse(result.evidence.outcome);
    expect(o.env?.decisions).toEqual(decisions);
    const line = 'Environment: versions decided: torch ==2.7.* (the report), numpy 1.23.5 (the base interpreter).';
    expect(o.notes).toContain(line);
    expect(buildResultComment(o)).toContain('torch (decided) `==2.7.* (the report)`');
  });

  it('records the decision when the base interpreter is kept: no env is built, and the evidence says what it satisfied', async () => {
    const spec = resolveRunSpec(readOperatorEnv({ REPGEN_PYLINT: '0' }), null, {});
    const decisions = [
      {
        name: 'torch',
        specifier: '>=1.0',
        version: '1.13.1',
        source: 'base' as const,
        why: "the base interpreter's 1.13.1 satisfies >=1.0",
      },
    ];
    let builds = 0;
    const env: EnvPorts = {
      specFor: async () => ({ keep: 'base', decisions }),
      builder: { build: async () => ((builds += 1), { ok: true, env: ENV }) },
    };
    const executor = new FakeExecutor(simulate);
    const result = await reproduceIssue(
      spec,
      { source: memorySource(ISSUE), publisher: new MemoryPublisher(), executor, llm: null, env },
      new AbortController().signal,
    );
    expect(builds).toBe(0);
    for (const r of executor.requests) expect(r.interpreter).not.toBe(ENV.python);
    const o = ReproOutcome.parse(result.evidence.outcome);
    expect(o.env).toBeUndefined();
    expect(o.environment['torch (decided)']).toBe('1.13.1 (the base interpreter)');
    expect(o.notes).toContain('Environment: versions decided: torch 1.13.1 (the base interpreter).');
  });

  it('an env that cannot be built ends exit_env: no script runs, never "no model" or needs-info, the fix is named', async () => {
    const spec = resolveRunSpec(readOperatorEnv({ REPGEN_PYLINT: '0' }), null, {});
    const executor = new FakeExecutor(simulate);
    const publisher = new MemoryPublisher();
    const failure = {
      step: 'install' as const,
      package: 'detectron2',
      message: "error: command 'gcc' failed\nmore",
      logTail: 'building _C extension\nerror: command gcc failed',
      configKey: 'environment.build',
    };
    const result = await reproduceIssue(
      spec,
      { source: memorySource(ISSUE), publisher, executor, llm: null, env: ports({ ok: false, failure }) },
      new AbortController().signal,
    );
    expect(executor.requests).toEqual([]);
    const o = result.evidence.outcome;
    expect(o.status).toBe('exit_env');
    expect(o.verdict).toBe('environment_failed');
    expect(o.summary).toBe(envFailureSummary(failure));
    expect(o.summary).toContain('install of detectron2 failed');
    expect(o.summary).toContain('`environment.build`');
    expect(o.env?.failure).toEqual(failure);
    const comment = buildResultComment(o);
    expect(comment).toContain('The project’s environment could not be built');
    expect(comment).not.toContain('No model configured');
    expect(comment).not.toContain('Needs more information');
    expect(publisher.reports).toHaveLength(1);
  });
});

describe('the import ladder in the evidence', () => {
  it('lists every candidate with its key versions and why it was rejected or accepted, in evidence.json and the notes', async () => {
    const old: BuiltEnv = { ...ENV, pins: { ...ENV.pins, torch: '1.13.1' } };
    const newer: BuiltEnv = { ...ENV, lockHash: 'b'.repeat(64), pins: { ...ENV.pins, torch: '2.5.0' } };
    const builder: EnvBuilder = {
      build: async (s) => ({ ok: true, env: s.requirements.some((r) => r.specifier.includes('>1.13.1')) ? newer : old }),
      proveImports: async (env) => ({
        failures:
          env === old ? [{ module: 'diffusers', error: "AttributeError: module 'torch' has no attribute 'xpu'", versions: {} }] : [],
      }),
    };
    const envPorts: EnvPorts = {
      builder,
      specFor: async () => envSpec({ requirements: [{ name: 'torch', specifier: '>=1.4', extras: [], source: 'repo', why: 'setup.py' }] }),
      proofFor: async () => ({ projectPackages: ['diffusers'], reportModules: [], setupEnv: {}, distributionOf: () => null }),
    };
    const spec = resolveRunSpec(readOperatorEnv({ REPGEN_PYLINT: '0' }), null, {});
    const result = await reproduceIssue(
      spec,
      { source: memorySource(ISSUE), publisher: new MemoryPublisher(), executor: new FakeExecutor(simulate), llm: null, env: envPorts },
      new AbortController().signal,
    );
    const o = ReproOutcome.parse(result.evidence.outcome);
    expect(o.env?.lockHash).toBe(newer.lockHash);
    expect(o.env?.candidates).toEqual([
      expect.objectContaining({
        outcome: 'rejected',
        key: { numpy: '1.23.5', torch: '1.13.1' },
        why: 'diffusers: torch 1.13.1 has no torch.xpu',
      }),
      expect.objectContaining({ outcome: 'accepted', change: 'torch >=1.4,>1.13.1', key: { numpy: '1.23.5', torch: '2.5.0' } }),
    ]);
    expect(o.notes).toContain(
      'Environment: candidate 1 with torch 1.13.1, numpy 1.23.5: rejected, diffusers: torch 1.13.1 has no torch.xpu',
    );
    expect(candidateNotes([{ lockHash: null, change: '', key: {}, outcome: 'accepted', why: 'imports x' }])).toEqual([]);
    expect(candidateNotes([{ lockHash: null, change: '', key: {}, outcome: 'rejected', why: 'x: y' }])).toEqual([
      'Environment: candidate 1: rejected, x: y',
    ]);
  });
});

describe('what the default ports prove by import', () => {
  it('the project’s packages, the report’s top-level imports with their distributions, and its setup lines', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'repgen-proof-'));
    try {
      mkdirSync(join(repo, 'mylib'));
      writeFileSync(join(repo, 'mylib', '__init__.py'), '');
      writeFileSync(join(repo, 'pyproject.toml'), '[project]\nname = "mylib"\nversion = "1.0"\n');
      const body =
        '```python\nimport os\nos.environ["KERAS_BACKEND"] = "torch"\nimport keras\nfrom sklearn.metrics import f1_score\nimport mylib.sub\n```\n';
      const settings = resolveRunSpec(readOperatorEnv({ REPGEN_PYLINT: '0' }), null, {}).env;
      const { ports: p } = await defaultEnvPorts(settings, silentLogger);
      const proof = await p?.proofFor?.({ issue: { ...ISSUE, body }, repoDir: repo });
      expect(proof?.projectPackages).toEqual(['mylib']);
      expect(proof?.reportModules).toEqual(expect.arrayContaining(['os', 'keras', 'sklearn', 'mylib']));
      expect(proof?.setupEnv).toEqual({ KERAS_BACKEND: 'torch' });
      expect(proof?.distributionOf('sklearn')).toBe('scikit-learn');
      expect(p?.maxCandidates).toBe(3);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});

describe('a project with C/C++ extensions', () => {
  const project = { root: '', importRoots: [''], mode: 'build' as const, distribution: 'pkg', extensions: ['csrc/ext.c'] };
  const withExt: EnvSpec = { ...SPEC, project };
  const checkout = { repoDir: '/repo', workspace: { hostPath: '/repo', packages: ['pkg'] } };
  const fix = { ref: 'fix', sha: 'f'.repeat(40), workspace: { hostPath: '/repo-at-fix' } };

  function extPorts(build: (hostPath: string) => ProjectBuildResult): EnvPorts & { compiled: string[] } {
    const compiled: string[] = [];
    return {
      compiled,
      specFor: async () => withExt,
      builder: {
        build: async () => ({ ok: true, env: ENV }),
        buildProject: async (_spec, env, hostPath) => {
          expect(env).toBe(ENV);
          compiled.push(hostPath);
          return build(hostPath);
        },
      },
    };
  }

  it('compiles them before any run; every run of the job, the fix check’s too, mounts its checkout’s built copy', async () => {
    const spec = resolveRunSpec(readOperatorEnv({ REPGEN_PYLINT: '0' }), null, {});
    const executor = new FakeExecutor(simulate);
    const p = extPorts((h) => ({ ok: true, checkout: `/cache/builds/${h.slice(1)}`, built: true, cached: false, buildMs: 2500 }));
    const result = await reproduceIssue(
      spec,
      {
        source: memorySource(ISSUE, { ...checkout, fix }),
        publisher: new MemoryPublisher(),
        executor,
        llm: null,
        env: p,
        buildContext: null,
      },
      new AbortController().signal,
    );
    expect(result.evidence.outcome.status).toBe('reproduced');
    expect(p.compiled).toEqual(['/repo', '/repo-at-fix']);
    const mounted = new Set(executor.requests.map((r) => r.workspace?.hostPath));
    expect(mounted).toEqual(new Set(['/cache/builds/repo', '/cache/builds/repo-at-fix']));
    expect(result.evidence.outcome.environment['extensions']).toMatch(/compiled in 2\.5 s/);
  });

  it('an extension that does not compile ends exit_env with the compiler’s log; no script runs', async () => {
    const spec = resolveRunSpec(readOperatorEnv({ REPGEN_PYLINT: '0' }), null, {});
    const executor = new FakeExecutor(simulate);
    const failure = {
      step: 'extensions' as const,
      package: 'pkg',
      message: "building the project's extensions (csrc/ext.c) failed",
      logTail: 'csrc/ext.c:1:1: error: unknown type name',
      configKey: 'environment.build',
    };
    const result = await reproduceIssue(
      spec,
      {
        source: memorySource(ISSUE, checkout),
        publisher: new MemoryPublisher(),
        executor,
        llm: null,
        env: extPorts(() => ({ ok: false, failure })),
        buildContext: null,
      },
      new AbortController().signal,
    );
    expect(executor.requests).toEqual([]);
    const o = result.evidence.outcome;
    expect(o).toMatchObject({ status: 'exit_env', verdict: 'environment_failed', scriptRan: false });
    expect(o.summary).toContain('extensions of pkg failed');
    expect(o.outputExcerpt).toContain('unknown type name');
  });

  it('a fixing ref whose extensions do not compile makes the fix check inconclusive, never "not fixed"', async () => {
    const spec = resolveRunSpec(readOperatorEnv({ REPGEN_PYLINT: '0' }), null, {});
    const executor = new FakeExecutor(simulate);
    const failure = { step: 'extensions' as const, package: 'pkg', message: 'failed', logTail: 'error', configKey: 'environment.build' };
    const p = extPorts((h) =>
      h === '/repo' ? { ok: true, checkout: '/cache/builds/repo', built: true, cached: true, buildMs: 0 } : { ok: false, failure },
    );
    const result = await reproduceIssue(
      spec,
      {
        source: memorySource(ISSUE, { ...checkout, fix }),
        publisher: new MemoryPublisher(),
        executor,
        llm: null,
        env: p,
        buildContext: null,
      },
      new AbortController().signal,
    );
    expect(result.evidence.outcome.status).toBe('reproduced');
    expect(result.evidence.fixCheck?.verdict).toBe('inconclusive');
    expect(executor.requests.every((r) => r.workspace?.hostPath === '/cache/builds/repo')).toBe(true);
  });
});
