import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PYTHON } from '../config/env/exec-env.js';
import { CancelledError } from '../errors.js';
import { parsePyflakesOutput, parsePylintOutput, type StaticChecker, type StaticReport } from './static-checker.js';

export interface PyflakesCheckerOptions {
  /** Interpreter that has pyflakes (and maybe pylint) installed. @defaultValue '/usr/bin/python3' */
  python?: string;
  /** Also run `pylint -E` when it is installed (about 1.5 s a script). @defaultValue true */
  pylint?: boolean;
  /**
   * Run the tools at the lowest CPU priority, for a check off the critical path: nice 19, in a session (and so, where
   * the kernel groups by session, an autogroup) of their own whose nice is 19 too. @defaultValue false
   */
  lowPriority?: boolean;
  /** Per-tool time limit. @defaultValue 30000 */
  timeoutMs?: number;
}

interface ToolRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a host-side tool the way nothing of a checkout or of RepGen's working folder can reach it: the interpreter
 * isolated (`-I`: no current folder or script folder on sys.path, no PYTHON* variables, no user site), its working
 * folder a private empty one made for this call (so a `pyflakes.py`, a `pylint/` package, a `.pylintrc` or a
 * `pyproject.toml` there cannot be imported or read), HOME in that folder too (no `~/.pylintrc`), and nothing of
 * RepGen's environment but PATH and LANG (no token to read from /proc/self/environ).
 */
async function runTool(
  cmd: string,
  args: string[],
  input: string,
  timeoutMs: number,
  signal?: AbortSignal,
  lowPriority = false,
): Promise<ToolRun> {
  // An abort that came before the spawn (between pyflakes and pylint) would never fire the listener: start nothing.
  if (signal?.aborted) throw new CancelledError('cancelled during the static check');
  const home = await mkdtemp(join(tmpdir(), 'repgen-static-'));
  try {
    const rcfile = join(home, 'pylintrc');
    await writeFile(rcfile, PYLINTRC, { mode: 0o600 });
    return await spawnTool(
      cmd,
      ['-I', ...args.map((a) => (a === RCFILE ? `--rcfile=${rcfile}` : a))],
      input,
      home,
      timeoutMs,
      signal,
      lowPriority,
    );
  } finally {
    await rm(home, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Stands for `--rcfile=<the private pinned config>` in a tool's arguments. */
const RCFILE = '\u0000rcfile';
/** pylint's whole configuration: no plugins, no init-hook; whatever the folders around hold is never read. */
const PYLINTRC = '[MAIN]\nload-plugins=\npersistent=no\n';

function spawnTool(
  cmd: string,
  args: string[],
  input: string,
  home: string,
  timeoutMs: number,
  signal?: AbortSignal,
  lowPriority = false,
): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new CancelledError('cancelled during the static check'));
    // The script is only parsed, never executed, so these tools run outside the sandbox, isolated (runTool).
    const child = spawn(cmd, args, {
      cwd: home,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: home, PYLINTHOME: home },
      // Its own session: see lowerPriority.
      detached: lowPriority,
    });
    if (lowPriority && child.pid !== undefined) lowerPriority(child.pid);
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const onAbort = (): void => void child.kill('SIGKILL');
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) reject(new CancelledError('cancelled during the static check'));
      else resolve({ code, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/**
 * Nice 19 for `pid`, and for its autogroup. With autogrouping on (`/proc/sys/kernel/sched_autogroup_enabled`, the
 * default of most distributions' kernels) the scheduler first shares the CPU between sessions, and a process's own
 * nice only weighs it against its session's other processes: each sandboxed run is a session of its own (bwrap
 * --new-session), so a nice-19 pylint in RepGen's session took as much CPU as a run (measured: of 3 busy loops, two of
 * them `setsid`, each got a third of 2 cores; with the third's autogroup at nice 19, it got 0.3 s of CPU to their
 * 3.7 s). `pid` leads a session of its own (spawned detached), so this autogroup is its alone. Where either is not
 * allowed or not there, the check still runs, at whatever priority it has.
 */
function lowerPriority(pid: number): void {
  try {
    setPriority(pid, 19);
  } catch {
    // Not allowed here.
  }
  try {
    writeFileSync(`/proc/${pid}/autogroup`, '19');
  } catch {
    // No autogroups (another kernel, or autogrouping compiled out), or the process has already ended.
  }
}

/** Known once per process: a missing pylint answers `No module named pylint` (asking `--version` first cost a 2 s start). */
let pylintMissing = false;

/** pyflakes always; `pylint -E` when installed, with torch's dynamic members silenced (they are false alarms). */
export function createPyflakesChecker(options: PyflakesCheckerOptions = {}): StaticChecker {
  const python = options.python ?? DEFAULT_PYTHON;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const wantPylint = options.pylint ?? true;
  return {
    async check(script, signal): Promise<StaticReport> {
      const tools: string[] = [];
      const flakes = await runTool(python, ['-m', 'pyflakes'], script, timeoutMs, signal, options.lowPriority);
      if (flakes.code !== 0 && flakes.code !== 1) {
        tools.push(`pyflakes unavailable: ${(flakes.stderr.trim().split('\n').pop() ?? '').slice(0, 200)}`);
        return { findings: [], undefinedNames: [], tools };
      }
      tools.push('pyflakes');
      const parsed = parsePyflakesOutput(flakes.stdout + flakes.stderr);
      const findings = [...parsed.findings];
      const syntaxBroken = findings.some((f) => f.severity === 'error' && !f.message.startsWith('undefined name'));
      if (wantPylint && !syntaxBroken) {
        const lint = pylintMissing
          ? null
          : await runTool(
              python,
              [
                '-m',
                'pylint',
                RCFILE,
                '-E',
                '--disable=no-member,import-error,no-name-in-module,not-callable,unsubscriptable-object,undefined-variable',
                '--score=n',
                '--output-format=text',
                '--from-stdin',
                'repro.py',
              ],
              script,
              timeoutMs,
              signal,
              options.lowPriority,
            );
        if (lint && /No module named pylint/.test(lint.stderr)) pylintMissing = true;
        if (lint && !pylintMissing) {
          tools.push('pylint -E');
          findings.push(...parsePylintOutput(lint.stdout));
        } else tools.push('pylint not installed');
      }
      return { findings, undefinedNames: parsed.undefinedNames, tools };
    },
  };
}
