import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { githubIssueSource } from '../../src/github/github-issue-source.js';
import type { Octokit } from '../../src/github/octokit.js';
import { makeRegressionRepo } from '../helpers/git.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let root: string;
let repo: string;
let shas: string[];

beforeAll(async () => {
  root = makeTempDir('repgen-gh-source-');
  await chmod(root, 0o755);
  ({ repo, shas } = await makeRegressionRepo(join(root, 'upstream')));
});
afterAll(async () => rm(root, { recursive: true, force: true }));

const signal = new AbortController().signal;
const data = { owner: 'acme', repo: 'toylib', issueNumber: 7, ref: 'main' };

async function checkout(job: string, bisect: { good: string | null } | null, body: string) {
  const dir = join(await mkdtemp(join(root, `${job}-`)), 'repo');
  const source = githubIssueSource({ octokit: {} as Octokit, data: { ...data, cloneUrl: repo, bisect }, token: '', dir });
  return source.checkout({ title: 'value() is 2', body }, signal);
}

describe('githubIssueSource with `/repgen bisect`', () => {
  it('fetches the history with the ref and bisects from the version the report says worked', async () => {
    const co = await checkout('auto', { good: null }, 'toylib.value() returns 2; it worked in v1.0.');
    expect(co?.bisect?.good).toMatchObject({ ref: 'v1.0' });
    expect(co?.bisect?.bad.sha).toBe(co?.sha);
    const commits = await co!.bisect!.commits(signal);
    expect(commits.map((c) => c.sha)).toEqual(shas);
  });

  it('a GOOD that does not exist, or a report that names none, leaves a note and no bisection (the reproduction still runs)', async () => {
    const missing = await checkout('missing', { good: 'v9.9' }, 'x');
    expect(missing?.bisect).toBeUndefined();
    expect(missing?.ref?.notes.join(' ')).toContain("'v9.9' does not exist");
    const silent = await checkout('silent', { good: null }, 'it is broken');
    expect(silent?.bisect).toBeUndefined();
    expect(silent?.ref?.notes.join(' ')).toContain('names no version or commit where it worked');
  });

  it('without `/repgen bisect`, a shallow clone of one commit and no bisection', async () => {
    const co = await checkout('plain', null, 'it worked in v1.0');
    expect(co?.bisect).toBeUndefined();
  });
});
