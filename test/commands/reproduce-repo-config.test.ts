import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { cliRunSpec, runReproduceCommand } from '../../src/commands/reproduce.js';
import { readOperatorEnv } from '../../src/config/operator-env.js';
import { readCheckoutRepoConfig } from '../../src/config/read-checkout-repo-config.js';
import { parseRepoConfig, type RepoConfig } from '../../src/config/repo-config.js';
import { UsageError } from '../../src/errors.js';
import type { ReproInput, RunStages } from '../../src/pipeline/ports.js';
import { envFailureSummary } from '../../src/pipeline/stages/env/index.js';
import { fixAdvice } from '../../src/pipeline/stages/env/fix-advice.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import { CRASH_ISSUE, simulate } from '../fakes/repro-fixtures.js';
import { git } from '../helpers/git.js';
import { makeTempDir } from '../helpers/temp-dir.js';

// `repgen reproduce --repo` reads the checkout's .github/repgen.yml at the ref, as the App and the Action read the
// repository's (issue 39, item 5), and takes the env's settings as flags.

class Recorded extends Error {}

/** Stages that record what reached them and stop the run there. */
function recording(into: ReproInput[]): RunStages {
  return async (input) => {
    into.push(input);
    throw new Recorded('recorded');
  };
}

function io(cwd: string): CliIo & { err: string } {
  const o: CliIo & { err: string } = {
    err: '',
    cwd,
    env: { REPGEN_PYLINT: '0', REPGEN_ENV: 'off', REPGEN_CHECKOUT_CACHE_DIR: join(cwd, 'checkouts') },
    stdout: () => undefined,
    stderr: (t) => void (o.err += t),
  };
  return o;
}

let root: string;
let repo: string;
beforeAll(async () => {
  root = makeTempDir('repgen-repo-config-');
  repo = join(root, 'repo');
  await mkdir(join(repo, '.github'), { recursive: true });
  await mkdir(join(repo, 'toylib'));
  git(repo, 'init', '-q');
  await writeFile(join(repo, 'toylib', '__init__.py'), 'VALUE = 1\n');
  await writeFile(join(repo, '.github', 'repgen.yml'), 'caps:\n  attempts: 2\nenvironment:\n  packages: ["torch==2.13.0"]\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'one');
  git(repo, 'tag', 'v0.1.0');
  // The head's file says otherwise: the run at v0.1.0 must read v0.1.0's.
  await writeFile(join(repo, '.github', 'repgen.yml'), 'caps:\n  attempts: 3\n');
  git(repo, 'commit', '-qam', 'two');
  await writeFile(join(root, 'issue.md'), CRASH_ISSUE);
});

describe('repgen reproduce --repo reads the checkout’s .github/repgen.yml', () => {
  it('at the ref: its caps hold, and an env failure’s advice names what the terminal can change', async () => {
    const seen: ReproInput[] = [];
    const t = io(root);
    await expect(
      runReproduceCommand(['--issue', 'issue.md', '--repo', repo, '--ref', 'v0.1.0', '--llm', 'none', '--out', 'o1'], t, {
        executor: new FakeExecutor(simulate),
        llm: null,
        stages: recording(seen),
      }),
    ).rejects.toThrow(Recorded);
    expect(seen[0]?.settings.maxAttempts).toBe(2);
    expect(seen[0]?.envAdvice).toBe('cli');
    expect(t.err).toContain("settings from the checkout's .github/repgen.yml");
  });

  it('--no-suggest-fix turns the candidate fix off; without it the run has it on (issue 41)', async () => {
    const seen: ReproInput[] = [];
    for (const extra of [['--no-suggest-fix'], []]) {
      await expect(
        runReproduceCommand(
          ['--issue', 'issue.md', '--repo', repo, '--ref', 'v0.1.0', '--llm', 'none', '--out', 'o4', ...extra],
          io(root),
          {
            executor: new FakeExecutor(simulate),
            llm: null,
            stages: recording(seen),
          },
        ),
      ).rejects.toThrow(Recorded);
    }
    expect(seen.map((i) => i.settings.suggestFix)).toEqual([false, true]);
  });

  it('an invalid file is a one-line usage error that names the key', async () => {
    const bad = join(root, 'bad');
    await mkdir(join(bad, '.github'), { recursive: true });
    git(bad, 'init', '-q');
    await writeFile(join(bad, '.github', 'repgen.yml'), 'environment:\n  pakages: ["x"]\n');
    git(bad, 'add', '-A');
    git(bad, 'commit', '-qm', 'one');
    await expect(
      runReproduceCommand(['--issue', 'issue.md', '--repo', bad, '--llm', 'none', '--out', 'o2'], io(root), {
        executor: new FakeExecutor(simulate),
        llm: null,
        stages: recording([]),
      }),
    ).rejects.toThrow(/repgen\.yml of the checkout is invalid: environment\.pakages is not a known setting/);
  });

  it('a file that links out of the checkout is refused, never read', async () => {
    const dir = join(root, 'linked');
    await mkdir(join(dir, '.github'), { recursive: true });
    await writeFile(join(root, 'outside.yml'), 'caps:\n  attempts: 1\n');
    await symlink(join(root, 'outside.yml'), join(dir, '.github', 'repgen.yml'));
    expect(readCheckoutRepoConfig(dir)).toEqual({
      ok: false,
      problems: [{ key: '(file)', message: '.github/repgen.yml is not a regular file' }],
    });
    await mkdir(join(root, 'elsewhere'), { recursive: true });
    await writeFile(join(root, 'elsewhere', 'repgen.yml'), 'caps:\n  attempts: 1\n');
    const dir2 = join(root, 'linked-dir');
    await mkdir(dir2);
    await symlink(join(root, 'elsewhere'), join(dir2, '.github'));
    expect(readCheckoutRepoConfig(dir2)).toMatchObject({
      ok: false,
      problems: [{ message: '.github/repgen.yml lies outside the checkout' }],
    });
    expect(readCheckoutRepoConfig(join(root, 'nothing-here'))).toMatchObject({ ok: true, source: 'defaults' });
  });
});

describe('--with and --python', () => {
  it('reach the env settings as the user’s pins, beside the checkout’s environment', () => {
    const spec = cliRunSpec(
      readOperatorEnv({}),
      { with: ['torch==2.7.*', 'numpy<2'], python: '3.11' },
      parse('environment:\n  packages: ["torch==2.13.0"]\n'),
    );
    expect(spec.env.userPins).toEqual({ packages: ['torch==2.7.*', 'numpy<2'], python: '3.11', label: '--with' });
    expect(spec.env.repoEnvironment?.packages).toEqual(['torch==2.13.0']);
    expect(spec.env.advice).toBe('cli');
    expect(cliRunSpec(readOperatorEnv({}), {}).env.userPins).toBeNull();
  });

  it('are checked before any work: a --with that is no requirement, a --python that is no version', async () => {
    for (const [args, re] of [
      [['--with', 'torch=>2'], /--with must be a requirement/],
      [['--python', 'python3'], /--python must be a Python version such as 3.11/],
    ] as const) {
      await expect(
        runReproduceCommand(['--issue', 'issue.md', '--llm', 'none', '--out', 'o3', ...args], io(root), { stages: recording([]) }),
      ).rejects.toThrow(re);
      await expect(
        runReproduceCommand(['--issue', 'issue.md', '--llm', 'none', '--out', 'o3', ...args], io(root), { stages: recording([]) }),
      ).rejects.toBeInstanceOf(UsageError);
    }
  });
});

describe('the advice of an env failure', () => {
  const failure = { step: 'resolve' as const, package: 'torch', message: 'no torch==9', logTail: '', configKey: 'environment.packages' };
  it('names a repgen.yml key in the App, and the flag at the terminal', () => {
    expect(envFailureSummary(failure)).toContain('Setting `environment.packages` in .github/repgen.yml can fix it.');
    expect(envFailureSummary(failure, 'cli')).toContain('Passing `--with "PACKAGE==VERSION"` to repgen reproduce can fix it');
    expect(fixAdvice('environment.python', 'cli')).toContain('`--python 3.X`');
    expect(fixAdvice('environment.build', 'cli')).toBe(
      " Setting `environment.build` in the checkout's .github/repgen.yml (repgen reproduce reads it at the ref) can fix it.",
    );
  });
});

function parse(text: string): RepoConfig {
  // The same parser the CLI, the App and the Action use.
  const r = parseRepoConfig(text);
  if (!r.ok) throw new Error('bad config');
  return r.config;
}
