// A fail-to-pass bench case end to end, on a tiny real repository: the reproduction runs with the project at
// buggy_commit as its workspace, the fix check re-runs it at fix_commit, and repro.py is run by hand at both.
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { runBenchCommand } from '../../src/commands/bench.js';
import { git } from '../helpers/git.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let root: string;
let buggy: string;
let fixed: string;

beforeAll(async () => {
  root = makeTempDir('repgen-bench-f2p-');
  // The checkouts under it are mounted for the sandbox's unprivileged uid: it must be able to reach them.
  await chmod(root, 0o755);
  const repo = join(root, 'mirrors', 'acme+toylib', 'repo');
  await mkdir(join(repo, 'toylib'), { recursive: true });
  git(repo, 'init', '-q');
  await writeFile(join(repo, 'toylib', '__init__.py'), 'def double(x):\n    raise ValueError("double() lost its factor")\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'buggy');
  buggy = git(repo, 'rev-parse', 'HEAD');
  await writeFile(join(repo, 'toylib', '__init__.py'), 'def double(x):\n    return 2 * x\n');
  git(repo, 'commit', '-qam', 'fix');
  fixed = git(repo, 'rev-parse', 'HEAD');
  const caseDir = join(root, 'cases', 'toy-1');
  await mkdir(caseDir, { recursive: true });
  await writeFile(join(caseDir, 'case.json'), JSON.stringify({ repo: 'acme/toylib', buggy_commit: buggy, fix_commit: fixed }));
  await writeFile(
    join(caseDir, 'issue.md'),
    [
      '# toylib.double raises ValueError',
      '',
      '```python',
      'import toylib',
      'print(toylib.double(2))',
      '```',
      '',
      '```',
      'Traceback (most recent call last):',
      '  File "repro.py", line 2, in <module>',
      '    print(toylib.double(2))',
      '  File "toylib/__init__.py", line 2, in double',
      '    raise ValueError("double() lost its factor")',
      'ValueError: double() lost its factor',
      '```',
      '',
      'I expected it to print 4.',
      '',
    ].join('\n'),
  );
});
afterAll(async () => rm(root, { recursive: true, force: true }));

function io(cwd: string): CliIo & { err: string } {
  const o: CliIo & { err: string } = {
    err: '',
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      REPGEN_PYLINT: '0',
      REPGEN_CONFIRM_RUNS: '2',
      REPGEN_PROBE_CACHE_DIR: 'off',
      REPGEN_CHECKOUT_CACHE_DIR: join(cwd, 'checkouts'),
    },
    stdout: () => undefined,
    stderr: (t) => void (o.err += t),
  };
  return o;
}

describe('repgen bench, a fail-to-pass case', () => {
  it('reproduces at buggy_commit, finds it fixed at fix_commit, and the by-hand runs agree', { timeout: 180_000 }, async () => {
    const t = io(root);
    const code = await runBenchCommand(['cases', '--llm', 'none', '--mirrors', 'mirrors', '--out', 'out/bench.md'], t);
    const results = JSON.parse(await readFile(join(root, 'out', 'bench.json'), 'utf8')) as {
      cases: { id: string; status: string; f2p: Record<string, unknown> | null }[];
    };
    const [row] = results.cases;
    expect(row?.status, t.err).toBe('reproduced');
    expect(row?.f2p).toMatchObject({ fixCheck: 'fixed', buggyExit: 1, fixedExit: 0, byHand: true, falseClaim: false });
    expect(code).toBe(0);
    const evidence = JSON.parse(await readFile(join(root, 'out', 'bench-cases', 'toy-1', 'evidence.json'), 'utf8'));
    expect(evidence.ref).toMatchObject({ sha: buggy, source: 'explicit' });
    expect(evidence.fixCheck).toMatchObject({ verdict: 'fixed', sha: fixed });
    expect(evidence.spec.caps.attempts.from).toBe('operator');
  });
});
