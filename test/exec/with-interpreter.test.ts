import { describe, expect, it } from 'vitest';
import { withInterpreter } from '../../src/exec/with-interpreter.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import { simulate } from '../fakes/repro-fixtures.js';

describe('withInterpreter', () => {
  const choice = { python: '/envs/k/bin/python', key: 'k'.repeat(64) };

  it("gives every request the env's interpreter unless it names its own", async () => {
    const inner = new FakeExecutor(simulate);
    const ex = withInterpreter(inner, choice);
    await ex.run({ files: [{ path: 'a.py', content: 'print(1)' }], entry: 'a.py' });
    await ex.run({ files: [{ path: 'a.py', content: 'print(1)' }], entry: 'a.py', interpreter: '/usr/bin/python3' });
    expect(inner.requests.map((r) => r.interpreter)).toEqual([choice.python, '/usr/bin/python3']);
  });

  it("keys the probe cache by the env too, and keeps an executor's unknown key unknown", async () => {
    const keyed = { name: 'k', run: new FakeExecutor(simulate).run, environmentKey: async () => 'base' };
    expect(await withInterpreter(keyed, choice).environmentKey?.()).toBe(`base\u0000env:${choice.python}\u0000${choice.key}`);
    const unknown = { name: 'u', run: keyed.run, environmentKey: async () => null };
    expect(await withInterpreter(unknown, choice).environmentKey?.()).toBeNull();
    expect(withInterpreter({ name: 'n', run: keyed.run }, choice).environmentKey).toBeUndefined();
  });

  it("names the env's folder on each request it gives the interpreter, so a cluster run can mount it", async () => {
    const inner = new FakeExecutor(simulate);
    const env = { dir: '/cache/envs/abc', cacheRoot: '/cache' };
    const ex = withInterpreter(inner, { ...choice, env });
    await ex.run({ files: [{ path: 'a.py', content: 'print(1)' }], entry: 'a.py' });
    await ex.run({ files: [{ path: 'a.py', content: 'print(1)' }], entry: 'a.py', interpreter: '/usr/bin/python3' });
    expect(inner.requests.map((r) => r.interpreterEnv)).toEqual([env, undefined]);
  });
});
