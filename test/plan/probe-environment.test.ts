import { describe, expect, it } from 'vitest';
import { probeEnvironment } from '../../src/plan/probe-environment.js';
import { FakeExecutor } from '../fakes/fake-executor.js';

// A module whose import kills the interpreter (a C++ abort, as Debian's torchvision does beside an env's newer torch)
// must not cost the whole probe: the list is halved until it stands alone, and it is recorded as failing to import.
function interpreter(crashing: string[]) {
  return new FakeExecutor((req) => {
    const mods = JSON.parse(req.args?.[0] ?? '[]') as string[];
    if (mods.some((m) => crashing.includes(m)))
      return {
        exitCode: null,
        stderr: "terminate called after throwing an instance of 'std::system_error'\n  what():  Invalid argument\n",
      };
    const modules = Object.fromEntries(mods.map((m) => [m, m === 'absent' ? null : '1.0']));
    const out = {
      python: '3.11.2',
      executable: '/env/bin/python',
      platform: 'Linux',
      modules,
      importErrors: {},
      cuda: false,
      cudaVersion: null,
    };
    return { stdout: `REPGEN_PROBE ${JSON.stringify(out)}\n` };
  });
}

describe('probeEnvironment with an import that crashes the interpreter', () => {
  it('answers for every other module and records the crashing one as failing to import', async () => {
    const executor = interpreter(['torchvision']);
    const { probe, error } = await probeEnvironment(executor, ['kornia', 'absent']);
    expect(error).toBeNull();
    expect(probe?.executable).toBe('/env/bin/python');
    expect(probe?.modules['torch']).toBe('1.0');
    expect(probe?.modules['kornia']).toBe('1.0');
    expect(probe?.modules['absent']).toBeNull();
    expect(probe?.modules['torchvision']).toBeNull();
    expect(probe?.importErrors?.['torchvision']).toMatch(
      /^ImportError: importing torchvision crashed the interpreter \(exit null: what\(\): {2}Invalid argument\)/,
    );
    // One run for the whole list, then halves: far fewer runs than one per module.
    expect(executor.requests.length).toBeGreaterThan(1);
    expect(executor.requests.length).toBeLessThan(2 * Math.ceil(Math.log2(21)) + 2);
  });

  it('a probe that fails without a crash is still an error, and a probe with no crash takes one run', async () => {
    const failing = new FakeExecutor(() => ({ stdout: 'nothing\n', exitCode: 1 }));
    const r = await probeEnvironment(failing, ['kornia']);
    expect(r.probe).toBeNull();
    expect(r.error).toMatch(/printed nothing usable \(exit 1\)/);
    expect(failing.requests).toHaveLength(1);
    const healthy = interpreter([]);
    expect((await probeEnvironment(healthy, ['kornia'])).probe?.modules['kornia']).toBe('1.0');
    expect(healthy.requests).toHaveLength(1);
  });
});

describe('probeEnvironment under the report’s setup lines', () => {
  it('sets the variables for the probe run (Keras 3 imports the backend KERAS_BACKEND names), and asks again under others', async () => {
    const executor = new FakeExecutor((req) => {
      const mods = JSON.parse(req.args?.[0] ?? '[]') as string[];
      const torchBackend = req.env?.['KERAS_BACKEND'] === 'torch';
      const modules = Object.fromEntries(mods.map((m) => [m, m === 'keras' && !torchBackend ? null : '1.0']));
      const importErrors = torchBackend ? {} : { keras: "ModuleNotFoundError: No module named 'tensorflow'" };
      const out = {
        python: '3.11.2',
        executable: '/env/bin/python',
        platform: 'Linux',
        modules,
        importErrors,
        cuda: false,
        cudaVersion: null,
      };
      return { stdout: `REPGEN_PROBE ${JSON.stringify(out)}\n` };
    });
    const set = await probeEnvironment(executor, ['keras'], undefined, undefined, { env: { KERAS_BACKEND: 'torch' } });
    expect(set.probe?.modules['keras']).toBe('1.0');
    expect(executor.requests[0]?.env).toEqual({ KERAS_BACKEND: 'torch' });
    const unset = await probeEnvironment(executor, ['keras']);
    expect(unset.probe?.modules['keras']).toBeNull();
    expect(executor.requests).toHaveLength(2);
  });
});
