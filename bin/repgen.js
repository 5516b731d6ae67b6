#!/usr/bin/env node
// Entry point for `npx repgen`. `repgen`, `--help` and `--version` are answered from plain JavaScript first. Anything
// else runs the compiled JavaScript in dist/ (`npm run build`, which `npm ci` runs as `prepare`) when it is newer
// than every source it was built from: loading the TypeScript through tsx costs a start several times what the
// compiled modules do (docs/benchmarks.md). Otherwise (no build, or a source edited since) tsx loads the sources, so
// a change runs at once without a build step to forget.
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
if (args.length === 0 || (args.length === 1 && ['--help', '-h', 'help', '--version', '-V', 'version'].includes(args[0]))) {
  const { topHelp, version } = await import('../src/cli/top-help.mjs');
  process.stdout.write(/^(--version|-V|version)$/.test(args[0] ?? '') ? `repgen ${version()}\n` : topHelp());
} else {
  const { compiledState } = await import('../src/cli/compiled-entry.mjs');
  let main;
  if (compiledState(fileURLToPath(new URL('..', import.meta.url))).fresh) {
    ({ main } = await import('../dist/src/cli.js'));
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    ({ main } = await import('../src/cli.ts'));
  }
  process.exitCode = await main(args);
}
