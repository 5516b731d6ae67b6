// The environment stage's adapters as every entry point uses them: src/env's spec over the checkout and the report,
// the uv builder in the local sandbox. Tests inject their own EnvPorts.
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import { decideVersions, ERA_FRAMEWORKS, newestReleaseBefore, type BaseInterpreter } from '../../../env/decide/decide-versions.js';
import {
  distributionsForImports,
  importedModules,
  loadImportNameTables,
  pypiReleaseDates,
  readCheckoutFiles,
  resolveEnvSpec,
  type EnvBuilder,
  type EnvSpec,
  type ReleaseDates,
} from '../../../env/index.js';
import { projectLayout } from '../../../env/read/project-layout.js';
import { readRepoDeps } from '../../../env/read/read-repo-deps.js';
import { reportSetupEnv } from '../../../env/prove/report-setup-env.js';
import { reportImportStatements, type ImportStatement } from '../../../env/prove/report-imports.js';
import { withKerasBackend } from '../../../env/read/keras-backend.js';
import { reportCode } from '../../../env/read/report-code.js';
import { runSandboxed } from '../../../env/sandboxed/sandboxed-command.js';
import { UvEnvBuilder } from '../../../env/uv-builder.js';
import { parseWheelName, wheelFits } from '../../../env/lock/uv-lock.js';
import { ensureDir } from '../../../exec/sandbox/fs.js';
import { findBinary, probeSandbox } from '../../../exec/sandbox/sandbox.js';
import type { Logger } from '../../../log.js';
import { runGit } from '../../../host/git.js';
import { referencedModules } from '../../../plan/index.js';
import type { EnvSettings } from '../../run-spec.js';
import { DEFAULT_MAX_CANDIDATES, type EnvPorts } from './index.js';

const run = promisify(execFile);

/**
 * The job's EnvPorts, or null with the reason when no env is built: REPGEN_ENV=off, or no uv on this host (then
 * runs use REPGEN_PYTHON as it is, and the result says why).
 */
export async function defaultEnvPorts(settings: EnvSettings, log: Logger): Promise<{ ports: EnvPorts | null; note: string | null }> {
  if (settings.mode === 'off') return { ports: null, note: null };
  const uv = findBinary('uv');
  if (!uv)
    return {
      ports: null,
      note: "uv was not found, so the project's own environment was not built: runs used REPGEN_PYTHON as it is (scripts/ensure-system.sh installs uv)",
    };
  // The sandbox is probed, and the builder made, only when a spec asks for a build (the work root may not exist yet).
  let made: Promise<UvEnvBuilder> | null = null;
  const makeBuilder = async (): Promise<UvEnvBuilder> => {
    await ensureDir(settings.sandbox.workRoot);
    if (settings.kubernetes) {
      // Loaded here, not at the top: the Kubernetes client costs a local run half a second of start (issue 42).
      const { kubernetesEnvBuilder } = await import('./kubernetes-env-build.js');
      const k8s = { config: settings.kubernetes, cacheRoot: settings.cacheRoot, uv, basePython: settings.basePython, log };
      return kubernetesEnvBuilder({ ...k8s, workRoot: settings.sandbox.workRoot });
    }
    const plan = await probeSandbox(settings.sandbox.mode, {
      workRoot: settings.sandbox.workRoot,
      sandboxUid: settings.sandbox.sandboxUid,
    });
    return new UvEnvBuilder({
      cacheRoot: settings.cacheRoot,
      uv,
      basePython: settings.basePython,
      plan,
      extensionTimeoutMs: settings.extensionTimeoutMs,
      // The operator's read-only folders (REPGEN_SANDBOX_RO_PATHS: a venv as REPGEN_PYTHON) are bound in builds as in runs.
      extraReadOnlyPaths: settings.sandbox.readOnlyPaths ?? [],
      // The local sandbox, each step's disk ceiling the operator's (REPGEN_ENV_BUILD_MAX_MB).
      runner: (cmd) => runSandboxed({ ...cmd, diskMb: cmd.diskMb ?? settings.buildMaxMb }),
      keepUvCache: settings.keepUvCache ?? false,
    });
  };
  const builder: EnvBuilder = {
    build: async (spec, opts) => (await (made ??= makeBuilder())).build(spec, opts),
    buildProject: async (spec, env, checkout, signal) => (await (made ??= makeBuilder())).buildProject(spec, env, checkout, signal),
    proveImports: async (env, req, signal) => (await (made ??= makeBuilder())).proveImports(env, req, signal),
  };
  const tables = loadImportNameTables();
  const releaseDates = pypiReleaseDates();
  let base: Promise<BaseInterpreter> | null = null;
  return {
    note: null,
    ports: {
      builder,
      maxCandidates: settings.maxCandidates ?? DEFAULT_MAX_CANDIDATES,
      async proofFor({ issue, repoDir }) {
        const report = `${issue.title}\n\n${issue.body}`;
        const code = reportCode(report);
        const projectPackages = repoDir ? await projectPackagesOf(repoDir) : [];
        const reportModules = [...new Set([...importedModules(code), ...referencedModules(code)].map((m) => m.split('.')[0] as string))];
        const distributionOf = (m: string): string | null => distributionsForImports([m], tables)[0]?.distribution ?? null;
        const checkoutKey = repoDir ? await cleanCommitOf(repoDir) : null;
        const commitDate = repoDir ? await commitDateOf(repoDir, new AbortController().signal) : null;
        // A name the code imports that a release newer than the commit lacks was removed since (era-verdict.ts).
        const era = commitDate ? { era: { commitDate, releases: (name: string) => releaseDates.releases(name) } } : {};
        // Keras imports the backend the report ran on, which its words may name where its code sets none.
        const importsKeras = projectPackages.includes('keras') || reportModules.includes('keras');
        const setupEnv = withKerasBackend(reportSetupEnv(code), issue, importsKeras);
        return {
          projectPackages,
          reportModules,
          setupEnv,
          distributionOf,
          statements: reportImportStatements(code).filter((st) => !reportedImportFailure(report, st)),
          ...(checkoutKey ? { checkoutKey } : {}),
          ...era,
        };
      },
      async specFor({ issue, repoDir }, signal) {
        base ??= baseInterpreter(settings.basePython);
        const b = await base;
        const report = `${issue.title}\n\n${issue.body}`;
        // repgen.yml's `environment.requirements` are read by the names it gives, whatever they are (`ci/deps.txt`).
        const repoFiles = repoDir ? await readCheckoutFiles(repoDir, settings.repoEnvironment?.requirements ?? []) : null;
        const commitDate = repoDir ? await commitDateOf(repoDir, signal) : null;
        const spec = await resolveEnvSpec(
          {
            report,
            repoFiles,
            // The report's code's imports, and modules it reaches through a conventional name it never imports (`tf.`).
            scriptImports: [...importedModules(report), ...referencedModules(reportCode(report))],
            repoConfig: settings.repoEnvironment ? { environment: settings.repoEnvironment } : null,
            userPins: settings.userPins ?? null,
            tables,
            policy: { allowedIndexes: settings.allowedIndexes, findLinks: settings.findLinks, defaultPython: b.minor, gpu: settings.gpu },
            commitDate,
          },
          { releaseDates },
        ).catch((err: unknown) => {
          // The message itself: an Error's own fields are not enumerable, so `{ err }` was logged as `{"err":{}}`.
          log.warn({ error: err instanceof Error ? err.message : String(err) }, 'environment spec failed; runs use the base interpreter');
          throw err;
        });
        if (!spec) return null;
        const era = commitDate ? await frameworkEra(spec, commitDate, releaseDates) : null;
        const decided = decideVersions({
          spec,
          base: b,
          era,
          wheelhouse: await wheelhouse(settings.findLinks, b.minor),
          allowedIndexes: settings.allowedIndexes,
          gpu: settings.gpu,
          checkout: repoDir !== null,
          configured: settings.repoEnvironment !== null || !!settings.userPins,
        });
        if (decided.build) return decided.spec;
        return decided.spec.decisions?.length ? { keep: 'base', decisions: decided.spec.decisions } : null;
      },
    },
  };
}

/**
 * Whether the report shows this import line failing (`No module named 'keras.layers.core'`, `cannot import name 'Dense'`):
 * that failure may be the bug, so the proof never moves the env until the line imports.
 */
function reportedImportFailure(report: string, st: ImportStatement): boolean {
  const missing = [...report.matchAll(/No module named '([\w.]+)'/g)].map((m) => m[1] as string);
  const cannot = [...report.matchAll(/cannot import name '(\w+)'/g)].map((m) => m[1] as string);
  return missing.some((m) => st.module === m || st.module.startsWith(`${m}.`)) || st.names.some((n) => cannot.includes(n));
}

/** The checkout's own top-level packages, as the spec function reads its layout. */
async function projectPackagesOf(repoDir: string): Promise<string[]> {
  const files = await readCheckoutFiles(repoDir).catch(() => null);
  return files ? projectLayout(files.paths, readRepoDeps(files)).packages : [];
}

/** What the base interpreter is and holds: run isolated (-I), the names only read, nothing from a checkout. */
async function baseInterpreter(python: string): Promise<BaseInterpreter> {
  const code =
    'import sys, json, importlib.metadata as m\n' +
    'names = {(d.metadata["Name"] or "").lower().replace("_", "-").replace(".", "-"): d.version for d in m.distributions()}\n' +
    'print(json.dumps({"minor": "%d.%d" % sys.version_info[:2], "installed": names}))';
  try {
    const { stdout } = await run(python, ['-I', '-c', code], { env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' }, timeout: 30_000 });
    const parsed = JSON.parse(stdout) as { minor: string; installed: Record<string, string> };
    return { minor: parsed.minor, installed: new Map(Object.entries(parsed.installed)) };
  } catch {
    return { minor: '3.11', installed: new Map() };
  }
}

/** The checkout's commit when its work tree is clean (a proof there may be kept), else null. */
async function cleanCommitOf(repoDir: string): Promise<string | null> {
  const signal = new AbortController().signal;
  const head = await runGit(['rev-parse', 'HEAD'], { cwd: repoDir, signal, timeoutMs: 30_000 }).catch(() => null);
  const status = await runGit(['status', '--porcelain'], { cwd: repoDir, signal, timeoutMs: 30_000 }).catch(() => null);
  const sha = head?.code === 0 ? head.stdout.trim() : '';
  return /^[0-9a-f]{40,64}$/.test(sha) && status?.code === 0 && status.stdout.trim() === '' ? sha : null;
}

/** The ref's commit date (the era caps of the spec), or null when the checkout is no git work tree. */
async function commitDateOf(repoDir: string, signal: AbortSignal): Promise<string | null> {
  const r = await runGit(['log', '-1', '--format=%cI', 'HEAD'], { cwd: repoDir, signal, timeoutMs: 30_000 }).catch(() => null);
  const date = r && r.code === 0 ? r.stdout.trim() : '';
  return /^\d{4}-\d\d-\d\dT/.test(date) ? date : null;
}

/** The newest release of each framework of the spec at the ref's commit (the era's floor on the base's version). */
async function frameworkEra(
  spec: EnvSpec,
  commitDate: string,
  dates: ReleaseDates,
): Promise<{ commitDate: string; newest: Record<string, string> }> {
  const newest: Record<string, string> = {};
  for (const name of ERA_FRAMEWORKS) {
    if (!spec.requirements.some((r) => r.name === name)) continue;
    const releases = await dates.releases(name).catch(() => null);
    const v = releases ? newestReleaseBefore(releases, commitDate) : null;
    if (v) newest[name] = v;
  }
  return { commitDate, newest };
}

/** The versions of the wheels in the operator's wheel folders that install on the base's Python here. */
async function wheelhouse(dirs: readonly string[], minor: string): Promise<Record<string, string[]>> {
  const arch = process.arch === 'arm64' ? 'aarch64' : 'x86_64';
  const out: Record<string, string[]> = {};
  for (const dir of dirs) {
    for (const file of await readdir(dir).catch(() => [] as string[])) {
      const w = parseWheelName(file);
      if (w && wheelFits(w, minor, arch)) (out[w.name] ??= []).push(w.version);
    }
  }
  return out;
}
