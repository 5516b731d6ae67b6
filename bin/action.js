#!/usr/bin/env node
// Entry of the GitHub Action (action.yml: `runs.using: node20`, `main: bin/action.js`). The sources are
// TypeScript loaded by tsx, as for `npx repgen` (bin/repgen.js): there is no build step and no bundle to keep
// in step with src/. A workflow's `uses: OWNER/repgen@REF` gives the repository without node_modules, so the
// first thing done is `npm ci --omit=dev` next to this file (the lock file pins every version; package.json's
// allowScripts, or ONNXRUNTIME_NODE_INSTALL=skip for an npm that does not read it, skips onnxruntime's GPU download); a runner that already has them (a cached folder, a self-hosted runner) skips it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function fail(message) {
  process.stdout.write(`::error title=RepGen::${message.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')}\n`);
  process.exit(1);
}

if (!existsSync(join(root, 'node_modules', 'tsx', 'package.json'))) {
  // npm on PATH (GitHub's runners, actions/setup-node), else the one beside this node.
  const candidates = ['npm', join(dirname(process.execPath), 'npm')];
  let installed = null;
  process.stdout.write('::group::RepGen: installing its dependencies (npm ci --omit=dev)\n');
  for (const npm of candidates) {
    const r = spawnSync(npm, ['ci', '--omit=dev', '--no-audit', '--no-fund'], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' },
    });
    if (r.error && r.error.code === 'ENOENT') continue;
    installed = r;
    break;
  }
  process.stdout.write('::endgroup::\n');
  if (installed === null)
    fail(
      'npm not found: RepGen installs its dependencies with npm before its first run; add actions/setup-node (Node 20 or newer) before this step',
    );
  if (installed.status !== 0)
    fail(`npm ci --omit=dev failed in ${root} (exit ${installed.status ?? installed.signal}); see the group above`);
}

const { register } = await import('tsx/esm/api');
register();
const { main } = await import('../src/action.ts');
process.exitCode = await main();
