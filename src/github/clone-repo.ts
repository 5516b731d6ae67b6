import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { redactSecrets } from '../publish/neutralize.js';
import { CloneError, RefNotFoundError } from './errors.js';
import { gitEnv } from '../host/git.js';

export interface CloneOptions {
  /** Remote URL without credentials (the payload's clone_url, or a local path in tests). */
  url: string;
  /** Branch, tag or commit SHA. */
  ref: string;
  /** Installation token; sent as an HTTP header, never put in the URL or on a command line. */
  token: string | null;
  dir: string;
  signal?: AbortSignal;
  /** @defaultValue 'git' */
  git?: string;
  /** @defaultValue 120000 */
  timeoutMs?: number;
  /** Fetch the ref's whole history and the tags (a bisection walks them), not one commit. @defaultValue false */
  history?: boolean;
}

/**
 * Shallow checkout of one ref: `git init` + `fetch --depth 1 <url> <ref>` + checkout, which works for a
 * SHA as well as a branch (`clone --branch` does not take SHAs). The token travels as an
 * `http.extraHeader` through GIT_CONFIG_* variables: not in the URL (which git prints in errors and
 * stores in .git/config) and not in argv (visible in `ps`).
 */
export async function cloneAtRef(options: CloneOptions): Promise<{ sha: string }> {
  const git = options.git ?? 'git';
  // The safe settings of every git RepGen runs (src/host/git.ts), and the token as a header setting.
  const header: Array<readonly [string, string]> = options.token
    ? [['http.extraHeader', `Authorization: Basic ${Buffer.from(`x-access-token:${options.token}`).toString('base64')}`]]
    : [];
  const env: NodeJS.ProcessEnv = { ...gitEnv(header), HOME: options.dir };
  const secrets = options.token ? [options.token, Buffer.from(`x-access-token:${options.token}`).toString('base64')] : [];
  const run = (args: string[]) =>
    runGit(git, args, { env, cwd: options.dir, signal: options.signal, timeoutMs: options.timeoutMs ?? 120_000, secrets });
  await mkdir(options.dir, { recursive: true });
  await run(['init', '-q']);
  const depth = options.history ? ['--tags'] : ['--depth', '1', '--no-tags'];
  const fetched = await run(['fetch', '-q', ...depth, options.url, options.ref]);
  if (fetched.code !== 0) {
    if (/couldn't find remote ref|not our ref|no such ref|unadvertised object/i.test(fetched.stderr)) {
      throw new RefNotFoundError(`the ref '${options.ref}' does not exist in the repository`);
    }
    throw new CloneError(`git fetch failed: ${fetched.stderr.trim().split('\n').slice(-2).join(' ')}`);
  }
  const checkout = await run(['checkout', '-q', '--detach', 'FETCH_HEAD']);
  if (checkout.code !== 0) throw new CloneError(`git checkout failed: ${checkout.stderr.trim()}`);
  const head = await run(['rev-parse', 'HEAD']);
  return { sha: head.stdout.trim() };
}

function runGit(
  git: string,
  args: string[],
  opts: { env: NodeJS.ProcessEnv; cwd: string; signal?: AbortSignal; timeoutMs: number; secrets: string[] },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(git, args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: opts.signal,
      timeout: opts.timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-8000)));
    child.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') reject(new CloneError(`git is not installed (${git})`));
      else if (err.name === 'AbortError') reject(err);
      else reject(new CloneError(redactSecrets(err.message, opts.secrets)));
    });
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr: redactSecrets(stderr, opts.secrets) }));
  });
}
