import { describe, expect, it } from 'vitest';
import type { BuiltEnv, EnvBuilder, EnvSpec } from '../../../src/env/types.js';
import { envExecutorAt } from '../../../src/pipeline/stages/env/env-at.js';
import type { EnvPorts } from '../../../src/pipeline/stages/env/index.js';
import { envSpec } from '../../fakes/env-spec.js';
import { FakeExecutor } from '../../fakes/fake-executor.js';

// A bisection step's env: the env stage run again on that commit's checkout, the spec read from its own files.
const ISSUE = { title: 'value() returns 2', body: 'It worked in v1.0.' };

function spec(numpy: string): EnvSpec {
  return envSpec({
    requirements: [{ name: 'numpy', specifier: numpy, extras: [], source: 'repo', why: `requirements.txt:1 numpy${numpy}` }],
  });
}

function env(hash: string, cached: boolean): BuiltEnv {
  return {
    python: `/cache/envs/${hash}/bin/python`,
    readOnlyPaths: [`/cache/envs/${hash}`],
    pythonVersion: '3.11.7',
    lockHash: hash.repeat(64).slice(0, 64),
    lock: 'numpy==1.23.5\n',
    pins: { numpy: '1.23.5' },
    substitutions: [],
    cached,
    buildMs: 10,
  };
}

/** Spec by checkout: `/co/old` declares numpy<1.24, `/co/new` numpy>=2, `/co/bare` nothing, `/co/broken` an unbuildable pin. */
function ports(): EnvPorts & { specsFor: string[] } {
  const specs: Record<string, EnvSpec | null> = {
    '/co/old': spec('<1.24'),
    '/co/new': spec('>=2'),
    '/co/bare': null,
    '/co/broken': spec('==0.0.1'),
  };
  const built = new Set<string>();
  const builder: EnvBuilder = {
    build: async (s) => {
      const pin = s.requirements[0]!.specifier;
      if (pin === '==0.0.1')
        return {
          ok: false,
          failure: {
            step: 'resolve',
            package: 'numpy',
            message: 'No solution found: numpy==0.0.1',
            logTail: '',
            configKey: 'environment.packages',
          },
        };
      const hash = pin === '<1.24' ? 'a' : 'b';
      const cached = built.has(hash);
      built.add(hash);
      return { ok: true, env: env(hash, cached) };
    },
  };
  const p = {
    specsFor: [] as string[],
    specFor: async ({ repoDir }: { repoDir: string | null }) => {
      p.specsFor.push(repoDir ?? '');
      return specs[repoDir ?? ''] ?? null;
    },
    builder,
  };
  return p;
}

const ws = (hostPath: string) => ({ hostPath, mountPath: '/workspace' });

describe('envExecutorAt (each bisection step in its commit’s own environment)', () => {
  it('reads each checkout’s own spec and runs that commit’s scripts with its env’s interpreter, reusing an env by lock', async () => {
    const inner = new FakeExecutor(() => ({ stdout: 'ok\n' }));
    const p = ports();
    const at = envExecutorAt(ISSUE, p, inner);

    const old = await at(ws('/co/old'));
    const next = await at(ws('/co/new'));
    const oldAgain = await at(ws('/co/old'));
    expect(p.specsFor).toEqual(['/co/old', '/co/new', '/co/old']);
    if ('skip' in old || 'skip' in next || 'skip' in oldAgain) throw new Error('no step should be skipped');
    expect(old.env).toBe(`lock ${'a'.repeat(12)}, built`);
    expect(next.env).toBe(`lock ${'b'.repeat(12)}, built`);
    expect(oldAgain.env).toBe(`lock ${'a'.repeat(12)}, reused`);

    await old.executor.run({ files: [{ path: 'repro.py', content: 'print(1)\n' }], entry: 'repro.py', workspace: ws('/co/old') });
    await next.executor.run({ files: [{ path: 'repro.py', content: 'print(1)\n' }], entry: 'repro.py', workspace: ws('/co/new') });
    expect(inner.requests.map((r) => r.interpreter)).toEqual(['/cache/envs/a/bin/python', '/cache/envs/b/bin/python']);
  });

  it('a commit that declares nothing to build runs on the executor without an env', async () => {
    const inner = new FakeExecutor(() => ({ stdout: 'ok\n' }));
    const r = await envExecutorAt(ISSUE, ports(), inner)(ws('/co/bare'));
    expect(r).toEqual({ executor: inner, env: null });
  });

  it('a commit whose env cannot be built is skipped, with the failing step and the key that fixes it', async () => {
    const inner = new FakeExecutor(() => ({ stdout: 'ok\n' }));
    const r = await envExecutorAt(ISSUE, ports(), inner)(ws('/co/broken'));
    expect('skip' in r && r.skip).toMatch(
      /^the environment could not be built at this commit: .*resolve of numpy failed \(No solution found/,
    );
    expect('skip' in r && r.skip).toContain('`environment.packages`');
    expect(inner.requests).toEqual([]);
  });

  it('a commit whose env spec cannot be worked out runs on the executor without an env, and its step says why (issue 38)', async () => {
    const inner = new FakeExecutor(() => ({ stdout: 'ok\n' }));
    const p = { ...ports(), specFor: async () => Promise.reject(new Error('requirements.txt: more than 20000 requirements')) };
    const r = await envExecutorAt(ISSUE, p, inner)(ws('/co/huge'));
    expect(r).toEqual({
      executor: inner,
      env: "the project's environment could not be worked out (requirements.txt: more than 20000 requirements); the runs used the base interpreter.",
    });
  });
});
