import { describe, expect, it } from 'vitest';
import type { ReleaseInfo } from '../../../src/env/decide/era.js';
import { classifyProofFailure, type ProofVerdict } from '../../../src/env/prove/import-failure.js';
import { removedSinceEra } from '../../../src/env/prove/removed-since-era.js';

const rel = (version: string, uploaded: string): ReleaseInfo => ({ version, uploaded, wheels: [], yanked: false });
// huggingface-hub as PyPI dates it (a few releases): 0.26 removed `cached_download`.
const HUB = [
  rel('0.19.4', '2023-11-17T00:00:00Z'),
  rel('0.20.1', '2023-12-13T00:00:00Z'),
  rel('0.20.2', '2024-01-04T00:00:00Z'),
  rel('0.26.0', '2024-10-17T00:00:00Z'),
  rel('2.4.0', '2026-09-01T00:00:00Z'),
];

// What the proof of diffusers at its commit of 2024-01-02 read in an env with an unpinned hub.
const failure = {
  module: 'diffusers',
  error:
    "ImportError: cannot import name 'cached_download' from 'huggingface_hub' (/env/lib/python3.11/site-packages/huggingface_hub/__init__.py)",
  versions: { 'huggingface-hub': '2.4.0' },
};
const classified = classifyProofFailure(failure, { pins: { 'huggingface-hub': '2.4.0' }, projectPackages: ['diffusers'] });

describe('removedSinceEra', () => {
  it('reads a name missing from a release newer than the commit as removed, capped at the series of the commit', () => {
    expect(classified).toMatchObject({ kind: 'framework-too-old', package: 'huggingface-hub', constraint: '>2.4.0' });
    const v = removedSinceEra(classified, '2.4.0', HUB, '2024-01-02T11:16:21+05:30');
    expect(v).toMatchObject({ kind: 'api-removed', package: 'huggingface-hub', constraint: '<0.21' });
    expect(v.why).toContain('huggingface-hub 2.4.0 is of 2026-09-01, after the ref');
    expect(v.why).toContain('when 0.20.1 was the newest');
  });

  it('keeps "too old" for a release of the commit’s time or older (torch 1.13 has no torch.xpu; code of 2025)', () => {
    const torch: ProofVerdict = {
      kind: 'framework-too-old',
      package: 'torch',
      constraint: '>1.13.0',
      why: 'torch 1.13.0 has no torch.xpu',
    };
    const dates = [rel('1.13.0', '2022-10-28T00:00:00Z'), rel('2.6.0', '2025-01-29T00:00:00Z')];
    expect(removedSinceEra(torch, '1.13.0a0+gitunknown', dates, '2025-02-12T20:33:56+00:00')).toBe(torch);
    // The env's release is the newest of the era itself: nothing newer removed anything.
    expect(removedSinceEra(classified, '0.20.1', HUB, '2024-01-02T00:00:00Z')).toBe(classified);
  });

  it('leaves the verdict alone without the dates it needs, or for another kind of failure', () => {
    expect(removedSinceEra(classified, '2.4.0', null, '2024-01-02T00:00:00Z')).toBe(classified);
    expect(removedSinceEra(classified, null, HUB, '2024-01-02T00:00:00Z')).toBe(classified);
    expect(removedSinceEra(classified, '9.9.9', HUB, '2024-01-02T00:00:00Z')).toBe(classified);
    expect(removedSinceEra(classified, '2.4.0', HUB, 'not a date')).toBe(classified);
    // Nothing was released before the commit: no series to go back to.
    expect(removedSinceEra(classified, '2.4.0', HUB, '2020-01-01T00:00:00Z')).toBe(classified);
    const missing: ProofVerdict = { kind: 'missing-module', package: 'absl-py', constraint: '', why: 'x imports absl' };
    expect(removedSinceEra(missing, '2.4.0', HUB, '2024-01-02T00:00:00Z')).toBe(missing);
  });
});
