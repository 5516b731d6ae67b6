import { describe, expect, it } from 'vitest';
import {
  blobSha,
  candidateTrailer,
  notMadeByApp,
  trailerOf,
  treeChanges,
  type ListedCommit,
} from '../../../src/github/publish/candidate-trailer.js';

/** The candidate commit's check, pure parts: the trailer is a function of what the commit changes; who made it. */

const e = (sha: string, mode = '100644') => ({ mode, type: 'blob', sha });

describe('candidateTrailer and treeChanges', () => {
  it('names the changed paths and blobs, in any order; a removed path or a new mode is a change too', () => {
    const before = new Map([
      ['a.py', e('1'.repeat(40))],
      ['b.py', e('2'.repeat(40))],
      ['gone.py', e('3'.repeat(40))],
    ]);
    const after = new Map([
      ['a.py', e('1'.repeat(40))],
      ['b.py', e('4'.repeat(40))],
      ['new.py', e('5'.repeat(40), '100755')],
    ]);
    const changes = treeChanges(before, after);
    expect(changes).toEqual([
      { path: 'b.py', sha: '4'.repeat(40) },
      { path: 'gone.py', sha: null },
      { path: 'new.py', sha: '5'.repeat(40) },
    ]);
    expect(candidateTrailer([...changes].reverse())).toBe(candidateTrailer(changes));
    expect(candidateTrailer(changes)).toMatch(/^RepGen-Candidate: [0-9a-f]{16}$/);
    expect(candidateTrailer(changes.slice(1))).not.toBe(candidateTrailer(changes));
    expect(treeChanges(before, new Map([...before, ['a.py', e('1'.repeat(40), '100755')]]))).toEqual([
      { path: 'a.py', sha: '1'.repeat(40) },
    ]);
  });

  it("hostile: a path's characters cannot shift into its sha (the parts are separated)", () => {
    expect(candidateTrailer([{ path: 'a', sha: 'b' }])).not.toBe(candidateTrailer([{ path: 'ab', sha: '' }]));
    expect(candidateTrailer([{ path: 'x', sha: null }])).not.toBe(candidateTrailer([]));
  });

  it("git's blob id; the trailer line read from a message", () => {
    expect(blobSha('hello\n')).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
    expect(trailerOf('s\n\nbody\n\nRepGen-Candidate: 0123456789abcdef')).toBe('RepGen-Candidate: 0123456789abcdef');
    expect(trailerOf('RepGen-Candidate: 0123456789ABCDEF')).toBeNull();
    expect(trailerOf('RepGen-Candidate: 0123456789abcdef0')).toBeNull();
  });
});

describe('notMadeByApp', () => {
  const made = (author: string | null, committer: string | null, verified: boolean | undefined): ListedCommit => ({
    sha: 'c'.repeat(40),
    author: author ? { login: author, type: author.endsWith('[bot]') ? 'Bot' : 'User' } : null,
    committer: committer ? { login: committer, type: 'User' } : null,
    commit: { message: 'm', tree: { sha: 't' }, ...(verified === undefined ? {} : { verification: { verified } }) },
  });
  it("the App's bot account as author, itself or GitHub as committer, and a verified signature", () => {
    expect(notMadeByApp(made('repgen[bot]', 'repgen[bot]', true), undefined)).toBeNull();
    expect(notMadeByApp(made('repgen[bot]', 'web-flow', true), 'repgen[bot]')).toBeNull();
  });

  it('hostile: a person, another App when the login is known, another committer, no or a failed signature', () => {
    expect(notMadeByApp(made('mallory', 'mallory', true), undefined)).toMatch(/author is @mallory/);
    // The limit without the login: any App's bot account passes this part (its trailer must still match its content).
    expect(notMadeByApp(made('other[bot]', 'other[bot]', true), undefined)).toBeNull();
    expect(notMadeByApp(made(null, null, true), undefined)).toMatch(/author is no GitHub account/);
    expect(notMadeByApp(made('other[bot]', 'other[bot]', true), 'repgen[bot]')).toMatch(/not @repgen\[bot\]/);
    expect(notMadeByApp(made('repgen[bot]', 'mallory', true), 'repgen[bot]')).toMatch(/committer is @mallory/);
    expect(notMadeByApp(made('repgen[bot]', 'repgen[bot]', false), undefined)).toMatch(/not verified its signature/);
    expect(notMadeByApp(made('repgen[bot]', 'repgen[bot]', undefined), undefined)).toMatch(/not verified its signature/);
  });
});
