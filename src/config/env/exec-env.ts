import { z } from 'zod';
import { doc, intMin, posInt } from './define.js';

/**
 * The interpreter of script runs and static checks when none is set: Debian's, which has python3-torch. The
 * `python3` first on PATH may be another one without torch, which is why it is absolute.
 */
export const DEFAULT_PYTHON = '/usr/bin/python3';

/** REPGEN_PYTHON, else {@link DEFAULT_PYTHON}. */
export function scriptPython(env: { REPGEN_PYTHON?: string | undefined }): string {
  return env.REPGEN_PYTHON ?? DEFAULT_PYTHON;
}

/** The executor kinds (src/exec/index.ts keeps its factory in step with this list). */
export const EXECUTOR_KIND_NAMES = ['local', 'kubernetes'] as const;

/**
 * How the script is isolated. `auto` and `bwrap` are the same: bubblewrap, or no run at all when it does not work
 * here. `none` runs untrusted code on the host and must be chosen explicitly; every result then says so.
 */
export const SandboxMode = z.enum(['auto', 'bwrap', 'none']);
export type SandboxMode = z.infer<typeof SandboxMode>;

/** Where scripts run and the local sandbox's settings (src/exec/config.ts turns them into LocalExecConfig). */
export const ExecEnv = z.object({
  REPGEN_EXECUTOR: doc(z.string().optional(), {
    description: `where scripts run: ${EXECUTOR_KIND_NAMES.map((k) => `\`${k}\``).join(' or ')} (a repository may ask for kubernetes)`,
    shown: '`local`',
  }),
  REPGEN_PYTHON: doc(z.string().min(1).optional(), {
    description:
      'interpreter of script runs (Debian python3-torch lives under /usr/bin); ' +
      'asked for its version before any run, and refused unless it answers as a Python 3',
    shown: '`/usr/bin/python3`',
  }),
  REPGEN_SANDBOX: doc(
    z
      .string()
      .refine(
        (v) => v !== 'unshare',
        'unshare is no longer offered: it gave no filesystem isolation (use bwrap, or none to run unisolated)',
      )
      .pipe(SandboxMode)
      .optional(),
    { description: '`auto`/`bwrap` (bubblewrap, or no run) or `none` (unisolated, said in every result)', shown: '`auto`' },
  ),
  REPGEN_LAUNCHER: doc(z.enum(['auto', 'native', 'python']).optional(), {
    description: 'what starts and measures the script: a small C program or the same logic in Python',
    shown: '`auto`',
  }),
  REPGEN_WARM_POOL: doc(z.enum(['off', 'auto', 'always']).optional(), {
    description:
      "fork servers: each run is forked from a sandboxed interpreter that imported torch, numpy and the run's leading imports " +
      'once (22 ms against 1.5 s cold, docs/sandbox.md); `auto` keeps up to max(4, REPGEN_PARALLEL_RUNS) of them, ' +
      'about 225 MB resident each (half of it the shared libraries of torch), 2 min after their last run; ' +
      '`off` starts every run cold',
    shown: '`auto`',
  }),
  REPGEN_SANDBOX_UID: doc(intMin(1).optional(), { description: 'host uid the sandbox runs as when RepGen is root', shown: '`65534`' }),
  REPGEN_MAX_PROCESSES: doc(intMin(8).optional(), { description: 'processes and threads of one run (RLIMIT_NPROC)', shown: '`512`' }),
  REPGEN_MAX_OPEN_FILES: doc(intMin(64).optional(), { description: 'open files per process (RLIMIT_NOFILE)', shown: '`4096`' }),
  REPGEN_MAX_FILE_MB: doc(posInt().optional(), { description: 'largest file a script may write (RLIMIT_FSIZE)', shown: '`2048`' }),
  REPGEN_WORK_MAX_MB: doc(posInt().optional(), {
    description: "disk a run's work folder may use in all: the run is stopped past it, with a note saying so (no file may pass it either)",
    shown: '`4096`',
  }),
  REPGEN_SCRIPT_THREADS: doc(intMin(1).optional(), {
    description:
      "threads a run's numeric libraries start (OMP/MKL/OpenBLAS, TensorFlow's op pools): its share of the CPUs, so parallel runs " +
      'do not oversubscribe them',
    shown: 'CPUs ÷ `REPGEN_PARALLEL_RUNS` (at least 1)',
  }),
  REPGEN_WORK_ROOT: doc(z.string().min(1).optional(), { description: "folder of each run's throwaway work dir", shown: 'the OS temp dir' }),
  REPGEN_SANDBOX_RO_PATHS: doc(z.string().optional(), {
    description: 'extra host paths bound read-only into the sandbox, colon-separated (a virtualenv)',
    shown: '—',
  }),
  REPGEN_KEEP_WORKDIR: doc(z.enum(['0', '1', 'true', 'false']).optional(), {
    description: "keep each run's work dir (debugging)",
    shown: '`0`',
  }),
});
export type ExecEnv = z.infer<typeof ExecEnv>;
