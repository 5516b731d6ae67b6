import { spawn } from 'node:child_process';
import { WorkspaceError } from './errors.js';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Git with no user or system config and no prompts: a checkout must not depend on who runs it. */
export function gitEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    // A mirror owned by another uid (a shared cache) is still ours to read.
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'safe.directory',
    GIT_CONFIG_VALUE_0: '*',
  };
}

/** Runs git in `cwd`; resolves with its exit code (a missing git binary is a WorkspaceError). */
export function runGit(args: string[], opts: { cwd: string; signal?: AbortSignal; timeoutMs?: number; git?: string }): Promise<GitResult> {
  const git = opts.git ?? 'git';
  return new Promise((resolve, reject) => {
    const child = spawn(git, args, {
      cwd: opts.cwd,
      env: gitEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: opts.signal,
      timeout: opts.timeoutMs ?? 300_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-1_000_000)));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-8000)));
    child.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') reject(new WorkspaceError(`git is not installed (${git})`));
      else reject(err);
    });
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}
