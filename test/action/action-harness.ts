import { execFileSync } from 'node:child_process';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * What the runner gives a JavaScript action: GITHUB_* variables, the event payload in a file, an output file,
 * RUNNER_TEMP, and the step's `with:` values as INPUT_* (hyphens kept, as the runner does).
 */
export interface ActionRun {
  env: NodeJS.ProcessEnv;
  dir: string;
  outputs: () => Promise<Record<string, string>>;
}

/** The issue tier 0 reproduces from its own code (the fake executor's `simulate` crashes on it; so does real torch). */
export const LINEAR_CRASH_ISSUE = {
  title: 'nn.Linear fails on my batch',
  body: [
    'Calling my layer on a batch fails.',
    '',
    '```python',
    'import torch',
    'import torch.nn as nn',
    'layer = nn.Linear(5, 2)',
    'x = torch.randn(4, 3)',
    'out = layer(x)',
    '```',
    '',
    '```',
    'Traceback (most recent call last):',
    '  File "train.py", line 5, in <module>',
    '    out = layer(x)',
    'RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 5x2)',
    '```',
  ].join('\n'),
};

/** A git work tree standing in for actions/checkout's (`persist-credentials: false` unless `extraheader` is given). */
export async function makeCheckout(opts: { extraheader?: boolean } = {}): Promise<string> {
  const dir = makeTempDir('repgen-action-ws-');
  await mkdir(join(dir, 'mylib'));
  await writeFile(join(dir, 'mylib', '__init__.py'), 'def double(x):\n    return 2 * x\n');
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: dir,
      env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', HOME: dir },
    });
  git('init', '-q', '-b', 'master');
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'add', '.');
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-q', '-m', 'init');
  if (opts.extraheader)
    git('config', '--local', 'http.https://github.com/.extraheader', 'AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX3NlY3JldA==');
  return dir;
}

export function headOf(dir: string): string {
  return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir }).toString().trim();
}

export async function actionRun(opts: {
  event: string;
  payload: unknown;
  apiUrl: string;
  workspace: string;
  inputs?: Record<string, string>;
  env?: Record<string, string>;
}): Promise<ActionRun> {
  const dir = makeTempDir('repgen-action-run-');
  const eventPath = join(dir, 'event.json');
  const outputPath = join(dir, 'output.txt');
  await writeFile(eventPath, JSON.stringify(opts.payload));
  await writeFile(outputPath, '');
  const repo = (opts.payload as { repository: { full_name: string } }).repository.full_name;
  const inputs = Object.fromEntries(Object.entries(opts.inputs ?? {}).map(([k, v]) => [`INPUT_${k.toUpperCase()}`, v]));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GITHUB_ACTIONS: 'true',
    GITHUB_EVENT_NAME: opts.event,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_TOKEN: 'ghs_workflowTokenForTests0123456789',
    GITHUB_API_URL: opts.apiUrl,
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_REPOSITORY: repo,
    GITHUB_WORKSPACE: opts.workspace,
    GITHUB_OUTPUT: outputPath,
    GITHUB_RUN_ID: '4242',
    GITHUB_RUN_ATTEMPT: '1',
    RUNNER_TEMP: dir,
    REPGEN_GITHUB_THROTTLE: 'false',
    ...inputs,
    ...opts.env,
  };
  return { env, dir, outputs: async () => parseOutputs(await readFile(outputPath, 'utf8')) };
}

/** Reads a $GITHUB_OUTPUT file (`name<<DELIM` blocks) the way the runner does. */
export function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^([^<=]+)<<(.+)$/.exec(lines[i] ?? '');
    if (!m?.[1] || !m[2]) continue;
    const value: string[] = [];
    for (i++; i < lines.length && lines[i] !== m[2]; i++) value.push(lines[i] ?? '');
    out[m[1]] = value.join('\n');
  }
  return out;
}
