import { describe, expect, it } from 'vitest';
import type { BuiltEnv, EnvBuilder, EnvSpec, ImportProofRequest } from '../../../../src/env/types.js';
import { prepareEnv } from '../../../../src/pipeline/stages/env/index.js';

const env: BuiltEnv = {
  python: '/cache/envs/k/bin/python',
  readOnlyPaths: ['/cache/envs/k'],
  pythonVersion: '3.11.2',
  lockHash: 'a'.repeat(64),
  lock: 'fvcore==0.1.5\n',
  pins: { fvcore: '0.1.5' },
  substitutions: [],
  cached: true,
  buildMs: 0,
};
const spec: EnvSpec = {
  python: null,
  pythonWhy: null,
  requirements: [],
  project: { root: '', importRoots: [''], mode: 'build', distribution: 'extproj', extensions: ['extproj/csrc/vision.cpp'] },
  indexUrl: null,
  extraIndexUrls: [],
  findLinks: [],
  excludeNewer: null,
  buildCommands: [],
  notes: [],
};

describe('the import proof of a project with compiled extensions (detectron2-2154)', () => {
  it('imports the project from the copy its extensions were compiled in, and keeps that proof apart from the bare checkout’s', async () => {
    const asked: ImportProofRequest[] = [];
    const builder: EnvBuilder = {
      build: () => Promise.resolve({ ok: true, env }),
      buildProject: () => Promise.resolve({ ok: true, checkout: '/cache/builds/b-1/checkout', built: true, cached: false, buildMs: 1 }),
      proveImports: (_env, req) => {
        asked.push(req);
        return Promise.resolve({ failures: [], durationMs: 1 } as never);
      },
    };
    const stage = await prepareEnv(
      { issue: { title: 't', body: 'b' }, repoDir: '/repo', checkout: '/repo' },
      {
        specFor: () => Promise.resolve(spec),
        builder,
        proofFor: () =>
          Promise.resolve({
            projectPackages: ['extproj'],
            reportModules: [],
            setupEnv: {},
            distributionOf: () => null,
            checkoutKey: 'c0ffee',
          }),
      },
      () => undefined,
      new AbortController().signal,
    );
    expect(stage.kind).toBe('built');
    expect(asked).toHaveLength(1);
    expect(asked[0]?.importRoots.join('\n')).toContain('/cache/builds/b-1/checkout');
    expect(asked[0]?.importRoots.join('\n')).not.toMatch(/^\/repo/m);
    expect(asked[0]?.checkoutKey).toBe('c0ffee+extensions');
  });
});
