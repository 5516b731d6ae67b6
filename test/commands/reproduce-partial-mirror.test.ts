import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { runReproduceCommand } from '../../src/commands/reproduce.js';
import { dropBlobs, git, makeToyRepo } from '../helpers/git.js';
import { makeTempDir } from '../helpers/temp-dir.js';

// `repgen reproduce --repo <mirror>` where the mirror lacks a docs page's content (issue 39 item 9: the Lightning
// mirror lacked one docs blob): the run imports and reads the project's other files, and says what was left out.
const ISSUE = [
  '# toylib.util.DOUBLE is wrong',
  '',
  '```python',
  'import pathlib',
  'import toylib.util',
  'data = (pathlib.Path(toylib.util.__file__).parent / "data.txt").read_text()',
  'assert data == "payload\\n", data',
  'assert toylib.util.DOUBLE == 2, f"DOUBLE is {toylib.util.DOUBLE}, expected 2"',
  '```',
  '',
  '```',
  'Traceback (most recent call last):',
  '  File "repro.py", line 5, in <module>',
  'AssertionError: DOUBLE is 4, expected 2',
  '```',
].join('\n');

let root: string;
let mirror: string;

beforeAll(async () => {
  root = makeTempDir('repgen-partial-mirror-');
  await chmod(root, 0o755);
  const work = join(root, 'work-tree');
  await makeToyRepo(work);
  await mkdir(join(work, 'docs'));
  await writeFile(join(work, 'docs', 'guide.md'), '# Guide\n');
  await writeFile(join(work, 'toylib', 'util.py'), 'from toylib import VALUE\nDOUBLE = VALUE * 2\n');
  await writeFile(join(work, 'toylib', 'data.txt'), 'payload\n');
  git(work, 'add', '-A');
  git(work, 'commit', '-qm', 'util and docs');
  git(work, 'tag', 'v0.2.0');
  mirror = join(root, 'mirrors', 'acme+toylib', 'repo');
  await mkdir(join(root, 'mirrors'));
  git(root, 'clone', '-q', '--bare', work, mirror);
  await dropBlobs(mirror, 'v0.2.0', ['docs/guide.md']);
  await writeFile(join(root, 'issue.md'), ISSUE);
});
afterAll(async () => rm(root, { recursive: true, force: true }));

function io(): CliIo & { out: string; err: string } {
  const o: CliIo & { out: string; err: string } = {
    out: '',
    err: '',
    cwd: root,
    env: {
      REPGEN_PYLINT: '0',
      REPGEN_CHECKOUT_CACHE_DIR: join(root, 'checkouts'),
      REPGEN_WORK_ROOT: join(root, 'work'),
      REPGEN_PROBE_CACHE_DIR: 'off',
      PATH: process.env.PATH,
    },
    stdout: (t) => void (o.out += t),
    stderr: (t) => void (o.err += t),
  };
  return o;
}

describe('repgen reproduce --repo with a mirror that lacks a file', () => {
  it('runs the project from what the mirror has, and evidence.json says what it lacked', async () => {
    const args = ['--issue', 'issue.md', '--repo', mirror, '--ref', 'v0.2.0', '--no-bisect', '--llm', 'none', '--out', 'out'];
    const code = await runReproduceCommand(args, io());
    const evidence = JSON.parse(await readFile(join(root, 'out', 'evidence.json'), 'utf8'));
    expect(evidence.outcome.status).toBe('reproduced');
    expect(code).toBe(0);
    expect(evidence.ref.missing).toEqual({ count: 1, paths: ['docs/guide.md'] });
    const note = 'The checkout lacks 1 file the repository has at v0.2.0 (missing from the mirror, so not checked out): docs/guide.md.';
    expect(evidence.outcome.notes).toContain(note);
  }, 300_000);
});
