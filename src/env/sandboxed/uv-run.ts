import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxPlan } from '../../exec/sandbox/sandbox.js';
import { SAFE_PATH } from '../../exec/sandbox/script-env.js';
import { runSandboxed, type BuildStepRunner, type CommandOutcome } from './sandboxed-command.js';
import type { EnvCachePaths, EnvSpec } from '../types.js';

const SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/** What every uv command of one build shares. */
export interface UvContext {
  plan: SandboxPlan;
  uv: string;
  basePython: string;
  paths: EnvCachePaths;
  /** Binds the sandbox needs: uv, the base interpreter's prefix, the find-links folders. */
  readOnlyPaths: string[];
  /** The index proxy's socket, started on first use; null where there is no sandbox to confine. */
  proxySocket: () => Promise<string | null>;
  timeoutMs: number;
  /** Memory ceiling of each step's cgroup (sandboxed-command.ts BUILD_MEMORY_BYTES when unset). */
  memoryBytes?: number;
  signal: AbortSignal;
  /** Where each step runs. @defaultValue runSandboxed (the local sandbox) */
  runner?: BuildStepRunner;
}

/**
 * The whole environment of a uv command: no secret of RepGen's (tokens, keys) reaches a setup.py, and no uv or pip
 * config file of the host changes what is resolved (UV_NO_CONFIG). Python downloads are off: the interpreter is
 * the operator's.
 */
export function uvEnvironment(ctx: Pick<UvContext, 'paths'>, buildDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: SAFE_PATH,
    HOME: join(buildDir, 'home'),
    TMPDIR: join(buildDir, 'tmp'),
    LANG: 'C.UTF-8',
    UV_CACHE_DIR: ctx.paths.uvCache,
    UV_NO_CONFIG: '1',
    UV_PYTHON_DOWNLOADS: 'never',
    // Copies, never hard links: a venv shares no inode with the cache a later build's code can write (issue 38).
    UV_LINK_MODE: 'copy',
    UV_NO_PROGRESS: '1',
    UV_COLOR: 'never',
    // The system's CA bundle (a TLS-inspecting proxy's CA lies there); /etc/ssl is in the sandbox's /etc allowlist.
    ...(existsSync(SYSTEM_CA_BUNDLE) ? { SSL_CERT_FILE: SYSTEM_CA_BUNDLE } : {}),
    ...extra,
  };
}

/** `--index-url`, `--extra-index-url`, `--find-links`, `--exclude-newer[-package]` as the spec says. */
export function indexArgs(
  spec: Pick<EnvSpec, 'indexUrl' | 'extraIndexUrls' | 'findLinks' | 'excludeNewer' | 'excludeNewerPackages'>,
  forSync = false,
): string[] {
  const args: string[] = [];
  if (spec.indexUrl) args.push('--index-url', spec.indexUrl);
  for (const url of spec.extraIndexUrls) args.push('--extra-index-url', url);
  for (const dir of spec.findLinks) args.push('--find-links', dir);
  if (spec.excludeNewer && !forSync) args.push('--exclude-newer', spec.excludeNewer);
  if (!forSync)
    for (const [name, date] of Object.entries(spec.excludeNewerPackages ?? {}).sort())
      args.push('--exclude-newer-package', `${name}=${date}`);
  return args;
}

export function runUv(ctx: UvContext, buildDir: string, args: string[], extraEnv: Record<string, string> = {}): Promise<CommandOutcome> {
  return runInBuild(ctx, buildDir, [ctx.uv, ...args], extraEnv, args.includes('--offline'));
}

/** Any command of the build (repgen.yml `environment.build`) under the same sandbox, environment and proxy as uv. */
export async function runInBuild(
  ctx: UvContext,
  buildDir: string,
  argv: string[],
  extraEnv: Record<string, string> = {},
  offline = false,
  limits = true,
): Promise<CommandOutcome> {
  const proxySocket = offline ? null : await ctx.proxySocket();
  return (ctx.runner ?? runSandboxed)({
    offline,
    limits,
    plan: ctx.plan,
    argv,
    env: uvEnvironment(ctx, buildDir, extraEnv),
    writable: ctx.paths.work,
    readOnlyPaths: ctx.readOnlyPaths,
    proxySocket,
    forwarderPython: ctx.basePython,
    timeoutMs: ctx.timeoutMs,
    ...(ctx.memoryBytes ? { memoryBytes: ctx.memoryBytes } : {}),
    signal: ctx.signal,
  });
}
