import { describe, expect, it } from 'vitest';
import type { BuiltEnv, EnvBuilder, EnvBuildFailure, EnvSpec, ImportProofRequest, ProofFailure } from '../../../../src/env/types.js';
import { prepareEnv } from '../../../../src/pipeline/stages/env/index.js';
import { withEnv } from '../../../../src/pipeline/env-evidence.js';
import type { ReproEvidence } from '../../../../src/pipeline/build-evidence.js';

// torchvision-7885/7103 (fixtures/bench/repo-heavy): setup.py compiles `_C`, which fails where torch has no C++ headers,
// yet torchvision's Python imports and runs without it (it warns). The env is used as it is only when the proof passes.
const env: BuiltEnv = {
  python: '/cache/envs/k/bin/python',
  readOnlyPaths: ['/cache/envs/k'],
  pythonVersion: '3.11.2',
  lockHash: 'b'.repeat(64),
  lock: 'requests==2.28.1\n',
  pins: { requests: '2.28.1' },
  substitutions: [],
  cached: false,
  buildMs: 5,
};
const spec: EnvSpec = {
  python: null,
  pythonWhy: null,
  requirements: [],
  project: { root: '', importRoots: [''], mode: 'build', distribution: 'torchvision', extensions: ['torchvision/csrc/vision.cpp'] },
  indexUrl: null,
  extraIndexUrls: [],
  findLinks: [],
  excludeNewer: null,
  buildCommands: [],
  notes: [],
};
const failure: EnvBuildFailure = {
  step: 'extensions',
  package: 'torchvision',
  message: "building the project's extensions (torchvision/csrc/vision.cpp) failed: the interpreter lacks torch's C++ headers",
  logTail: 'fatal error: ATen/ATen.h: No such file or directory',
  configKey: 'environment.build',
};
const proof = {
  projectPackages: ['torchvision'],
  reportModules: [],
  setupEnv: {},
  distributionOf: () => null,
  checkoutKey: 'c0ffee',
};

function run(answer: ProofFailure[] | null, withProof = true, fail: EnvBuildFailure = failure) {
  const asked: ImportProofRequest[] = [];
  const builder: EnvBuilder = {
    build: () => Promise.resolve({ ok: true, env }),
    buildProject: () => Promise.resolve({ ok: false, failure: fail }),
    proveImports: (_env, req) => {
      asked.push(req);
      return Promise.resolve(answer === null ? null : { failures: answer });
    },
  };
  const ports = { specFor: () => Promise.resolve(spec), builder, ...(withProof ? { proofFor: () => Promise.resolve(proof) } : {}) };
  const stage = prepareEnv(
    { issue: { title: 't', body: 'b' }, repoDir: '/repo', checkout: '/repo' },
    ports,
    () => undefined,
    new AbortController().signal,
  );
  return { stage, asked };
}

const evidence = { outcome: { environment: {}, notes: [] } } as unknown as ReproEvidence;

describe('a project whose extensions do not compile (torchvision’s optional _C)', () => {
  it('is used with the bare checkout when the project imports without them, and the evidence says they are not built', async () => {
    const { stage, asked } = run([]);
    const s = await stage;
    expect(s.kind).toBe('built');
    if (s.kind !== 'built') return;
    expect(s.project).toBeNull();
    expect(asked).toHaveLength(1);
    // The proof imports the checkout itself (nothing was compiled), under its own key, not the `+extensions` one.
    expect(asked[0]?.importRoots.join('\n')).toMatch(/^\/repo/m);
    expect(asked[0]?.checkoutKey).toBe('c0ffee');
    expect(s.candidates?.[0]).toMatchObject({ outcome: 'accepted' });
    expect(s.candidates?.[0]?.why).toContain('without its compiled extensions');
    const o = withEnv(evidence, s).outcome;
    expect(o.environment['extensions']).toMatch(/^not built \(building the project's extensions .*lacks torch's C\+\+ headers\)/);
    expect((o.notes ?? []).join('\n')).toContain("Environment: the project's C/C++ extensions did not build");
  });

  it('ends as the compile failure, as before, when the project does not import without them', async () => {
    const missing = { module: 'torchvision', error: "ImportError: cannot import name '_C' from 'torchvision'", versions: {} };
    const s = await run([missing]).stage;
    expect(s).toMatchObject({ kind: 'failed', failure });
  });

  it('ends as the compile failure when no proof can vouch for the env (no proof input, or the proof cannot run)', async () => {
    expect(await run([], false).stage).toMatchObject({ kind: 'failed', failure });
    expect(await run(null).stage).toMatchObject({ kind: 'failed', failure });
  });

  it('hostile: a compiler message of many lines and megabytes reaches the notes as its first line, cut at 300 characters', async () => {
    const message = `${'<img src=x onerror=alert(1)>'.repeat(2000)}\n@everyone ${'x'.repeat(100_000)}`;
    const s = await run([], true, { ...failure, message }).stage;
    expect(s.kind).toBe('built');
    if (s.kind !== 'built') return;
    const o = withEnv(evidence, s).outcome;
    const note = (o.notes ?? []).find((n) => n.includes('did not build')) ?? '';
    expect(note).not.toContain('@everyone');
    expect(note.length).toBeLessThan(600);
    expect(String(o.environment['extensions']).length).toBeLessThan(400);
  });
});
