import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEnvCache } from '../../../src/env/build/env-cache.js';
import type { BuiltEnv } from '../../../src/env/types.js';
import { UvEnvBuilder } from '../../../src/env/uv-builder.js';
import { findBinary, probeSandbox, SANDBOX_INNER_ID } from '../../../src/exec/sandbox/sandbox.js';
import { backendSource, indexSpec, makeDists, requirement, startLoopbackIndex, type LoopbackIndex } from '../../helpers/loopback-pypi.js';
import { removeTree } from '../../../src/env/build/seal-env.js';

// Issue 38 item 4: one project's build code (an sdist's setup.py, a repgen.yml build command) must not change what
// another project's env runs. Real uv, bwrap and Python; the only index is a loopback one serving what is built here.

const PYTHON = '/usr/bin/python3';
const PLANT = "print('PLANTED')";

/**
 * What an attacker's build code does: walks every folder the build can write (the cache's and the build folder's
 * parents) and appends a line to each copy of another project's module it finds there.
 */
const POISON = `
import os
_seen = set()
for _start in (os.environ.get("UV_CACHE_DIR", ""), os.environ.get("TMPDIR", "")):
    _root = _start
    for _ in range(3):
        _root = os.path.dirname(_root)
    for _top in {os.path.dirname(os.path.dirname(_start)), _root}:
        for _d, _subs, _files in os.walk(_top or "/nonexistent"):
            for _f in _files:
                _p = os.path.join(_d, _f)
                if _p.endswith(os.path.join("gamma", "__init__.py")) and _p not in _seen:
                    _seen.add(_p)
                    try:
                        with open(_p, "a") as _h:
                            _h.write("\\n${PLANT}\\n")
                    except OSError:
                        pass
`;

function gammaSource(env: BuiltEnv): string {
  return readFileSync(join(env.readOnlyPaths[0] as string, 'lib', 'python3.11', 'site-packages', 'gamma', '__init__.py'), 'utf8');
}

describe('hostile builds: one project’s build code cannot change another project’s env (cache poisoning)', () => {
  let root: string;
  let index: LoopbackIndex;
  let builder: UvEnvBuilder;
  const signal = new AbortController().signal;
  const build = async (names: string[], buildCommands: string[] = []): Promise<BuiltEnv> => {
    const result = await builder.build(
      {
        ...indexSpec(
          index,
          names.map((n) => requirement(n)),
        ),
        buildCommands,
      },
      { checkout: null, signal },
    );
    if (!result.ok) throw new Error(JSON.stringify(result.failure));
    return result.env;
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'repgen-hostile-cache-'));
    chmodSync(root, 0o711);
    const dists = join(root, 'dists');
    mkdirSync(dists);
    makeDists(dists, [
      { name: 'gamma', version: '1.0', init: 'VALUE = 1\n' },
      { name: 'other', version: '1.0' },
      { name: 'third', version: '1.0' },
      { name: 'poison', version: '1.0', backend: backendSource('poison', '1.0', POISON) },
    ]);
    index = await startLoopbackIndex(dists);
    const uv = findBinary('uv');
    if (!uv) throw new Error('uv not found: run scripts/ensure-system.sh');
    const plan = await probeSandbox('bwrap', { workRoot: tmpdir() });
    builder = new UvEnvBuilder({ cacheRoot: join(root, 'cache'), uv, basePython: PYTHON, plan });
  }, 60_000);

  afterAll(async () => {
    await index?.close();
    await removeTree(root); // sealed envs' folders are read-only
  });

  it('an sdist’s build code cannot reach a finished env of another project, nor the cache its next build takes from', async () => {
    const victim = await build(['gamma']);
    expect(gammaSource(victim)).toBe('VALUE = 1\n');
    // The attacker's project: its sdist builds (and runs POISON) while gamma's files sit in the cache.
    await build(['gamma', 'poison']);
    expect(gammaSource(victim)).not.toContain(PLANT);
    const again = await build(['gamma']);
    expect(again.cached).toBe(true);
    expect(gammaSource(again)).not.toContain(PLANT);
    // A third project built after it: gamma comes from no cache the attacker could write.
    const later = await build(['gamma', 'other']);
    expect(gammaSource(later)).not.toContain(PLANT);
  });

  it('a repgen.yml build command cannot reach them either', async () => {
    const victim = await build(['gamma', 'third']);
    const encoded = Buffer.from(POISON).toString('base64');
    await build(['gamma'], [`python -c "import base64; exec(base64.b64decode('${encoded}'))"`]);
    expect(gammaSource(victim)).not.toContain(PLANT);
    const later = await build(['gamma', 'third', 'other']);
    expect(gammaSource(later)).not.toContain(PLANT);
  });

  it('a finished env is RepGen’s and read-only, and one changed after it was published is built again, not run', async () => {
    const env = await build(['gamma', 'other', 'third']);
    const file = join(env.readOnlyPaths[0] as string, 'lib', 'python3.11', 'site-packages', 'gamma', '__init__.py');
    const me = process.geteuid?.() ?? -1;
    for (const path of [env.readOnlyPaths[0] as string, file]) {
      const st = (await import('node:fs')).lstatSync(path);
      expect(st.uid).toBe(me);
      expect(st.mode & 0o222).toBe(0);
    }
    // Whatever wrote it (a path RepGen did not foresee): the next job must not run it.
    chmodSync(file, 0o644);
    writeFileSync(file, `VALUE = 1\n${PLANT}\n`);
    chmodSync(file, 0o444);
    const next = await build(['gamma', 'other', 'third']);
    expect(next.cached).toBe(false);
    expect(gammaSource(next)).toBe('VALUE = 1\n');
  });

  it.runIf(process.geteuid?.() === 0)(
    'refuses cache folders the sandbox’s uid (65534, nobody) owns, as no build of RepGen’s can trust them',
    async () => {
      for (const sub of ['', 'envs', 'work']) {
        const cache = join(root, `planted-${sub || 'root'}`);
        mkdirSync(join(cache, sub), { recursive: true, mode: 0o700 });
        chmodSync(cache, 0o700);
        chownSync(join(cache, sub), SANDBOX_INNER_ID, SANDBOX_INNER_ID);
        await expect(openEnvCache(cache, { uid: SANDBOX_INNER_ID, gid: SANDBOX_INNER_ID })).rejects.toThrow(
          /belongs to uid 65534 \(the sandbox's/,
        );
      }
    },
  );
});
