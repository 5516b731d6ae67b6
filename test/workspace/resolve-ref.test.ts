import { describe, expect, it } from 'vitest';
import { RefNotFoundError } from '../../src/workspace/errors.js';
import {
  linkedCommits,
  namedVersions,
  refCandidates,
  resolveRef,
  workedVersions,
  type RefLookup,
} from '../../src/workspace/resolve-ref.js';

const repo = { owner: 'acme', name: 'vision-models' };
const SHA_A = 'a'.repeat(40);
const SHA_B = 'b'.repeat(40);
const HEAD = 'c'.repeat(40);

/** A repository with the given refs; records every lookup. */
function lookup(refs: Record<string, string>): RefLookup & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    commit: async (ref) => {
      asked.push(ref);
      return refs[ref] ?? Object.values(refs).find((sha) => ref.length >= 7 && sha.startsWith(ref)) ?? null;
    },
    defaultHead: async () => ({ name: 'main', sha: HEAD }),
  };
}

describe('namedVersions', () => {
  it.each([
    ['pip install visionlib==0.9.2', '0.9.2'],
    ['visionlib 0.6.12 on Ubuntu', '0.6.12'],
    ['- visionlib version: 1.0.3', '1.0.3'],
    ['visionlib: 0.4.5', '0.4.5'],
    ['visionlib.__version__ == 0.5.4', '0.5.4'],
    ['VisionLib v0.9.7', '0.9.7'],
    ['visionlib==0.9.2+cu118', '0.9.2'],
    ['visionlib==1.0.0rc1', '1.0.0rc1'],
    ['visionlib==0.9.2.dev0', '0.9.2'],
  ])('%s → %s', (text, version) => {
    expect(namedVersions(text, ['visionlib']).map((c) => c.ref)).toEqual([`v${version}`]);
  });

  it.each([
    ['torch==1.13.1 and visionlib from source', []],
    ['visionlib/models/convnext.py line 189', []],
    ['myvisionlib==0.9.2', []],
    ['visionlib-extras==0.9.2', []],
    ['visionlib 3 models', []],
  ])('does not read a version from %s', (text, want) => {
    expect(namedVersions(text, ['visionlib']).map((c) => c.ref)).toEqual(want);
  });

  it('tries the usual tag spellings', () => {
    expect(namedVersions('visionlib==0.9.2', ['visionlib'])[0]?.alternatives).toEqual(['0.9.2', 'visionlib-v0.9.2', 'visionlib-0.9.2']);
  });

  it('ignores package names that are not names (hostile input)', () => {
    expect(namedVersions('a.*==1.0', ['.*', '(x|y)'])).toEqual([]);
  });
});

describe('linkedCommits', () => {
  it('finds blob, tree, commit and blame links into this repository only', () => {
    const text = [
      `https://github.com/acme/vision-models/blob/${SHA_A}/lib/convnext.py#L119`,
      `https://github.com/someone/vision-models/blob/${SHA_B}/lib/x.py`,
      'https://github.com/acme/vision-models/blob/main/lib/x.py',
      'https://github.com/acme/vision-models/commit/1234abc',
      `https://github.com/acme/vision-models/tree/${SHA_A}`,
    ].join('\n');
    expect(linkedCommits(text, repo).map((c) => c.ref)).toEqual([SHA_A, '1234abc']);
  });

  it('matches the repository name literally, not as a pattern', () => {
    expect(linkedCommits(`https://github.com/acme/visionXmodels/blob/${SHA_A}/a.py`, { owner: 'acme', name: 'vision.models' })).toEqual([]);
  });
});

describe('resolveRef', () => {
  it('an explicit ref wins over everything the report names', async () => {
    const c = refCandidates({
      explicit: 'fix-branch',
      text: `visionlib==0.9.2 https://github.com/acme/vision-models/blob/${SHA_A}/a.py`,
      repo,
      packages: ['visionlib'],
    });
    const r = await resolveRef(c, lookup({ 'fix-branch': SHA_B, v0_9_2: SHA_A }));
    expect(r).toMatchObject({ sha: SHA_B, source: 'explicit', ref: 'fix-branch' });
  });

  it('an explicit ref that does not exist is an error, not a silent fallback', async () => {
    await expect(resolveRef(refCandidates({ explicit: 'nope', text: '' }), lookup({}))).rejects.toBeInstanceOf(RefNotFoundError);
  });

  it('refuses an explicit ref that could be read as an option without asking git', async () => {
    const l = lookup({});
    await expect(resolveRef(refCandidates({ explicit: '--upload-pack=touch /tmp/x', text: '' }), l)).rejects.toThrow(
      /not a commit SHA, tag or branch/,
    );
    expect(l.asked).toEqual([]);
  });

  it('a linked commit comes before a named version', async () => {
    const c = refCandidates({
      text: `visionlib==0.9.2, code at https://github.com/acme/vision-models/blob/${SHA_A.slice(0, 12)}/a.py`,
      repo,
      packages: ['visionlib'],
    });
    const r = await resolveRef(c, lookup({ x: SHA_A, 'v0.9.2': SHA_B }));
    expect(r).toMatchObject({ sha: SHA_A, source: 'link' });
  });

  it('a version maps to its tag, trying the other spellings', async () => {
    const r = await resolveRef(refCandidates({ text: 'visionlib==0.9.2', repo, packages: ['visionlib'] }), lookup({ '0.9.2': SHA_B }));
    expect(r).toMatchObject({ sha: SHA_B, source: 'version', ref: '0.9.2' });
    expect(r.why).toContain('visionlib 0.9.2');
  });

  it('a released version without a tag falls back to the default branch and says so', async () => {
    const r = await resolveRef(refCandidates({ text: 'visionlib==0.9.2', repo, packages: ['visionlib'] }), lookup({}));
    expect(r).toMatchObject({ sha: HEAD, source: 'default', ref: 'main' });
    expect(r.notes.join(' ')).toMatch(/visionlib 0.9.2.*no tag for it/);
  });

  it('a linked commit of a fork is a note, then the default branch', async () => {
    const r = await resolveRef(refCandidates({ text: `https://github.com/acme/vision-models/commit/${SHA_A}`, repo }), lookup({}));
    expect(r.source).toBe('default');
    expect(r.notes[0]).toMatch(/not in the repository/);
  });
});

describe('workedVersions', () => {
  it.each([
    ['It worked in 0.9.2 but fails now', 'v0.9.2'],
    ['works fine with timm 0.6.12.', 'v0.6.12'],
    ['After upgrading from 0.6.12 to 0.9.2 the model breaks', 'v0.6.12'],
    ['downgrading timm to 0.6.12 fixes it', 'v0.6.12'],
    ['last working version: 1.0.6', 'v1.0.6'],
    ['This was working on timm==0.5.4', 'v0.5.4'],
    ['worked at commit 1a2b3c4d', '1a2b3c4d'],
  ])('%s → %s', (text, ref) => {
    expect(workedVersions(text, ['timm']).map((c) => c.ref)).toEqual([ref]);
  });

  it('reads no version of another package, and nothing from "since" or a bare version', () => {
    for (const text of [
      'upgrading torch from 1.13 to 2.0 broke it',
      'works with torch 2.1',
      'since version 1.0.7 it breaks',
      'I am using 0.9.2',
    ])
      expect(workedVersions(text, ['timm'])).toEqual([]);
  });

  it('gives the tag spellings a named version is tried under', () => {
    expect(workedVersions('worked in 0.9.2', ['timm'])[0]?.alternatives).toEqual(['0.9.2', 'timm-v0.9.2', 'timm-0.9.2']);
  });
});

describe('refCandidates and a version that worked', () => {
  it('never reproduces at the version the report says worked', () => {
    const text = 'timm 0.9.2 fails with this error; it worked in timm 0.6.12';
    expect(refCandidates({ text, packages: ['timm'] }).map((c) => c.ref)).toEqual(['v0.9.2']);
  });
});
