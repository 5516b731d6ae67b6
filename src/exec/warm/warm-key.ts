import type { RunShape } from '../sandbox/run.js';

/** Why this request cannot run warm, or null. */
export function warmRefusal({ req, plan }: RunShape): string | null {
  if (plan.kind !== 'bwrap') return 'no bubblewrap sandbox';
  if (req.setup.length > 0) return 'setup commands run before the interpreter';
  if (!req.entry.endsWith('.py')) return 'the entry is not a Python file';
  return null;
}

/** The request as its server is started: no seed (each run brings its own), so runs of all seeds share it. */
export function serverShape(shape: RunShape): RunShape {
  const { REPGEN_SEED: _seed, ...env } = shape.req.env;
  return { ...shape, req: { ...shape.req, seed: undefined, env } };
}

/** What a server must have been started with to serve this request: everything read when an interpreter starts. */
export function warmKey(shape: RunShape): string {
  const { req, interpreter, launcher } = serverShape(shape);
  const { network, workspace, env, envAllowlist } = req;
  return JSON.stringify([interpreter, launcher, network, workspace ?? null, req.limits.memoryMb, req.limits.cpuSeconds, env, envAllowlist]);
}
