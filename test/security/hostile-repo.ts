import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/temp-dir.js';

/** Secrets a leak would show: set in the environment of the process under test. */
export const SECRETS = {
  GITHUB_TOKEN: 'ghs_hostiletestsecret0001',
  PRIVATE_KEY: 'hostile-test-private-key',
  REPGEN_WEBHOOK_SECRET: 'whsec-hostile',
};

export interface HostileRepo {
  /** The work tree, dirty (a modified tracked file and an untracked one), with its .git. */
  dir: string;
  /** Where every planted program writes `<name>` (its environment) when it runs. */
  markers: string;
  /** The names of the planted programs that ran, sorted. */
  ran(): string[];
  /** The text of what ran, all markers together (to look for a secret). */
  leaked(): string;
}

const HOOKS = [
  'post-checkout',
  'post-index-change',
  'reference-transaction',
  'pre-auto-gc',
  'post-merge',
  'post-rewrite',
  'pre-commit',
  'fsmonitor-watchman',
  'push-to-checkout',
];

/**
 * A git repository whose config and hooks try to run a program on the host: `core.fsmonitor`, every hook, a
 * `core.hooksPath` into the tree, a clean/smudge/process filter with a `.gitattributes` that applies it everywhere,
 * a textconv and an external diff, `log.showSignature` with a `gpg.program`, and an `include.path` and an
 * `includeIf "gitdir:"` each to a file that sets `core.fsmonitor` again.
 */
export function hostileRepo(
  files: Record<string, string> = { 'model.py': 'import torch\n\ndef build():\n    return torch.nn.Linear(2, 2)\n' },
): HostileRepo {
  const root = makeTempDir('repgen-hostile-repo-');
  // The sandbox's uid reads the work tree when RepGen runs as root.
  chmodSync(root, 0o755);
  const dir = join(root, 'repo');
  const markers = join(root, 'markers');
  mkdirSync(markers);
  mkdirSync(dir);
  const git = (...args: string[]): string =>
    execFileSync('git', args, {
      cwd: dir,
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: root },
      encoding: 'utf8',
    });
  const program = (name: string): string => {
    const path = join(root, 'bin', name);
    mkdirSync(join(root, 'bin'), { recursive: true });
    // Writes its environment, then behaves (a filter passes its input through, a hook succeeds).
    writeFileSync(path, `#!/bin/sh\nenv > ${JSON.stringify(join(markers, name))}\ncat 2>/dev/null\nexit 0\n`);
    chmodSync(path, 0o755);
    return path;
  };
  git('init', '-q', '-b', 'main');
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
  writeFileSync(join(dir, '.gitattributes'), '* filter=evil diff=evil\n');
  git('add', '-A');
  git('-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-qm', 'init');
  // Armed only now: the commit above ran none of it.
  git('config', 'core.fsmonitor', program('fsmonitor'));
  git('config', 'filter.evil.clean', program('filter-clean'));
  git('config', 'filter.evil.smudge', program('filter-smudge'));
  git('config', 'filter.evil.process', program('filter-process'));
  git('config', 'filter.evil.required', 'true');
  git('config', 'diff.evil.textconv', program('textconv'));
  git('config', 'diff.external', program('diff-external'));
  git('config', 'log.showSignature', 'true');
  git('config', 'gpg.program', program('gpg'));
  git('config', 'core.sshCommand', program('ssh'));
  git('config', 'core.pager', program('pager'));
  writeFileSync(join(root, 'included.cfg'), `[core]\n\tfsmonitor = ${program('fsmonitor-include')}\n`);
  writeFileSync(join(root, 'included-if.cfg'), `[core]\n\tfsmonitor = ${program('fsmonitor-includeif')}\n`);
  git('config', 'include.path', join(root, 'included.cfg'));
  git('config', `includeIf.gitdir:${dir}/.git.path`, join(root, 'included-if.cfg'));
  for (const hook of HOOKS)
    writeFileSync(join(dir, '.git', 'hooks', hook), `#!/bin/sh\nenv > ${JSON.stringify(join(markers, `hook-${hook}`))}\n`);
  for (const hook of HOOKS) chmodSync(join(dir, '.git', 'hooks', hook), 0o755);
  // Dirty: a status must compare contents (the clean filter) and a diff must run (textconv, external diff).
  const first = Object.keys(files)[0]!;
  writeFileSync(join(dir, first), `${readFileSync(join(dir, first), 'utf8')}# changed\n`);
  writeFileSync(join(dir, 'untracked.py'), 'x = 1\n');
  return {
    dir,
    markers,
    ran: () => (existsSync(markers) ? readdirSync(markers).sort() : []),
    leaked: () =>
      readdirSync(markers)
        .map((m) => readFileSync(join(markers, m), 'utf8'))
        .join('\n'),
  };
}

/** Sets {@link SECRETS} in process.env for `fn`, then puts the environment back. */
export async function withSecrets<T>(fn: () => Promise<T>): Promise<T> {
  const saved = { ...process.env };
  Object.assign(process.env, SECRETS);
  try {
    return await fn();
  } finally {
    for (const k of Object.keys(SECRETS)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}
