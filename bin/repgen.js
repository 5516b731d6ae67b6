#!/usr/bin/env node
// Entry point for `npx repgen`. The sources are TypeScript; tsx loads them directly so that
// there is no build step to forget between `npm ci` and the first run. `repgen`, `--help` and `--version`
// are answered from plain JavaScript first: registering tsx alone costs more than the answer should.
const args = process.argv.slice(2);
if (args.length === 0 || (args.length === 1 && ['--help', '-h', 'help', '--version', '-V', 'version'].includes(args[0]))) {
  const { topHelp, version } = await import('../src/cli/top-help.mjs');
  process.stdout.write(/^(--version|-V|version)$/.test(args[0] ?? '') ? `repgen ${version()}\n` : topHelp());
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../src/cli.ts');
  process.exitCode = await main(args);
}
