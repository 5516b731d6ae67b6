import { cp, lstat, mkdir, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { SandboxPlan } from '../../exec/sandbox/sandbox.js';
import { holdDir, removeEntry, writeNewFile } from '../../host/untrusted-tree.js';
import { newBuildDir, openEnvCache } from './env-cache.js';
import { buildExtensions } from './extension-build.js';
import type { BuildStepRunner } from '../sandboxed/sandboxed-command.js';
import { needsExtensionBuild } from '../read/project-layout.js';
import type { BuiltEnv, EnvSpec, ProjectBuildResult } from '../types.js';
import { sha256 } from '../lock/uv-lock.js';

/**
 * The project's checkout with its C/C++ extensions compiled (detectron2's `_C`), for the runs to mount instead of
 * the checkout itself. The checkout is never written: a copy of it under the env cache is, in the sandbox, with no
 * network and a time ceiling (src/env/build/extension-build.ts). The built copy is keyed by the env (its lock and
 * interpreter), the project's layout and the checkout's files, so a later job of the same commit and env reuses it.
 *
 *   <cacheRoot>/builds/<key>/   a built copy of a checkout (marker `.repgen-build.json`, written last)
 */
export interface ProjectBuildOptions {
  cacheRoot: string;
  plan: SandboxPlan;
  /** Ceiling of the compile (REPGEN_ENV_EXTENSION_MINUTES). @defaultValue 15 min */
  timeoutMs?: number;
  /** Parallel compile jobs (torch's cpp_extension reads MAX_JOBS). @defaultValue 2 */
  jobs?: number;
  /** Where the compile runs (a Job on Kubernetes). @defaultValue the local sandbox (`plan`) */
  runner?: BuildStepRunner;
}

const BUILD_MARKER = '.repgen-build.json';
/** Files a checkout may hold that say nothing about its code, and that the copy leaves out. */
const SKIPPED = new Set(['.git', '.hg', '.svn']);

export async function buildProjectCheckout(
  opts: ProjectBuildOptions,
  spec: EnvSpec,
  env: BuiltEnv,
  checkout: string,
  signal: AbortSignal,
): Promise<ProjectBuildResult> {
  const project = spec.project;
  if (!project || !needsExtensionBuild(spec)) return { ok: true, checkout, built: false, cached: false, buildMs: 0 };
  const started = Date.now();
  const owner = opts.plan.runAs;
  const paths = await openEnvCache(opts.cacheRoot, owner);
  const builds = join(paths.root, 'builds');
  await mkdir(builds, { recursive: true, mode: 0o711 });
  // RepGen's own, and searchable by the sandbox's uid (a run mounts builds/<key>), but not listable nor writable by it.
  const held = await holdDir(builds);
  try {
    await held.handle.chmod(0o711);
  } finally {
    await held.close();
  }
  const key = sha256(JSON.stringify({ env: env.lockHash, python: env.python, project, files: await treeFingerprint(checkout) }));
  const dest = join(builds, key);
  if (await stat(join(dest, BUILD_MARKER)).catch(() => null)) {
    const now = new Date();
    await utimes(join(dest, BUILD_MARKER), now, now).catch(() => undefined);
    return { ok: true, checkout: dest, built: true, cached: true, buildMs: Date.now() - started };
  }
  const work = await newBuildDir(paths, owner);
  try {
    const copy = join(work, 'src');
    // Links are copied as links (never followed): a link out of the tree stays one, and the sandbox decides what it reaches.
    await cp(checkout, copy, { recursive: true, verbatimSymlinks: true, filter: (src) => !SKIPPED.has(basename(src)) });
    const failure = await buildExtensions({
      plan: opts.plan,
      env,
      project,
      checkout: copy,
      ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
      ...(opts.jobs ? { jobs: opts.jobs } : {}),
      ...(opts.runner ? { runner: opts.runner } : {}),
      signal,
    });
    if (failure) return { ok: false, failure };
    return { ok: true, checkout: await publish(copy, dest, key), built: true, cached: false, buildMs: Date.now() - started };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Moves a built copy into place in one step; another job that finished the same key first wins. */
async function publish(copy: string, dest: string, key: string): Promise<string> {
  // The build ran in the copy: a marker it planted (a link to a host file) is removed, never written through.
  const held = await holdDir(copy);
  try {
    await removeEntry(held, BUILD_MARKER);
    await writeNewFile(held, BUILD_MARKER, `${JSON.stringify({ key, builtAt: new Date().toISOString() })}\n`);
  } finally {
    await held.close();
  }
  try {
    await rename(copy, dest);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
  }
  return dest;
}

/**
 * What the checkout's files are, cheaply: every path with its size, mode and modification time (links by their
 * own entry, never followed). A checkout RepGen made at a commit never changes, so its copy is built once; a work
 * tree someone edits gets a new key at the next job.
 */
export async function treeFingerprint(root: string): Promise<string> {
  const lines: string[] = [];
  async function walk(dir: string, rel: string): Promise<void> {
    for (const name of (await readdir(dir)).sort()) {
      if (SKIPPED.has(name) || name === '__pycache__') continue;
      const st = await lstat(join(dir, name));
      const path = rel ? `${rel}/${name}` : name;
      lines.push(`${path}\0${st.size}\0${st.mode}\0${Math.round(st.mtimeMs)}`);
      if (st.isDirectory()) await walk(join(dir, name), path);
    }
  }
  await walk(root, '');
  return sha256(lines.join('\n'));
}
