import { tmpdir } from 'node:os';
import { z } from 'zod';
import { DEFAULT_PYTHON, ExecEnv, SandboxMode } from '../config/env/exec-env.js';
import { parseEnv } from '../config/operator-env.js';
import { SetupError } from '../errors.js';

/**
 * Settings of the local sandboxed executor, read from the environment once (`readLocalExecConfig(env)`).
 * The executor takes the parsed object; nothing in `local/executor.ts` reads `process.env`.
 */

export { SandboxMode } from '../config/env/exec-env.js';

export const LocalExecConfig = z
  .object({
    kind: z.literal('local'),
    /**
     * Interpreter used when a request names none. Debian's python3-torch lives under /usr/bin/python3; the
     * `python3` first on PATH may be another one without torch, which is why the default is absolute.
     * @defaultValue '/usr/bin/python3'
     */
    python: z.string().min(1).default(DEFAULT_PYTHON),
    /** Isolation to use (`REPGEN_SANDBOX`). @defaultValue 'auto' */
    sandbox: SandboxMode.default('auto'),
    /** Folder under which each run's throwaway work dir is created (`REPGEN_WORK_ROOT`). @defaultValue os.tmpdir() */
    workRoot: z.string().min(1).default(tmpdir()),
    /** Extra host paths bound read-only into the bubblewrap sandbox, e.g. a virtualenv (`REPGEN_SANDBOX_RO_PATHS`, colon-separated). @defaultValue [] */
    readOnlyPaths: z.array(z.string().startsWith('/')).default([]),
    /** Output files up to this size that are valid UTF-8 text come back with their content. @defaultValue 65536 */
    inlineFileBytes: z.number().int().min(0).default(65_536),
    /** At most this many files of $REPGEN_OUT are listed in a result. @defaultValue 200 */
    maxOutputFiles: z.number().int().positive().default(200),
    /**
     * Largest file a script may write, in MB (`REPGEN_MAX_FILE_MB`, RLIMIT_FSIZE): the work dir lives on the host's
     * disk, and a runaway writer must fail with "File too large" before it fills it. @defaultValue 2048
     */
    maxFileMb: z.number().int().positive().default(2048),
    /**
     * Disk a run's work folder may use in all, in MB (`REPGEN_WORK_MAX_MB`): past it the run is stopped with a note
     * (work-dir-quota.ts), and no one file may pass it either (RLIMIT_FSIZE is the smaller of the two). @defaultValue 4096
     */
    workMaxMb: z.number().int().positive().default(4096),
    /**
     * What starts the script and measures it (`REPGEN_LAUNCHER`): `native` is a small C program built once with the
     * host's C compiler and cached under the work root, `python` the same logic run by the interpreter (one more
     * interpreter start per run), `auto` native when a compiler is there, else python. @defaultValue 'auto'
     */
    launcher: z.enum(['auto', 'native', 'python']).default('auto'),
    /**
     * Host uid (and gid) bubblewrap runs as when RepGen runs as root (`REPGEN_SANDBOX_UID`): the script must never
     * be host root, not even inside a user namespace. The work root, the interpreter and the workspace must be
     * readable by it. @defaultValue 65534
     */
    sandboxUid: z.number().int().min(1).default(65534),
    /** Processes and threads a run may have at once (`REPGEN_MAX_PROCESSES`, RLIMIT_NPROC in the sandbox's user namespace). @defaultValue 512 */
    maxProcesses: z.number().int().min(8).default(512),
    /** Open files per process (`REPGEN_MAX_OPEN_FILES`, RLIMIT_NOFILE). @defaultValue 4096 */
    maxOpenFiles: z.number().int().min(64).default(4096),
    /**
     * Fork servers (`REPGEN_WARM_POOL`, src/exec/warm/fork-server.ts): `auto` runs each request forked from a sandboxed
     * interpreter that imported torch and numpy once for requests of its shape (started on the first such request,
     * kept 2 min idle; cold, with a note, when it cannot serve); `always` also waits however long its imports take
     * (tests, benchmarks); `off` starts every run cold. @defaultValue 'auto'
     */
    warmPool: z.enum(['off', 'auto', 'always']).default('auto'),
    /**
     * Fork servers kept at once: one serves one run at a time, so the run spec raises it to REPGEN_PARALLEL_RUNS.
     * @defaultValue 4
     */
    warmPoolSize: z.number().int().min(1).max(64).default(4),
    /**
     * Threads a run's numeric libraries may start (`REPGEN_SCRIPT_THREADS`): the run spec sets the CPUs divided by
     * REPGEN_PARALLEL_RUNS when it is not given; unset here (a lone `repgen run`), all the CPUs. @defaultValue undefined
     */
    scriptThreads: z.number().int().min(1).optional(),
    /** Keep the work dir after the run (debugging; `REPGEN_KEEP_WORKDIR=1`). @defaultValue false */
    keepWorkdir: z.boolean().default(false),
  })
  .strict();
export type LocalExecConfig = z.infer<typeof LocalExecConfig>;
export type LocalExecConfigInput = z.input<typeof LocalExecConfig>;

/** Reads the local executor's settings; a bad value is a SetupError naming the variable. */
export function readLocalExecConfig(env: NodeJS.ProcessEnv = process.env): LocalExecConfig {
  return localExecConfigFrom(parseEnv(ExecEnv, env, (name, message) => `invalid ${name}: ${message}`));
}

/** The local executor's settings from the parsed operator environment (src/config/operator-env.ts). */
export function localExecConfigFrom(e: ExecEnv): LocalExecConfig {
  const roPaths = (e.REPGEN_SANDBOX_RO_PATHS ?? '').split(':').filter((p) => p.length > 0);
  const config = LocalExecConfig.safeParse({
    kind: 'local',
    python: e.REPGEN_PYTHON,
    sandbox: e.REPGEN_SANDBOX,
    workRoot: e.REPGEN_WORK_ROOT,
    readOnlyPaths: roPaths,
    keepWorkdir: e.REPGEN_KEEP_WORKDIR === '1' || e.REPGEN_KEEP_WORKDIR === 'true',
    maxFileMb: e.REPGEN_MAX_FILE_MB,
    workMaxMb: e.REPGEN_WORK_MAX_MB,
    scriptThreads: e.REPGEN_SCRIPT_THREADS,
    launcher: e.REPGEN_LAUNCHER,
    sandboxUid: e.REPGEN_SANDBOX_UID,
    warmPool: e.REPGEN_WARM_POOL,
    maxProcesses: e.REPGEN_MAX_PROCESSES,
    maxOpenFiles: e.REPGEN_MAX_OPEN_FILES,
  });
  if (!config.success) {
    const issue = config.error.issues[0];
    throw new SetupError(`invalid local executor setting ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'bad value'}`);
  }
  return config.data;
}
