import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDiskProbeStore, probeEnvironment, type ProbeStore, type StoredProbe } from '../../src/plan/index.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** An executor whose probe answers torch only, with an environment key the test moves (a package installed). */
function keyedExecutor(key: { value: string | null }): {
  executor: FakeExecutor & { environmentKey(): Promise<string | null> };
  asked: string[][];
} {
  const asked: string[][] = [];
  const executor = Object.assign(
    new FakeExecutor((req) => {
      const mods = JSON.parse(req.args?.[0] ?? '[]') as string[];
      asked.push(mods);
      const modules = Object.fromEntries(mods.map((m) => [m, m === 'torch' ? '1.13.0' : null]));
      return {
        stdout: `REPGEN_PROBE ${JSON.stringify({ python: '3.11.2', executable: '/usr/bin/python3', platform: 'Linux', modules, importErrors: {}, cuda: false, cudaVersion: null })}\n`,
      };
    }),
    { environmentKey: async () => key.value },
  );
  return { executor, asked };
}

function mapStore(): ProbeStore & { saved: Map<string, StoredProbe> } {
  const saved = new Map<string, StoredProbe>();
  return { saved, load: async (k) => saved.get(k) ?? null, save: async (k, p) => void saved.set(k, p) };
}

describe('probeEnvironment with a store: answers outlive the process, keyed by the environment', () => {
  it('a second process (a new executor) with the same key probes nothing; a moved key probes again', async () => {
    const store = mapStore();
    const key = { value: 'python-a' };
    const one = keyedExecutor(key);
    const first = await probeEnvironment(one.executor, ['torch'], undefined, undefined, { store, now: () => 1000 });
    expect(one.asked).toHaveLength(1);
    expect(store.saved.get('python-a')?.savedAt).toBe(1000);

    const two = keyedExecutor(key);
    const again = await probeEnvironment(two.executor, ['torch'], undefined, undefined, { store });
    expect(two.asked).toHaveLength(0);
    expect(again.probe).toEqual(first.probe);
    // A module never asked about is probed, alone, and the stored entry grows.
    await probeEnvironment(two.executor, ['einops'], undefined, undefined, { store });
    expect(two.asked).toEqual([['einops']]);
    expect(store.saved.get('python-a')?.modules).toHaveProperty('einops', null);

    key.value = 'python-a-with-einops';
    const three = keyedExecutor(key);
    await probeEnvironment(three.executor, ['torch'], undefined, undefined, { store });
    expect(three.asked).toHaveLength(1);
  });

  it('no key, or a workspace on the import path: nothing read or saved', async () => {
    const store = mapStore();
    const noKey = keyedExecutor({ value: null });
    await probeEnvironment(noKey.executor, ['torch'], undefined, undefined, { store });
    expect(store.saved.size).toBe(0);
    const keyed = keyedExecutor({ value: 'k' });
    await probeEnvironment(keyed.executor, ['torch'], undefined, { hostPath: '/tmp/checkout' }, { store });
    expect(store.saved.size).toBe(0);
  });
});

describe('createDiskProbeStore', () => {
  const entry: StoredProbe = {
    python: '3.11.2',
    executable: '/usr/bin/python3',
    platform: 'Linux',
    modules: { torch: '1.13.0', tensorflow: null },
    importErrors: {},
    cuda: false,
    cudaVersion: null,
    savedAt: 5000,
  };

  it('reads back what it saved, ignores what is too old, malformed or from the future', async () => {
    const dir = makeTempDir('repgen-probe-store-');
    let now = 6000;
    const store = createDiskProbeStore(join(dir, 'nested'), { maxAgeMs: 10_000, now: () => now });
    expect(await store.load('k')).toBeNull();
    await store.save('k', entry);
    expect(await store.load('k')).toEqual(entry);
    expect(await store.load('other')).toBeNull();
    now = 16_000;
    expect(await store.load('k')).toBeNull();
    now = 4000;
    expect(await store.load('k')).toBeNull();
    now = 6000;
    const [file] = await readdir(join(dir, 'nested'));
    await writeFile(join(dir, 'nested', file as string), '{"python": 3');
    expect(await store.load('k')).toBeNull();
  });

  it('a folder it cannot create costs only the cache', async () => {
    const store = createDiskProbeStore('/proc/repgen-cannot-write-here');
    await expect(store.save('k', entry)).resolves.toBeUndefined();
    expect(await store.load('k')).toBeNull();
  });
});
