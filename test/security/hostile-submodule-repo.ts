import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/temp-dir.js';

export interface HostileSubmoduleRepo {
  /** The superproject's work tree, dirty inside its submodule `sub/` (and outside it). */
  dir: string;
  /** Where every planted program writes one file per run (its environment). */
  markers: string;
  /** How many times the planted programs ran, all together. */
  runs(): number;
  /** The text of what ran, all markers together (to look for a secret). */
  leaked(): string;
}

/**
 * A work tree with a registered, checked-out submodule `sub/` whose own config (`.git/modules/sub/config`, a file
 * the superproject's command-line settings do not reach once git recurses) defines a clean filter and an fsmonitor
 * hook, each a program that records its run (issue 38, item 2). The submodule's `.gitattributes` applies the filter
 * to every file and a file in it is modified, so any git that looks into the submodule's work tree runs them.
 */
export function hostileSubmoduleRepo(): HostileSubmoduleRepo {
  const root = makeTempDir('repgen-hostile-sub-');
  chmodSync(root, 0o755);
  const dir = join(root, 'repo');
  const origin = join(root, 'sub-origin');
  const markers = join(root, 'markers');
  for (const d of [markers, dir, origin, join(root, 'bin')]) mkdirSync(d);
  const git = (cwd: string, ...args: string[]): string =>
    execFileSync('git', ['-c', 'user.name=a', '-c', 'user.email=a@b', '-c', 'protocol.file.allow=always', ...args], {
      cwd,
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: root },
      encoding: 'utf8',
    });
  const program = (name: string): string => {
    const path = join(root, 'bin', name);
    // One marker file per run ($$ differs per process), then behave (a filter passes its input through).
    writeFileSync(path, `#!/bin/sh\nenv > ${JSON.stringify(join(markers, `${name}-`))}$$\ncat 2>/dev/null\nexit 0\n`);
    chmodSync(path, 0o755);
    return path;
  };
  git(origin, 'init', '-q', '-b', 'main');
  writeFileSync(join(origin, 'layer.py'), 'import torch\n');
  writeFileSync(join(origin, '.gitattributes'), '* filter=x\n');
  git(origin, 'add', '-A');
  git(origin, 'commit', '-qm', 'sub');
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'model.py'), 'import torch\n\ndef build():\n    return torch.nn.Linear(2, 2)\n');
  git(dir, 'add', '-A');
  git(dir, 'submodule', '--quiet', 'add', origin, 'sub');
  git(dir, 'commit', '-qm', 'init');
  // Armed only now, in the submodule's own git dir: nothing above ran them.
  const moduleConfig = join(dir, '.git', 'modules', 'sub', 'config');
  appendFileSync(moduleConfig, `[filter "x"]\n\tclean = ${program('filter-clean')}\n\tsmudge = ${program('filter-smudge')}\n`);
  appendFileSync(moduleConfig, `[core]\n\tfsmonitor = ${program('fsmonitor')}\n`);
  // The superproject asks for the most recursion its own config can: what RepGen's settings must override.
  git(dir, 'config', 'submodule.recurse', 'true');
  git(dir, 'config', 'diff.ignoreSubmodules', 'none');
  git(dir, 'config', 'status.submoduleSummary', 'true');
  git(dir, 'config', 'submodule.sub.ignore', 'none');
  writeFileSync(join(dir, 'sub', 'layer.py'), 'import torch  # changed\n');
  writeFileSync(join(dir, 'model.py'), `${readFileSync(join(dir, 'model.py'), 'utf8')}# changed\n`);
  return {
    dir,
    markers,
    runs: () => (existsSync(markers) ? readdirSync(markers).length : 0),
    leaked: () =>
      readdirSync(markers)
        .map((m) => readFileSync(join(markers, m), 'utf8'))
        .join('\n'),
  };
}
