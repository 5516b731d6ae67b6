// Plain JavaScript on purpose: bin/repgen.js answers `repgen`, `--help` and `--version` from this file without
// loading tsx (which alone takes longer than the whole answer should), and src/cli.ts renders the same text.
import { readFileSync } from 'node:fs';

/** One line per command for `repgen --help`; each module's own `summary` must match (test/cli/cli.test.ts). */
export const SUMMARIES = {
  run: 'run a script in the sandbox and read its DL symptoms (optionally against an issue)',
  context: 'rank the code of a repository for a bug report (context bundles)',
  reproduce: 'reproduce the bug an issue reports: repro.py, evidence.json, comment.md',
  bench: 'run reproduce over a folder of cases; table + JSON, judge-checked',
  serve: 'run the GitHub App webhook server',
  worker: 'run reproduction jobs from the queue (the GitHub App worker)',
  k8s: 'Kubernetes executor tools: render the Job a script would run as',
};

export function topHelp() {
  const lines = [
    'usage: repgen <command> [options]',
    '       repgen help <command> | repgen --version',
    '',
    'Reproduces deep-learning bugs from issue reports.',
    '',
    'commands:',
  ];
  for (const [name, summary] of Object.entries(SUMMARIES)) lines.push(`  ${name.padEnd(10)} ${summary}`);
  lines.push('', "Run 'repgen help <command>' (or 'repgen <command> --help') for a command's options.");
  return `${lines.join('\n')}\n`;
}

export function version() {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  return pkg.version ?? 'unknown';
}
