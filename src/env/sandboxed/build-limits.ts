/**
 * The limits of one env build step that hold without a cgroup (issue 38: with none, a build step forked 600
 * processes, allocated 3 GiB and wrote 800 MB into the host's cache folder). Every step runs under BUILD_LIMITS_PY,
 * which sets them and then becomes the step's command; the disk ceiling of the folder the step writes is watched from
 * outside (src/exec/local/work-dir-quota.ts, as a run's work folder is). Where the host gives a cgroup, its memory and
 * pids ceilings hold as well (sandboxed-command.ts).
 */
export interface BuildLimits {
  /** CPU seconds of each process (RLIMIT_CPU; SIGXCPU at the limit, SIGKILL a tenth later). */
  cpuSeconds: number;
  /** Private memory of each process (RLIMIT_DATA); its address space gets twice that (RLIMIT_AS). */
  memoryBytes: number;
  /** Largest file a process may write (RLIMIT_FSIZE). */
  fileBytes: number;
  /** Processes and threads of the build's uid (RLIMIT_NPROC). */
  processes: number;
  /** Disk the folder the step writes may hold, in MB (REPGEN_ENV_BUILD_MAX_MB). */
  diskMb: number;
}

/** Largest file of a build step: a CUDA library unpacked from its wheel is under 2 GB. @defaultValue 8 GiB */
export const BUILD_FILE_BYTES = 8 * 1024 ** 3;
/** The disk ceiling of a build's folder (its scope: uv's cache and the venv being built). @defaultValue 40 GB */
export const BUILD_DISK_MB = 40 * 1024;

/**
 * `python -I -S -c BUILD_LIMITS_PY CPU DATA AS FSIZE NPROC ARGV...`: sets the limits (never above what it was given)
 * and execs ARGV. RepGen's own code, run by the base interpreter in isolated mode; nothing of the project is imported.
 */
export const BUILD_LIMITS_PY = `
import os, resource, signal, sys
def cap(kind, soft, hard):
    cur = resource.getrlimit(kind)[1]
    if cur != resource.RLIM_INFINITY:
        soft, hard = min(soft, cur), min(hard, cur)
    resource.setrlimit(kind, (soft, hard))
cpu, data, space, fsize, nproc = (int(a) for a in sys.argv[1:6])
cap(resource.RLIMIT_CPU, cpu, cpu + max(1, cpu // 10))
cap(resource.RLIMIT_DATA, data, data)
cap(resource.RLIMIT_AS, space, space)
cap(resource.RLIMIT_FSIZE, fsize, fsize)
cap(resource.RLIMIT_NPROC, nproc, nproc)
cap(resource.RLIMIT_CORE, 0, 0)
# Python ignores SIGPIPE and SIGXFSZ, and exec passes that on: a file past the limit must stop its writer.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
os.execv(sys.argv[6], sys.argv[6:])
`;

/** The argv prefix that runs a command under `limits`, with `python` (the base interpreter). */
export function limitsArgv(python: string, limits: BuildLimits): string[] {
  const ints = [limits.cpuSeconds, limits.memoryBytes, 2 * limits.memoryBytes, limits.fileBytes, limits.processes].map((n) =>
    String(Math.max(1, Math.floor(n))),
  );
  return [python, '-I', '-S', '-c', BUILD_LIMITS_PY, ...ints];
}

const SIGXCPU = 24;
const SIGXFSZ = 25;

/**
 * Which limit a failed step ran into, said as the result's note (the step's own error says it in its words: EAGAIN
 * from fork, MemoryError, "File too large"), or null. Pure.
 */
export function buildLimitNote(outcome: { code: number | null; stderr: string }, limits: BuildLimits): string | null {
  if (outcome.code === 0) return null;
  const err = outcome.stderr;
  const gib = (b: number): string => `${Math.round((b / 1024 ** 3) * 10) / 10} GiB`;
  if (outcome.code === 128 + SIGXCPU || /CPU time limit exceeded|SIGXCPU/.test(err))
    return `repgen: the build step was stopped by its ${limits.cpuSeconds} s CPU-time limit (per process)`;
  if (outcome.code === 128 + SIGXFSZ || /File size limit exceeded|File too large|EFBIG|SIGXFSZ/.test(err))
    return `repgen: the build step wrote a file past its ${gib(limits.fileBytes)} file-size limit`;
  if (/Resource temporarily unavailable|EAGAIN|fork: retry|[Cc]annot fork|can't start new thread|Errno 11\]/.test(err))
    return `repgen: the build step ran into its limit of ${limits.processes} processes and threads`;
  if (/MemoryError|Cannot allocate memory|ENOMEM|bad_alloc|[Oo]ut of memory|memory allocation .* failed/.test(err))
    return `repgen: the build step ran into its ${gib(limits.memoryBytes)} memory limit (per process)`;
  return null;
}
