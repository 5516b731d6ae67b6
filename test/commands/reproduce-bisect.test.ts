import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { runReproduceCommand } from '../../src/commands/reproduce.js';
import { UsageError } from '../../src/errors.js';
import { makeRegressionRepo } from '../helpers/git.js';
import { makeTempDir } from '../helpers/temp-dir.js';

// `repgen reproduce --repo … [--bisect GOOD]` end to end with no model: tier 0 reproduces the report's own
// code at the issue's ref, the confirmation re-runs it, then the bisection finds the merge that broke it.
const ISSUE = [
  '# toylib.value() returns 2',
  '',
  'Since the last commits `toylib.value()` returns 2. It worked in v1.0.',
  '',
  '```python',
  'import toylib',
  'v = toylib.value()',
  'assert v == 1, f"value is {v}, expected 1"',
  '```',
  '',
  '```',
  'Traceback (most recent call last):',
  '  File "repro.py", line 3, in <module>',
  'AssertionError: value is 2, expected 1',
  '```',
].join('\n');

let root: string;
let repo: string;
let shas: string[];

beforeAll(async () => {
  root = makeTempDir('repgen-reproduce-bisect-');
  await chmod(root, 0o755);
  ({ repo, shas } = await makeRegressionRepo(join(root, 'repo')));
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

describe('repgen reproduce with a bisection', () => {
  it('bisects from the version the report says worked, and evidence.json names the first bad commit and its PR', async () => {
    const t = io();
    const code = await runReproduceCommand(['--issue', 'issue.md', '--repo', repo, '--llm', 'none', '--out', 'out-auto'], t);
    const evidence = JSON.parse(await readFile(join(root, 'out-auto', 'evidence.json'), 'utf8'));
    expect(evidence.outcome.status).toBe('reproduced');
    expect(code).toBe(0);
    expect(evidence.outcome.bisect).toMatchObject({
      status: 'found',
      good: { ref: 'v1.0' },
      firstBad: { sha: shas[7], pr: 42, touchesImported: ['toylib/__init__.py'] },
      commitsInRange: 12,
    });
    expect(evidence.outcome.bisect.good.why).toContain('worked in v1.0');
    expect(t.err).toMatch(/bisecting: \d+ commits left/);
    const comment = await readFile(join(root, 'out-auto', 'comment.md'), 'utf8');
    expect(comment).toContain(shas[7]!.slice(0, 12));
    expect(comment).toContain('#42');
  }, 300_000);

  it('--no-bisect runs none; --bisect with a ref that does not exist is a usage error before any run', async () => {
    const t = io();
    await runReproduceCommand(['--issue', 'issue.md', '--repo', repo, '--llm', 'none', '--out', 'out-none', '--no-bisect'], t);
    const evidence = JSON.parse(await readFile(join(root, 'out-none', 'evidence.json'), 'utf8'));
    expect(evidence.outcome.status).toBe('reproduced');
    expect(evidence.outcome.bisect).toBeUndefined();
    await expect(
      runReproduceCommand(['--issue', 'issue.md', '--repo', repo, '--bisect', 'v9.9', '--out', 'o2'], io()),
    ).rejects.toBeInstanceOf(UsageError);
    await expect(runReproduceCommand(['--issue', 'issue.md', '--bisect', 'v1.0', '--out', 'o3'], io())).rejects.toThrow(
      /--bisect needs --repo/,
    );
  }, 300_000);
});
