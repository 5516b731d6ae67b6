import { describe, expect, it } from 'vitest';
import { withoutUnbuildable } from '../../../src/env/build/unbuildable.js';
import { envSpec } from '../../fakes/env-spec.js';

const req = (name: string, source: 'repo' | 'script' | 'report' | 'config') => ({
  name,
  specifier: '',
  extras: [],
  source,
  why: `setup.py install_requires ${name}`,
});
const failure = (pkg: string | null, step: 'install' | 'resolve' = 'install') => ({
  step,
  package: pkg,
  message: `installing the lock: building ${pkg}==0.1.0 failed`,
  logTail: 'fastBPE/fastBPE.cpp:205:12: fatal error: longintrepr.h: No such file or directory',
  configKey: 'environment.packages',
});

describe('withoutUnbuildable (a declared dependency that does not build on this Python)', () => {
  it('leaves out a dependency only the repository declares, keeping the rest, with a note naming the error', () => {
    const spec = envSpec({ requirements: [req('fastBPE', 'repo'), req('numpy', 'repo')] });
    const out = withoutUnbuildable(spec, failure('fastbpe'));
    expect(out?.spec.requirements.map((r) => r.name)).toEqual(['numpy']);
    expect(out?.left).toMatchObject({ name: 'fastBPE', wanted: 'any version', got: 'left out' });
    expect(out?.left.why).toMatch(
      /^setup\.py install_requires fastBPE; it does not build on this Python \(.*longintrepr\.h.*\), and the report's code does not import it$/,
    );
  });

  it('keeps failing for what the report, the script or repgen.yml asks for, for the project itself, and for other steps', () => {
    for (const source of ['script', 'report', 'config'] as const)
      expect(withoutUnbuildable(envSpec({ requirements: [req('fastbpe', source)] }), failure('fastbpe'))).toBeNull();
    const project = envSpec({
      requirements: [req('mylib', 'repo')],
      project: { root: '', importRoots: [''], mode: 'pth', distribution: 'mylib', extensions: [] },
    });
    expect(withoutUnbuildable(project, failure('mylib'))).toBeNull();
    expect(withoutUnbuildable(envSpec({ requirements: [req('fastbpe', 'repo')] }), failure('fastbpe', 'resolve'))).toBeNull();
    expect(withoutUnbuildable(envSpec({ requirements: [req('fastbpe', 'repo')] }), failure(null))).toBeNull();
  });
});
