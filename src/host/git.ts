// What RepGen itself runs on the host, made safe against what a checkout holds (docs/sandbox.md).
import { spawn } from 'node:child_process';
import { SetupError } from '../errors.js';

export interface GitResult {
  code: number;
  /** The last `maxBytes` of stdout (see `truncated`). */
  stdout: string;
  stderr: string;
  /** Stdout passed `maxBytes` and its start was dropped: a caller that parses the whole output must refuse it. */
  truncated: boolean;
}

export interface GitOptions {
  cwd: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  git?: string;
  maxBytes?: number;
  /** Written to git's stdin (a `--stdin` list of paths); stdin is closed when unset. */
  input?: string;
}

/**
 * Settings that make git run nothing but itself, whatever a repository's own `.git/config` (or a file it includes)
 * says: no fsmonitor hook, no hooks, no external diff or pager, no `ext::` transport, no untracked cache written.
 * Command-line settings (GIT_CONFIG_KEY_n) win over every config file, includes and `includeIf` included.
 */
const SAFE_SETTINGS: ReadonlyArray<readonly [string, string]> = [
  ['safe.directory', '*'],
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.untrackedCache', 'false'],
  ['core.pager', 'cat'],
  ['core.editor', 'false'],
  ['core.sshCommand', 'false'],
  ['core.askPass', ''],
  ['credential.helper', ''],
  ['diff.external', ''],
  ['protocol.ext.allow', 'never'],
  ['protocol.file.allow', 'user'],
  ['uploadpack.packObjectsHook', ''],
  // A submodule's git runs with its own config (`.git/modules/<name>/config`), which none of these reach: git
  // clears GIT_CONFIG_COUNT for the child it starts there. So git must never go into a submodule (issue 38).
  ['submodule.recurse', 'false'],
  ['diff.ignoreSubmodules', 'all'],
  ['status.submoduleSummary', 'false'],
  ['fetch.recurseSubmodules', 'false'],
  ['push.recurseSubmodules', 'no'],
];

/** Subcommands that compare a work tree, and so would run git inside each checked-out submodule. */
const WORK_TREE_DIFFS = new Set(['status', 'diff', 'diff-index', 'diff-files']);

/** Keys a repository's config may set that name a command git would run: each is blanked (see repoCommandKeys). */
const COMMAND_KEY = new RegExp(
  [
    String.raw`filter\.[^\n]+\.(?:clean|smudge|process)`,
    String.raw`diff\.[^\n]+\.(?:textconv|command)`,
    String.raw`merge\.[^\n]+\.driver`,
    String.raw`core\.(?:fsmonitor|hookspath|sshcommand|gitproxy|pager|editor|askpass)`,
    String.raw`credential\.[^\n]*helper`,
    String.raw`gpg\.[^\n]*program`,
    String.raw`sequence\.editor`,
    String.raw`remote\.[^\n]+\.(?:uploadpack|receivepack|proxy)`,
  ]
    .map((p) => `(?:${p})`)
    .join('|')
    .replace(/^/, '^(?:')
    .concat(')$'),
  'i',
);

/**
 * Git with no user or system config, no prompts and nothing of RepGen's environment but PATH (no token a hook or a
 * filter could read): a checkout must not depend on who runs it, and a hostile repository must not reach secrets.
 * `extra` adds command-line settings (a repository's own command keys, blanked).
 */
export function gitEnv(extra: ReadonlyArray<readonly [string, string]> = []): NodeJS.ProcessEnv {
  const settings = [...SAFE_SETTINGS, ...extra];
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LANG: 'C',
    HOME: '/nonexistent',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_CONFIG_COUNT: String(settings.length),
  };
  settings.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/**
 * Runs git in `cwd`; resolves with its exit code (a missing git binary is a SetupError). Every folder is treated
 * as one RepGen did not make (runGitUntrusted): a `--repo`, a bench mirror and a cache checkout alike.
 */
export function runGit(args: string[], opts: GitOptions): Promise<GitResult> {
  return runGitUntrusted(args, opts);
}

/**
 * Git in a folder RepGen did not make (a `--repo`, a user's work tree): first its config is listed (reading it
 * runs nothing), then every key in it that names a command (a filter driver a `.gitattributes` would invoke on
 * `status`, a textconv, an fsmonitor hook, set directly or through an include) is blanked on the command line, and
 * the command runs with gitEnv. Use it for every git command on such a folder.
 */
export async function runGitUntrusted(args: string[], opts: GitOptions): Promise<GitResult> {
  const listed = await spawnGit(['config', '--list', '-z', '--includes'], { ...opts, input: undefined }, gitEnv());
  const keys = listed.code === 0 ? repoCommandKeys(listed.stdout) : [];
  return spawnGit(withoutSubmodules(args), opts, gitEnv(keys));
}

/**
 * `args` with `--ignore-submodules=all` after a subcommand that compares a work tree (status, diff…), unless it
 * already says how to treat submodules. The setting `diff.ignoreSubmodules` alone is not enough: a repository's
 * own `submodule.<name>.ignore` (in `.gitmodules` or its config) wins over it, only the option wins over both.
 * A diff of two commits then leaves out submodule pointer changes, which name no file RepGen reads. Pure.
 */
export function withoutSubmodules(args: readonly string[]): string[] {
  let i = 0;
  // Global options before the subcommand: `-c key=value` and `-C dir` take a value.
  while (i < args.length && args[i]!.startsWith('-')) i += args[i] === '-c' || args[i] === '-C' ? 2 : 1;
  const sub = args[i];
  if (sub === undefined || !WORK_TREE_DIFFS.has(sub)) return [...args];
  if (args.some((a) => a.startsWith('--ignore-submodules'))) return [...args];
  return [...args.slice(0, i + 1), '--ignore-submodules=all', ...args.slice(i + 1)];
}

/** The command-naming keys of `git config --list -z` output, each with the value that turns it off. Pure. */
export function repoCommandKeys(listZ: string): Array<readonly [string, string]> {
  const out: Array<readonly [string, string]> = [];
  const seen = new Set<string>();
  for (const entry of listZ.split('\0')) {
    const key = entry.split('\n')[0] ?? '';
    if (!COMMAND_KEY.test(key) || seen.has(key.toLowerCase())) continue;
    seen.add(key.toLowerCase());
    out.push([key, /fsmonitor$/i.test(key) ? 'false' : /hookspath$/i.test(key) ? '/dev/null' : '']);
    // A filter marked required fails the command when blanked: it is no longer required.
    const filter = /^filter\.(.+)\.(?:clean|smudge|process)$/i.exec(key);
    if (filter && !seen.has(`filter.${filter[1]}.required`.toLowerCase())) {
      seen.add(`filter.${filter[1]}.required`.toLowerCase());
      out.push([`filter.${filter[1]}.required`, 'false']);
    }
  }
  return out;
}

function spawnGit(args: string[], opts: GitOptions, env: NodeJS.ProcessEnv): Promise<GitResult> {
  const git = opts.git ?? 'git';
  const max = opts.maxBytes ?? 1_000_000;
  return new Promise((resolve, reject) => {
    const child = spawn(git, args, {
      cwd: opts.cwd,
      env,
      // stdin is a pipe closed at once (or after `input`): git reads an empty input, as from /dev/null.
      stdio: ['pipe', 'pipe', 'pipe'],
      signal: opts.signal,
      timeout: opts.timeoutMs ?? 300_000,
    });
    // The last `max` bytes of stdout, kept as chunks (a 100 MB file list must not be copied once per chunk).
    const chunks: Buffer[] = [];
    let size = 0;
    let total = 0;
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      chunks.push(d);
      size += d.length;
      total += d.length;
      while (size - (chunks[0]?.length ?? 0) >= max && chunks.length > 1) size -= (chunks.shift() as Buffer).length;
    });
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-8000)));
    // A git that exits before reading all of its input closes the pipe: its exit code says what went wrong.
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input);
    child.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') reject(new SetupError(`git is not installed (${git})`));
      else reject(err);
    });
    child.on('close', (code) => {
      const all = Buffer.concat(chunks);
      resolve({ code: code ?? 1, stdout: all.subarray(Math.max(0, all.length - max)).toString(), stderr, truncated: total > max });
    });
  });
}
