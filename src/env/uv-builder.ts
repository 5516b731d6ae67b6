import { execFile } from 'node:child_process';
import { realpath, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { unreachableBy, type SandboxPlan } from '../exec/sandbox/sandbox.js';
import { DEFAULT_WORKSPACE_MOUNT } from '../exec/types.js';
import { localWheels } from './lock/index-versions.js';
import {
  dropScopeCache,
  findEnv,
  newBuildDir,
  openBuildScope,
  openEnvCache,
  publishEnv,
  readCachedLock,
  writeCachedLock,
} from './build/env-cache.js';
import { allowedHostsFor, startIndexProxy, type IndexProxy } from './sandboxed/index-proxy.js';
import { buildProjectCheckout } from './build/project-build.js';
import { overlayNumpyCap, ownVenvNeeded } from './prove/overlay-check.js';
import { baseOutsideLockNotes, baseTooOldNotes } from './prove/overlay-notes.js';
import { readBaseInterpreter, shellQuote, underSystemDirs, type PythonInfo } from './build/read-base-interpreter.js';
import { proveImportsIn } from './prove/prove-imports.js';
import { withoutUnbuildable } from './build/unbuildable.js';
import { compileLock, failureFrom } from './lock/uv-compile.js';
import type { BuildStepRunner } from './sandboxed/sandboxed-command.js';
import { logTail } from './lock/uv-errors.js';
import {
  dropUnavailableLocals,
  envKey,
  withoutProvided,
  localPins,
  normaliseName,
  parseLock,
  projectLayoutKey,
  projectPthLines,
  requirementLine,
  sha256,
} from './lock/uv-lock.js';
import { indexArgs, runInBuild, runUv, type UvContext } from './sandboxed/uv-run.js';
import type {
  BuiltEnv,
  EnvBuilder,
  EnvBuildFailure,
  EnvBuildProgress,
  EnvBuildResult,
  EnvSpec,
  ImportProof,
  ImportProofRequest,
  ProjectBuildResult,
  Substitution,
} from './types.js';

const run = promisify(execFile);

/** Where scripts/ensure-system.sh installs uv 0.13.9 (under /usr, which every sandbox binds read-only). */
export const PINNED_UV = '/usr/local/lib/repgen-uv/bin/uv';

export interface UvBuilderOptions {
  /** Folder of the env cache (src/env/build/env-cache.ts lays it out); private to RepGen and the sandbox's uid. */
  cacheRoot: string;
  /** The pinned uv binary ({@link PINNED_UV}). */
  uv: string;
  /** The base interpreter every venv is made from (REPGEN_PYTHON). */
  basePython: string;
  /** The sandbox the builds run in (src/exec/sandbox/sandbox.ts probeSandbox). */
  plan: SandboxPlan;
  /** Where runs mount the checkout; the venv's `.pth` points there. @defaultValue '/workspace' */
  workspaceMount?: string;
  /** Host folders every build binds read-only besides the base's (REPGEN_SANDBOX_RO_PATHS, as runs do). @defaultValue [] */
  extraReadOnlyPaths?: string[];
  /** host:port a build may reach besides the index hosts (a private index's file host). @defaultValue [] */
  extraAllowedHosts?: string[];
  /** Ceiling of one uv command. @defaultValue 20 min */
  timeoutMs?: number;
  /** Memory of one build step's process tree (its cgroup, where the host has them). @defaultValue 8 GiB */
  memoryBytes?: number;
  /** Ceiling of compiling the project's extensions (REPGEN_ENV_EXTENSION_MINUTES). @defaultValue 15 min */
  extensionTimeoutMs?: number;
  /** How long a compiled lock is reused for the same compile input before it is resolved again. @defaultValue 7 days */
  lockMaxAgeMs?: number;
  /** Where the steps run (a Job per step on Kubernetes). @defaultValue the local sandbox (`plan`) */
  runner?: BuildStepRunner;
  /** Keep a scope's uv cache after its venv is published (REPGEN_ENV_KEEP_UV_CACHE). @defaultValue false: dropped (dropScopeCache) */
  keepUvCache?: boolean;
}

/**
 * The EnvBuilder on uv: spec → `uv pip compile` (in the sandbox, network to the index only) → lock → a venv keyed
 * by the lock, the interpreter and the project layout under `<cacheRoot>/envs/`, reused by every later job with
 * the same key without any network. The project is never installed: a `.pth` puts its import roots, as the runs'
 * sandbox mounts the checkout, on sys.path, so one venv serves every job's checkout.
 */
export class UvEnvBuilder implements EnvBuilder {
  private python: Promise<PythonInfo> | null = null;
  private uvVersion: Promise<string> | null = null;

  constructor(private readonly opts: UvBuilderOptions) {}

  async build(
    spec: EnvSpec,
    opts: { checkout: string | null; signal: AbortSignal; onProgress?: (p: EnvBuildProgress) => void },
  ): Promise<EnvBuildResult> {
    const started = Date.now();
    const fail = (failure: EnvBuildFailure): EnvBuildResult => ({ ok: false, failure });
    let py: PythonInfo;
    try {
      py = await this.pythonInfo();
    } catch (err) {
      return fail({
        step: 'python',
        package: null,
        message: `the base interpreter ${this.opts.basePython} does not run`,
        logTail: logTail(String(err)),
        configKey: null,
      });
    }
    const substitutions: Substitution[] = [];
    if (spec.python && spec.python !== py.minor) {
      substitutions.push({
        name: 'python',
        wanted: spec.python,
        got: py.minor,
        why: `no Python ${spec.python} on this machine; its Python ${py.version} was used`,
      });
    }
    const owner = this.opts.plan.runAs;
    const cache = await openEnvCache(this.opts.cacheRoot, owner);
    const roPaths = await this.readOnlyPaths(py, spec.findLinks);
    for (const p of roPaths) {
      const why = await unreachableBy(p, owner, true);
      if (why)
        return fail({ step: 'python', package: null, message: `the sandbox cannot reach ${p}: ${why}`, logTail: '', configKey: null });
    }
    const wheels = await localWheels(spec.findLinks);
    const arch = process.arch === 'arm64' ? 'aarch64' : 'x86_64';
    const project = spec.project;
    const reqs0 = spec.requirements.filter((r) => r.name !== project?.distribution);
    const pins = localPins(wheels, reqs0, py.minor, arch);
    const dropped = dropUnavailableLocals(reqs0, pins);
    substitutions.push(...dropped.substitutions);
    const mount = this.opts.workspaceMount ?? DEFAULT_WORKSPACE_MOUNT;
    const cap = overlayNumpyCap(spec, py.installed);
    const inputKey = sha256(
      JSON.stringify({
        // An overlay's preference for the base's numpy major (resolved with it first).
        ...(cap ? { overlayCap: cap } : {}),
        // A report's pin and an era's cap may be relaxed on a conflict, a repository's never: where a pin comes from is part of the key.
        reqs: dropped.requirements
          .map((r) => `${requirementLine(r)}${r.source === 'report' || r.source === 'era' ? ` @${r.source}` : ''}`)
          .sort(),
        pins,
        index: indexArgs(spec),
        // 2: the cached lock carries uv's `via` annotations (what only the base's packages pull in is left out).
        // 3: the compile's own relaxations changed (an era cap with no installable release moves to the nearest that
        // installs; an overlay resolves with the base's numpy major first): a lock kept under 2 is resolved again.
        // Bump it whenever what `uv pip compile` is asked for, or what is done with its answer, changes for the same spec.
        format: 3,
        python: py.version,
        // What the base holds decides what the lock leaves to it: another base (REPGEN_PYTHON) is another lock.
        base: py.identity,
        uv: await this.uvVersionText(),
      }),
    );
    // uv's cache is shared only by builds that run the same third-party code (issue 38), and so is their folder.
    const paths = await openBuildScope(cache, sha256(JSON.stringify({ inputKey, build: spec.buildCommands })), owner);
    let proxy: Promise<IndexProxy> | null = null;
    const buildDir = await newBuildDir(paths, owner);
    // A venv came of this call (here or in a build it started): the scope's cache is then dropped (dropScopeCache).
    let published = false;
    // Started on the first command that needs the network: a job whose lock and files are cached never opens it.
    const proxySocket = async (): Promise<string | null> => {
      if (this.opts.plan.kind !== 'bwrap') return null;
      const urls = [spec.indexUrl ?? 'https://pypi.org/simple', ...spec.extraIndexUrls, ...spec.findLinks];
      proxy ??= startIndexProxy(join(buildDir, 'proxy.sock'), [...allowedHostsFor(urls), ...(this.opts.extraAllowedHosts ?? [])]);
      return (await proxy).socketPath;
    };
    try {
      const ctx: UvContext = {
        plan: this.opts.plan,
        uv: this.opts.uv,
        basePython: this.opts.basePython,
        paths,
        readOnlyPaths: roPaths,
        proxySocket,
        timeoutMs: this.opts.timeoutMs ?? 20 * 60_000,
        ...(this.opts.memoryBytes ? { memoryBytes: this.opts.memoryBytes } : {}),
        ...(this.opts.runner ? { runner: this.opts.runner } : {}),
        signal: opts.signal,
      };
      let cachedLock = await readCachedLock(paths, inputKey, this.opts.lockMaxAgeMs ?? 7 * 86_400_000);
      const compiledNow = cachedLock === null;
      if (cachedLock === null) {
        opts.onProgress?.({ phase: 'resolving', packages: dropped.requirements.length });
        // An overlay keeps the base's numpy major where the lock can (scikit-learn's newest scipy wants NumPy 2, an older
        // one does not): the base's packages built for it keep working. A constraint, so it adds no numpy to the lock;
        // it gives way before anything else would: a capped lock that had to move a pin or a cap is not taken.
        let compiled = cap ? await compileLock(ctx, buildDir, spec, dropped.requirements, pins, py.minor, [cap]) : null;
        if (!compiled?.ok || compiled.substitutions.length > 0)
          compiled = await compileLock(ctx, buildDir, spec, dropped.requirements, pins, py.minor);
        if (!compiled.ok) return fail(compiled.failure);
        cachedLock = { lock: compiled.lock, via: compiled.via, substitutions: compiled.substitutions };
        await writeCachedLock(paths, inputKey, cachedLock);
      }
      // An overlay takes what the base interpreter provides from it: only the rest of the lock is installed, and what an
      // earlier build of this lock found too old in the base (`keep`) is installed at the lock's version instead.
      const keep = new Set((cachedLock.keep ?? []).map(normaliseName));
      // A lock that needs its own torch, or its own numpy of another major, takes nothing from the base: the base's
      // torchvision, built for the base's torch, hangs or aborts beside another, and its pandas or torch built for NumPy 1
      // fail beside NumPy 2 (as a project that declares another torch gets a venv of its own).
      const own = ownVenvNeeded([...keep], parseLock(cachedLock.lock), py.installed);
      const provided = own ? [] : (spec.baseProvides ?? []).filter((p) => !keep.has(normaliseName(p)));
      const lock = withoutProvided(cachedLock.lock, provided, cachedLock.via);
      substitutions.push(...cachedLock.substitutions);
      const pinsOut = parseLock(lock);
      // `overlay-checked-2`: an overlay checked by the lock's metadata as well as by import (an older one was not).
      const layout = `${projectLayoutKey(project, mount)}\0${JSON.stringify(spec.buildCommands)}${provided.length ? '\0overlay-checked-2' : ''}`;
      // The base interpreter's identity, not only its version: a venv with torch 2.13 as REPGEN_PYTHON is not Debian's.
      const key = envKey(lock, `${py.version}\0${py.identity}`, layout);
      const result = (dir: string, cached: boolean): EnvBuildResult => ({
        ok: true,
        env: { ...this.builtEnv(dir, py, lock, pinsOut, substitutions, cached, Date.now() - started), fromBase: provided },
      });
      const existing = await findEnv(paths, key);
      if (existing) {
        opts.onProgress?.({ phase: 'reused', packages: Object.keys(pinsOut).length });
        return result(existing, true);
      }
      opts.onProgress?.({ phase: 'installing', packages: Object.keys(pinsOut).length });
      // Installed as an overlay only when it takes something from the base (see `provided`).
      const installed = await this.install(ctx, buildDir, { ...spec, baseProvides: provided }, lock, py, !compiledNow);
      if (installed) {
        const without = withoutUnbuildable(spec, installed);
        if (!without) return fail(installed);
        const rest = await this.build(without.spec, opts);
        published = rest.ok;
        return rest.ok ? { ok: true, env: { ...rest.env, substitutions: [...rest.env.substitutions, without.left] } } : rest;
      }
      const venv = join(buildDir, 'venv');
      // An overlay on a base that is a venv: `--system-site-packages` shows the system's packages, not the venv's; a `.pth`
      // puts the base venv's site-packages after the env's own, ahead of the system's.
      if (provided.length && py.venvSite.length) {
        const site = join(venv, 'lib', `python${py.minor}`, 'site-packages');
        await writeFile(join(site, '_repgen_base_venv.pth'), `${py.venvSite.join('\n')}\n`, { mode: 0o644 });
      }
      if (provided.length) {
        const shadow =
          (await baseOutsideLockNotes(venv, py, cachedLock.lock, provided)) ??
          (await baseTooOldNotes(ctx, buildDir, venv, spec, cachedLock.lock, pinsOut, provided));
        if (shadow) {
          const kept = [...keep, ...shadow.names];
          const alone = ownVenvNeeded(kept, parseLock(cachedLock.lock), py.installed);
          const why = "; the base's packages built for its own fail beside another, so the env takes nothing from the base";
          const notes = shadow.notes.map((n) =>
            alone && (n.name === 'numpy' || n.name === 'torch') ? { ...n, why: `${n.why}${why}` } : n,
          );
          await writeCachedLock(paths, inputKey, { ...cachedLock, keep: kept, substitutions: [...cachedLock.substitutions, ...notes] });
          // The same scope, built again while this build's folder still stands: that build keeps the cache, this one drops it.
          const again = await this.build(spec, opts);
          published = again.ok;
          return again;
        }
      }
      if (project) {
        opts.onProgress?.({ phase: 'project' });
        const site = join(venv, 'lib', `python${py.minor}`, 'site-packages');
        await writeFile(join(site, '_repgen_project.pth'), `${projectPthLines(project, mount).join('\n')}\n`, { mode: 0o644 });
      }
      const dir = await publishEnv(paths, key, venv, {
        lockHash: sha256(lock),
        python: py.version,
        project,
        builtAt: new Date().toISOString(),
      });
      published = true;
      return result(dir, false);
    } finally {
      if (proxy) await (await (proxy as Promise<IndexProxy>).catch(() => null))?.close();
      await rm(buildDir, { recursive: true, force: true });
      if (published && !this.opts.keepUvCache) await dropScopeCache(paths, buildDir).catch(() => false);
    }
  }

  /** The env's import proof (src/env/prove/prove-imports.ts), in the build sandbox with the base interpreter's binds. */
  async proveImports(env: BuiltEnv, req: ImportProofRequest, signal: AbortSignal): Promise<ImportProof> {
    return proveImportsIn({ ...this.opts, readOnlyPaths: await this.readOnlyPaths(await this.pythonInfo(), []) }, env, req, signal);
  }

  /** The checkout with the project's extensions compiled in a copy under the cache (src/env/build/project-build.ts). */
  buildProject(spec: EnvSpec, env: BuiltEnv, checkout: string, signal: AbortSignal): Promise<ProjectBuildResult> {
    const { cacheRoot, plan, extensionTimeoutMs, runner } = this.opts;
    return buildProjectCheckout(
      { cacheRoot, plan, ...(extensionTimeoutMs ? { timeoutMs: extensionTimeoutMs } : {}), ...(runner ? { runner } : {}) },
      spec,
      env,
      checkout,
      signal,
    );
  }

  /** `uv venv` + `uv pip sync`, offline first (uv's cache holds every file a lock seen before needs). */
  private async install(
    ctx: UvContext,
    buildDir: string,
    spec: EnvSpec,
    lock: string,
    py: PythonInfo,
    tryOffline: boolean,
  ): Promise<EnvBuildFailure | null> {
    const venv = join(buildDir, 'venv');
    const lockFile = join(buildDir, 'lock.txt');
    await writeFile(lockFile, lock);
    const overlay = (spec.baseProvides ?? []).length > 0 ? ['--system-site-packages'] : [];
    const venvArgs = ['venv', '--relocatable', ...overlay, '--python', this.opts.basePython, '--no-config', '--offline', '--quiet', venv];
    // A fresh venv: installing the lock without its dependencies is a sync; an overlay must not touch the base's packages.
    const syncArgs = overlay.length
      ? ['pip', 'install', '--no-deps', '-r', lockFile, '--python', join(venv, 'bin', 'python'), '--quiet', ...indexArgs(spec, true)]
      : ['pip', 'sync', lockFile, '--python', join(venv, 'bin', 'python'), '--quiet', ...indexArgs(spec, true)];
    // One sandbox for both. A lock seen before has every file in uv's cache: no network at all. A lock just
    // compiled has only metadata there: straight to the index.
    // Offline, nothing is built either (`--no-build`): that step only links files, so it needs no cgroup (~20 ms).
    const script = [venvArgs, [...syncArgs, ...(tryOffline ? ['--offline', '--no-build'] : [])]]
      .map((a) => [ctx.uv, ...a].map(shellQuote).join(' '))
      .join(' && ');
    let out = await runInBuild(ctx, buildDir, ['/bin/sh', '-c', script], {}, tryOffline, !tryOffline);
    if (out.code !== 0 && !out.timedOut && !out.aborted) {
      if (!(await stat(join(venv, 'bin', 'python')).catch(() => null)))
        return { ...failureFrom('python', out.stderr, `making a Python ${py.minor} venv`), configKey: 'environment.python' };
      if (tryOffline) out = await runUv(ctx, buildDir, syncArgs);
    }
    if (out.timedOut || out.aborted)
      return {
        ...failureFrom('timeout', out.stderr, 'installing the lock'),
        message: out.aborted ? 'the build was cancelled' : 'installing the lock timed out',
      };
    if (out.code !== 0) {
      const f = failureFrom('install', out.stderr, 'installing the lock');
      return f.message.includes('download') ? { ...f, step: 'download' } : f;
    }
    for (const command of spec.buildCommands) {
      const env = { PATH: `${join(venv, 'bin')}:/usr/local/bin:/usr/bin:/bin`, VIRTUAL_ENV: venv };
      const res = await runInBuild(ctx, buildDir, ['/bin/sh', '-c', command], env);
      if (res.code !== 0) {
        return {
          step: 'build-command',
          package: null,
          message: `environment.build command failed: ${command}`.slice(0, 2000),
          logTail: logTail(res.stderr + res.stdout),
          configKey: 'environment.build',
        };
      }
    }
    return null;
  }

  private builtEnv(
    dir: string,
    py: PythonInfo,
    lock: string,
    pins: Record<string, string>,
    substitutions: Substitution[],
    cached: boolean,
    buildMs: number,
  ): BuiltEnv {
    return {
      python: join(dir, 'bin', 'python'),
      readOnlyPaths: [dir, ...[py.prefix, py.venvPrefix].filter((p, i, all) => !underSystemDirs(p) && all.indexOf(p) === i)],
      pythonVersion: py.version,
      lockHash: sha256(lock),
      lock,
      pins,
      substitutions,
      cached,
      buildMs,
    };
  }

  private async readOnlyPaths(py: PythonInfo, findLinks: string[]): Promise<string[]> {
    const uvDir = dirname(await realpath(this.opts.uv));
    const out = [uvDir, ...findLinks.filter((f) => f.startsWith('/')), ...(this.opts.extraReadOnlyPaths ?? [])];
    // The base interpreter's own folders: a venv outside /usr as REPGEN_PYTHON is run (`uv venv --python`) in the build.
    for (const p of [py.prefix, py.venvPrefix]) if (!underSystemDirs(p)) out.push(p);
    return [...new Set(out)];
  }

  private pythonInfo(): Promise<PythonInfo> {
    this.python ??= readBaseInterpreter(this.opts.basePython);
    this.python.catch(() => (this.python = null));
    return this.python;
  }

  private uvVersionText(): Promise<string> {
    this.uvVersion ??= run(this.opts.uv, ['--version']).then(({ stdout }) => stdout.trim());
    return this.uvVersion;
  }
}
