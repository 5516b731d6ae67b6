import { mkdtemp, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { handWorkdirToSandbox, type SandboxPlan } from '../../exec/sandbox/sandbox.js';
import { SAFE_PATH } from '../../exec/sandbox/script-env.js';
import { runSandboxed, type BuildStepRunner } from '../sandboxed/sandboxed-command.js';
import type { BuiltEnv, EnvBuildFailure, ProjectInstall } from '../types.js';
import { compileLogTail } from '../lock/uv-errors.js';

export interface ExtensionBuildInput {
  plan: SandboxPlan;
  env: BuiltEnv;
  project: ProjectInstall;
  /**
   * A checkout this job owns and may change (a private copy, never a user's work tree or a shared cache entry): the
   * build writes the compiled modules next to their sources (`--inplace`) and, when RepGen is root, the folder is
   * handed to the sandbox's uid first.
   */
  checkout: string;
  /** @defaultValue 15 min */
  timeoutMs?: number;
  /** Parallel compile jobs (torch's cpp_extension reads MAX_JOBS). @defaultValue 2 */
  jobs?: number;
  /** Where the compile runs (a Job on Kubernetes). @defaultValue runSandboxed (the local sandbox) */
  runner?: BuildStepRunner;
  signal: AbortSignal;
}

/**
 * Builds the project's C/C++ extensions (detectron2's `_C`) in place: `python setup.py build_ext --inplace` with the
 * env's interpreter, in the sandbox, with no network, the checkout the only folder it writes, a cleared environment
 * (no secret, no FORCE_CUDA: a CPU build) and a time ceiling. Null when it worked (or there is nothing to build), else the failure to report.
 */
export async function buildExtensions(input: ExtensionBuildInput): Promise<EnvBuildFailure | null> {
  const { project, checkout, plan, env } = input;
  if (project.mode !== 'build' || project.extensions.length === 0) return null;
  const dir = project.root === '' ? checkout : join(checkout, project.root);
  if (!(await stat(join(dir, 'setup.py')).catch(() => null)))
    return {
      step: 'extensions',
      package: project.distribution,
      message:
        `the project compiles extensions (${project.extensions.slice(0, 3).join(', ')}) with a build backend that has no in-place build; ` +
        'RepGen builds extensions in place only through setup.py',
      logTail: '',
      configKey: 'environment.build',
    };
  await handWorkdirToSandbox(plan, checkout);
  const tmp = await mkdtemp(join(checkout, '.repgen-build-'));
  await handWorkdirToSandbox(plan, tmp);
  try {
    const out = await (input.runner ?? runSandboxed)({
      plan,
      argv: ['/bin/sh', '-c', 'cd "$1" && exec "$0" setup.py build_ext --inplace', env.python, dir],
      env: {
        PATH: SAFE_PATH,
        HOME: tmp,
        TMPDIR: tmp,
        LANG: 'C.UTF-8',
        MAX_JOBS: String(input.jobs ?? 2),
        // CPU only: no GPU is visible, and nothing (FORCE_CUDA, TORCH_CUDA_ARCH_LIST) asks for CUDA kernels, so
        // torch's cpp_extension and setup.py files that test `torch.cuda.is_available()` build the CPU extension.
        CUDA_VISIBLE_DEVICES: '',
        PYTHONDONTWRITEBYTECODE: '1',
      },
      writable: checkout,
      readOnlyPaths: env.readOnlyPaths,
      proxySocket: null,
      offline: true,
      forwarderPython: env.python,
      timeoutMs: input.timeoutMs ?? 15 * 60_000,
      signal: input.signal,
    });
    if (out.code === 0) return null;
    const timedOut = out.timedOut || out.aborted;
    const log = `${out.stdout}\n${out.stderr}`;
    const hint = timedOut ? null : missingHeadersHint(log);
    return {
      step: timedOut ? 'timeout' : 'extensions',
      package: project.distribution,
      message: timedOut
        ? `building the project's extensions (${project.extensions.slice(0, 3).join(', ')}) passed its time ceiling`
        : `building the project's extensions (${project.extensions.slice(0, 3).join(', ')}) failed${hint ? `: ${hint}` : ''}`,
      logTail: compileLogTail(log),
      configKey: 'environment.build',
    };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Header folders that come with the machine, not the project: where Debian puts each (its torch ships none itself). */
const SYSTEM_HEADERS: Array<{ re: RegExp; what: string; debian: string }> = [
  { re: /fatal error: (?:torch|ATen|c10|caffe2)\/[^:]*: No such file or directory/, what: "torch's C++ headers", debian: 'libtorch-dev' },
  { re: /fatal error: pybind11\/[^:]*: No such file or directory/, what: "pybind11's headers", debian: 'pybind11-dev' },
  { re: /fatal error: Python\.h: No such file or directory/, what: "Python's headers", debian: 'python3-dev' },
];

/**
 * What the machine lacks when a compile stops at a header of the interpreter's torch, pybind11 or Python (Debian's
 * python3-torch links its include folder to libtorch-dev's, which it does not pull in): an operator's fix, said as
 * one, rather than a fault of the project's. Null when the log names none. Pure.
 */
export function missingHeadersHint(log: string): string | null {
  const missing = SYSTEM_HEADERS.filter((h) => h.re.test(log));
  if (missing.length === 0) return null;
  return (
    `the interpreter lacks ${missing.map((h) => h.what).join(' and ')} (a machine package, not the project's: ` +
    `on Debian, apt-get install ${missing.map((h) => h.debian).join(' ')})`
  );
}
