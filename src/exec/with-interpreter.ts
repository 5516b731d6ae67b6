import type { RunRequestInput, ScriptExecutor } from './types.js';

/** The interpreter every run of one job uses when the request names none: a built environment's. */
export interface InterpreterChoice {
  /** Absolute host path of the interpreter (a venv's `bin/python`). */
  python: string;
  /** What decides what it can import (the env's lock hash): the probe cache and fork servers key on it. */
  key: string;
  /** The built env's venv folder and the cache root it lies under (a cluster run mounts it from there). */
  env?: { dir: string; cacheRoot: string };
}

/**
 * An executor whose runs use `choice.python` unless a request names its own interpreter. The local executor binds
 * the interpreter's prefix (the venv) read-only into the sandbox and keys its fork servers by interpreter, so a
 * run in the project's env never shares a server with a run in the base one.
 */
export function withInterpreter(executor: ScriptExecutor, choice: InterpreterChoice): ScriptExecutor {
  const apply = (req: RunRequestInput): RunRequestInput =>
    req.interpreter ? req : { ...req, interpreter: choice.python, ...(choice.env ? { interpreterEnv: choice.env } : {}) };
  return {
    name: executor.name,
    run: (req: RunRequestInput, signal?: AbortSignal) => executor.run(apply(req), signal),
    ...(executor.close ? { close: () => (executor.close as () => Promise<void>)() } : {}),
    ...(executor.warmUp
      ? { warmUp: (req: RunRequestInput) => (executor.warmUp as (r: RunRequestInput) => Promise<boolean>)(apply(req)) }
      : {}),
    // Only a known inner key is extended: an executor that cannot tell (a cluster image) still cannot.
    ...(executor.environmentKey ? { environmentKey: () => envKey(executor, choice) } : {}),
  };
}

async function envKey(executor: ScriptExecutor, choice: InterpreterChoice): Promise<string | null> {
  const inner = (await executor.environmentKey?.()) ?? null;
  return inner === null ? null : `${inner}\u0000env:${choice.python}\u0000${choice.key}`;
}
