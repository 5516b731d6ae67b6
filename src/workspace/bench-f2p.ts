import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * Fail-to-pass bench cases: a real issue of a repository whose fix commit is known. The reproduction runs
 * against the project at `buggy_commit`; a confirmed one is re-run at `fix_commit` (the fix check), and
 * the posted repro.py is run by hand against both checkouts, outside any sandbox, as a maintainer would.
 */
export const F2pCase = z
  .object({
    repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'must be owner/name'),
    buggy_commit: z.string().regex(/^[0-9a-f]{7,40}$/i, 'must be a commit SHA'),
    fix_commit: z.string().regex(/^[0-9a-f]{7,40}$/i, 'must be a commit SHA'),
  })
  .loose();
export type F2pCase = z.infer<typeof F2pCase>;

/** The case's f2p fields when case.json has all three, else null (an ordinary case). Pure. */
export function readF2pCase(caseJson: unknown): F2pCase | null {
  if (!caseJson || typeof caseJson !== 'object') return null;
  const o = caseJson as Record<string, unknown>;
  if (o.repo === undefined && o.buggy_commit === undefined && o.fix_commit === undefined) return null;
  const parsed = F2pCase.safeParse(caseJson);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`case.json: ${issue?.path.join('.') ?? '?'} ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** Whether the checkout keeps its packages under src/ (a src/ folder holding a package). */
function srcLayout(checkout: string): boolean {
  try {
    return readdirSync(join(checkout, 'src'), { withFileTypes: true }).some(
      (d) => d.isDirectory() && existsSync(join(checkout, 'src', d.name, '__init__.py')),
    );
  } catch {
    return false;
  }
}

export interface HandRun {
  exitCode: number | null;
  timedOut: boolean;
  /** Last line of its output (the exception, usually). */
  lastLine: string;
}

/**
 * `PYTHONPATH=<checkout> python repro.py` in a scratch folder: what a maintainer does with the posted
 * script. Not sandboxed; the bench runs its own cases. Nothing of this process's environment but PATH
 * reaches the script, and it cannot write bytecode into the checkout.
 */
export async function runByHand(script: string, checkout: string, opts: { python: string; timeoutMs: number }): Promise<HandRun> {
  const dir = await mkdtemp(join(tmpdir(), 'repgen-hand-'));
  try {
    await writeFile(join(dir, 'repro.py'), script);
    return await new Promise<HandRun>((resolve) => {
      const child = spawn(opts.python, ['repro.py'], {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: dir,
          // A src/ layout's packages live under src/ (the env's .pth names the sandbox's mount, not this folder).
          PYTHONPATH: srcLayout(checkout) ? `${join(checkout, 'src')}:${checkout}` : checkout,
          PYTHONDONTWRITEBYTECODE: '1',
          MPLBACKEND: 'Agg',
          LANG: 'C.UTF-8',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: opts.timeoutMs,
        killSignal: 'SIGKILL',
      });
      let out = '';
      const keep = (d: Buffer): void => {
        out = (out + d.toString()).slice(-20_000);
      };
      child.stdout.on('data', keep);
      child.stderr.on('data', keep);
      child.on('error', (err) => resolve({ exitCode: null, timedOut: false, lastLine: `could not start ${opts.python}: ${err.message}` }));
      child.on('close', (code, signal) => {
        const last = out.trim().split('\n').pop() ?? '';
        resolve({ exitCode: code, timedOut: signal === 'SIGKILL' && code === null, lastLine: last.slice(0, 300) });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Fail-to-pass by hand: non-zero before the fix, 0 after. Pure. */
export function handF2p(buggy: HandRun, fixed: HandRun): boolean {
  return buggy.exitCode !== 0 && !buggy.timedOut && fixed.exitCode === 0;
}
