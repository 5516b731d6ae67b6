import { describe, expect, it } from 'vitest';
import { decisionNotes, decisionRecord, envNotes } from '../../../../src/pipeline/stages/env/index.js';
import { BuiltEnv, type VersionDecision } from '../../../../src/env/types.js';
import { envSpec } from '../../../fakes/env-spec.js';

const base = (name: string, version: string): VersionDecision => ({
  name,
  version,
  specifier: '',
  source: 'base',
  why: `the base's ${version}`,
});

describe('the version decision as the env was built (keras-20429: the lock took nothing from the base)', () => {
  const spec = { decisions: [base('torch', '1.13.0'), base('numpy', '1.24.2')] };

  it("says the env's own version where the lock did not keep the base's, and the base's where it did", () => {
    const env = { pins: { torch: '2.13.0+cpu', numpy: '2.4.6', keras: '3.6.0' }, fromBase: [] };
    expect(decisionNotes(spec, env)[0]).toBe(
      "Environment: versions decided: torch 2.13.0+cpu (the env's own: the base interpreter's 1.13.0 was decided, but the lock needs its own), " +
        "numpy 2.4.6 (the env's own: the base interpreter's 1.24.2 was decided, but the lock needs its own).",
    );
    const overlay = { pins: { numpy: '1.26.4', keras: '3.6.0' }, fromBase: ['torch'] };
    expect(decisionRecord(spec, overlay)).toEqual({
      'torch (decided)': '1.13.0 (the base interpreter)',
      'numpy (decided)': "1.26.4 (the env's own: the base interpreter's 1.24.2 was decided, but the lock needs its own)",
    });
  });

  it('keeps the decision as decided when no env is known, or the env does not say what it took from the base', () => {
    expect(decisionRecord(spec)).toEqual({
      'torch (decided)': '1.13.0 (the base interpreter)',
      'numpy (decided)': '1.24.2 (the base interpreter)',
    });
    expect(decisionRecord(spec, { pins: { torch: '2.13.0+cpu' } })['torch (decided)']).toBe('1.13.0 (the base interpreter)');
  });
});

describe("the base interpreter's packages the env took, as built (cv2-nan: opencv 5 needs NumPy 2, the lock took nothing)", () => {
  const built = (fromBase?: string[]) =>
    BuiltEnv.parse({
      readOnlyPaths: [],
      pins: { numpy: '2.4.6', torch: '2.13.0+cpu' },
      substitutions: [],
      cached: false,
      buildMs: 1,
      python: '/envs/x/bin/python',
      pythonVersion: '3.11.2',
      lockHash: 'a'.repeat(64),
      lock: '',
      ...(fromBase ? { fromBase } : {}),
    });
  const spec = envSpec({ notes: ['taken from the base interpreter: numpy 1.24.2, pandas 1.5.3, torch 1.13.0a0', 'other'] });

  it('drops the note when the env took nothing from the base, keeps only what it took otherwise, and any other note', () => {
    const notes = (fromBase?: string[]) => envNotes(built(fromBase), spec);
    expect(notes([])).toEqual(['Environment: other']);
    expect(notes(['pandas', 'pillow'])).toEqual(['Environment: taken from the base interpreter: pandas 1.5.3', 'Environment: other']);
    // An env that does not say what it took: as the spec says.
    expect(notes()).toEqual([
      'Environment: taken from the base interpreter: numpy 1.24.2, pandas 1.5.3, torch 1.13.0a0',
      'Environment: other',
    ]);
  });
});
