import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileIssueSource } from '../../src/intake/file-issue-source.js';
import { WorkspaceError } from '../../src/workspace/errors.js';
import { dropBlobs, git, makeToyRepo } from '../helpers/git.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let root: string;
let repo: string;
let first: string;
let second: string;

beforeAll(async () => {
  root = makeTempDir('repgen-file-source-');
  repo = join(root, 'repo');
  ({ first, second } = await makeToyRepo(repo));
});
afterAll(async () => rm(root, { recursive: true, force: true }));

const signal = new AbortController().signal;

describe('fileIssueSource', () => {
  it('gives the file as the body and no checkout without a project', async () => {
    const source = fileIssueSource({ label: 'issue.md', text: '# Title\n\nbody' });
    expect(source.label).toBe('issue.md');
    const issue = await source.readIssue(signal);
    expect(issue).toEqual({ title: '', body: '# Title\n\nbody' });
    expect(await source.checkout(issue, signal)).toBeNull();
  });

  it('checks a local repository out at the asked ref, with the fixing ref beside it', async () => {
    const cacheDir = join(root, 'cache-1');
    const source = fileIssueSource({
      label: 'issue.md',
      text: 'toylib breaks',
      project: { repoDir: repo, ref: 'v0.1.0', verifyFix: second.slice(0, 10), cacheDir, python: '/usr/bin/python3' },
    });
    const co = await source.checkout(await source.readIssue(signal), signal);
    expect(co?.sha).toBe(first);
    expect(co?.ref).toMatchObject({ ref: 'v0.1.0', sha: first, source: 'explicit' });
    expect(co?.workspace?.packages).toEqual(['toylib']);
    expect(await readFile(join(co?.repoDir ?? '', 'toylib', '__init__.py'), 'utf8')).toBe('VALUE = 1\n');
    expect(co?.fix?.sha).toBe(second);
    expect(await readFile(join(co?.fix?.workspace.hostPath ?? '', 'toylib', '__init__.py'), 'utf8')).toBe('VALUE = 2\n');
  });

  it('a fixing checkout that lacks a file the mirror never got says so in the notes', async () => {
    const lacking = join(root, 'lacking');
    await makeToyRepo(lacking);
    await mkdir(join(lacking, 'docs'));
    await writeFile(join(lacking, 'docs', 'guide.md'), '# Guide\n');
    git(lacking, 'add', '-A');
    git(lacking, 'commit', '-qm', 'docs');
    await dropBlobs(lacking, 'HEAD', ['docs/guide.md']);
    const source = fileIssueSource({
      label: 'issue.md',
      text: 'toylib breaks',
      project: {
        repoDir: lacking,
        ref: 'v0.1.0',
        verifyFix: 'main',
        cacheDir: join(root, 'cache-lacking'),
        python: '/usr/bin/python3',
        bisect: false,
      },
    });
    const co = await source.checkout(await source.readIssue(signal), signal);
    expect(co?.ref?.missing).toBeUndefined();
    expect(co?.ref?.notes).toContain(
      'The checkout lacks 1 file the repository has at the fixing ref main (missing from the mirror, so not checked out): docs/guide.md.',
    );
  });

  it('a ref that does not exist, or one that reads as an option, fails before any run (WorkspaceError)', async () => {
    for (const ref of ['v9.9.9', '--output=/tmp/pwned-by-ref']) {
      const source = fileIssueSource({
        label: 'issue.md',
        text: 'x',
        project: { repoDir: repo, ref, cacheDir: join(root, 'cache-2'), python: '/usr/bin/python3' },
      });
      await expect(source.checkout({ title: '', body: 'x' }, signal)).rejects.toBeInstanceOf(WorkspaceError);
    }
    await expect(readFile('/tmp/pwned-by-ref')).rejects.toThrow();
  });

  it('hands over a checkout made beforehand unchanged (a bench case, the CLI after checking its flags)', async () => {
    const made = { repoDir: '/somewhere', sha: 'a'.repeat(40) };
    const source = fileIssueSource({ label: 'so-1', text: 'x', project: made });
    expect(await source.checkout({ title: '', body: 'x' }, signal)).toBe(made);
  });
});
