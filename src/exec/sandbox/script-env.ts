import { dirname } from 'node:path';

/** PATH given to every script: fixed, so a PATH in the parent cannot steer which binaries the script finds. */
export const SAFE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Names that look like credentials. A request should never allowlist one; if it does anyway (a repo config
 * typo, a careless prompt), the variable is dropped and the result says so rather than leaking it.
 */
const SECRET_NAME = /(TOKEN|SECRET|PASSW(OR)?D|API_?KEY|PRIVATE_?KEY|CREDENTIAL|SESSION|COOKIE)/i;

export interface ScriptEnvInput {
  hostEnv: NodeJS.ProcessEnv;
  env: Record<string, string>;
  envAllowlist: string[];
  seed: number | undefined;
  workdir: string;
  outDir: string;
  interpreter: string;
  /** Where temporary files go when /tmp is not private to the sandbox (undefined: leave TMPDIR unset). */
  tmpDir: string | undefined;
  /** Where the script sees the read-only project checkout, if the run has one: first on PYTHONPATH. */
  workspace?: string | undefined;
  /** Threads the run's numeric libraries may start (see {@link frameworkRunEnv}). */
  threads?: number | undefined;
  /** The run's files (see PortableEnvInput.files). */
  files?: readonly { content: string }[] | undefined;
}

/** What a script's environment holds wherever it runs: its locale and Python flags, the seed, the allowlist, the request's own. */
export interface PortableEnvInput {
  hostEnv: NodeJS.ProcessEnv;
  env: Record<string, string>;
  envAllowlist: string[];
  seed?: number | undefined;
  /** Threads a run's numeric libraries may start (its share of the CPUs); undefined sets no limit. */
  threads?: number | undefined;
  home: string;
  tmpDir: string | undefined;
  /** The run's files: TensorFlow's determinism is turned on only for a script that seeds TensorFlow itself. */
  files?: readonly { content: string }[] | undefined;
}

/** A script that sets TensorFlow's global seed (directly, or through Keras' one call for every framework). */
const SEEDS_TENSORFLOW = /\b(?:tf\.random\.set_seed|set_random_seed|enable_op_determinism)\s*\(/;

/**
 * What the frameworks read at start-up to size their thread pools and to make a seeded run repeatable:
 * OpenMP/MKL/OpenBLAS (torch, numpy), TensorFlow's intra- and inter-op pools; with a seed, for a script that seeds
 * TensorFlow, its deterministic ops (with them on, TensorFlow refuses every random op of a script that sets no
 * seed: "Random ops require a seed to be set when determinism is enabled", which the report's own code never
 * showed). JAX has no global seed (its keys are explicit) and no thread variable that every version
 * accepts (an unknown XLA_FLAGS entry aborts), so it is left alone. The request's own environment still wins.
 */
export function frameworkRunEnv(threads: number | undefined, seed: number | undefined, seedsTensorFlow = true): Record<string, string> {
  const env: Record<string, string> = {};
  if (threads !== undefined) {
    const n = String(Math.max(1, Math.floor(threads)));
    for (const name of ['OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'NUMEXPR_NUM_THREADS', 'TF_NUM_INTRAOP_THREADS'])
      env[name] = n;
    env.TF_NUM_INTEROP_THREADS = String(Math.min(2, Math.max(1, Math.floor(threads))));
  }
  if (seed !== undefined && seedsTensorFlow) env.TF_DETERMINISTIC_OPS = '1';
  return env;
}

/**
 * The part of a script's environment both executors share (the local sandbox and the Kubernetes container):
 * nothing of the parent but the allowlisted names, and never one that looks like a credential.
 */
export function buildPortableEnv(input: PortableEnvInput): { env: Record<string, string>; notes: string[] } {
  const notes: string[] = [];
  const env: Record<string, string> = {
    HOME: input.home,
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    PYTHONUNBUFFERED: '1',
    PYTHONDONTWRITEBYTECODE: '1',
    MPLBACKEND: 'Agg',
    GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1',
  };
  if (input.tmpDir !== undefined) env.TMPDIR = input.tmpDir;
  if (input.seed !== undefined) {
    env.PYTHONHASHSEED = String(input.seed);
    env.REPGEN_SEED = String(input.seed);
  }
  const seedsTf = input.files === undefined || input.files.some((f) => SEEDS_TENSORFLOW.test(f.content));
  Object.assign(env, frameworkRunEnv(input.threads, input.seed, seedsTf));
  for (const name of input.envAllowlist) {
    if (SECRET_NAME.test(name)) {
      notes.push(`env ${name} not passed: allowlisted names must not be credentials`);
      continue;
    }
    const value = input.hostEnv[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, input.env);
  return { env, notes };
}

/**
 * The complete environment of a script. Nothing of the parent reaches it but the allowlisted names, so a
 * GITHUB_TOKEN or ANTHROPIC_API_KEY of the RepGen process cannot be read by untrusted code.
 */
export function buildScriptEnv(input: ScriptEnvInput): { env: Record<string, string>; notes: string[] } {
  const interpreterDir = input.interpreter.includes('/') ? dirname(input.interpreter) : undefined;
  // A virtualenv interpreter's bin/ goes first so that `python`/`pip` inside the script resolve to it.
  const path = interpreterDir && !SAFE_PATH.split(':').includes(interpreterDir) ? `${interpreterDir}:${SAFE_PATH}` : SAFE_PATH;
  const { env: portable, notes } = buildPortableEnv({ ...input, home: input.workdir });
  const env: Record<string, string> = { PATH: path, ...portable };
  if (input.workspace !== undefined) {
    // First, so `import pkg` finds the checkout at the ref before any installed copy of the package.
    env.PYTHONPATH = [input.workspace, env.PYTHONPATH].filter((p) => p).join(':');
    env.REPGEN_WORKSPACE = input.workspace;
  }
  // Set last: the output dir is where results are collected from, so a request cannot move it elsewhere.
  env.REPGEN_OUT = input.outDir;
  return { env, notes };
}
