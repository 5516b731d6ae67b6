// The environment stage's adapters as every entry point uses them: src/env's spec over the checkout and the report,
// the uv builder in the local sandbox. Tests inject their own EnvPorts.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  importedModules,
  loadImportNameTables,
  pypiReleaseDates,
  readCheckoutFiles,
  resolveEnvSpec,
  type EnvBuilder,
  type EnvSpec,
  type Requirement,
} from '../../../env/index.js';
import { satisfies } from '../../../env/pep440.js';
import { needsExtensionBuild } from '../../../env/project-build.js';
import { UvEnvBuilder } from '../../../env/uv-builder.js';
import { ensureDir } from '../../../exec/sandbox/fs.js';
import { findBinary, probeSandbox } from '../../../exec/sandbox/sandbox.js';
import type { Logger } from '../../../log.js';
import { runGit } from '../../../host/git.js';
import { referencedModules } from '../../../plan/index.js';
import type { EnvSettings } from '../../run-spec.js';
import type { EnvPorts } from './index.js';

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
    });
  };
  const builder: EnvBuilder = {
    build: async (spec, opts) => (await (made ??= makeBuilder())).build(spec, opts),
    buildProject: async (spec, env, checkout, signal) => (await (made ??= makeBuilder())).buildProject(spec, env, checkout, signal),
  };
  const tables = loadImportNameTables();
  const releaseDates = pypiReleaseDates();
  let base: Promise<BaseInterpreter> | null = null;
  return {
    note: null,
    ports: {
      builder,
      async specFor({ issue, repoDir }, signal) {
        base ??= baseInterpreter(settings.basePython);
        const b = await base;
        const report = `${issue.title}\n\n${issue.body}`;
        const repoFiles = repoDir ? await readCheckoutFiles(repoDir) : null;
        const commitDate = repoDir ? await commitDateOf(repoDir, signal) : null;
        const spec = await resolveEnvSpec(
          {
            report,
            repoFiles,
            // The report's code's imports, and modules it reaches through a conventional name it never imports (`tf.`).
            scriptImports: [...importedModules(report), ...referencedModules(codeBlocks(report))],
            repoConfig: settings.repoEnvironment ? { environment: settings.repoEnvironment } : null,
            tables,
            policy: { allowedIndexes: settings.allowedIndexes, findLinks: settings.findLinks, defaultPython: b.minor, gpu: settings.gpu },
            commitDate,
          },
          { releaseDates },
        ).catch((err: unknown) => {
          log.warn({ err }, 'environment spec failed; runs use the base interpreter');
          return null;
        });
        if (!spec) return null;
        if (!needsBuild(spec, b, repoDir !== null, settings.repoEnvironment !== null)) return null;
        return preferLocalTorch(overlayOnBase(spec, b, repoDir !== null), settings);
      },
    },
  };
}

/** The fenced code blocks of a report, joined (prose never counts as code). */
function codeBlocks(report: string): string {
  return [...report.matchAll(/```[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1] ?? '').join('\n');
}

interface BaseInterpreter {
  minor: string;
  /** Distributions installed in it, PEP 503-normalised, with their versions. */
  installed: Map<string, string>;
}

/**
 * Whether the job needs an env of its own, or the base interpreter (with the checkout on PYTHONPATH) already has
 * it: repgen.yml's `environment:` always builds, and so does a checkout with extensions to compile or a `src/`
 * layout; a requirement the base lacks builds; with a checkout, a
 * repository, script or config requirement whose range the base's version misses builds too (Lightning wants torch
 * >= 2.1). A version only the report names never decides alone: the base is kept, and the comment's version
 * flags say where they differ.
 */
export function needsBuild(spec: EnvSpec, base: BaseInterpreter, checkout: boolean, configured: boolean): boolean {
  // A project with C/C++ extensions is compiled against an env's interpreter, even when the base holds every package.
  if (configured || (checkout && needsExtensionBuild(spec))) return true;
  // A `src/` layout imports only through the env's `.pth`: the checkout's root on PYTHONPATH does not hold the package.
  if (checkout && spec.project?.importRoots.some((r) => r !== (spec.project?.root ?? ''))) return true;
  return spec.requirements.some((r) => {
    if (!base.installed.has(r.name)) return true;
    return checkout && r.source !== 'report' && r.source !== 'era' && !satisfiesBase(base, r);
  });
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

/**
 * The env as an overlay on the base interpreter: everything the base holds that no requirement needs in another
 * version is taken from it (`baseProvides`), so only what is missing is installed. The base's torch and torchvision
 * are a matching pair; the index's torchvision beside a CPU-only torch wheel is not (`operator torchvision::nms does
 * not exist`). What comes from the base is said.
 */
export function overlayOnBase(spec: EnvSpec, base: BaseInterpreter, checkout: boolean): EnvSpec {
  const unmet = new Set(
    spec.requirements.filter((r) => checkout && r.source !== 'report' && r.source !== 'era' && !satisfiesBase(base, r)).map((r) => r.name),
  );
  // The base's torchvision and torchaudio are built for its torch: beside another torch they abort the interpreter on
  // import (torchmetrics and timm import torchvision when they find it). An env with its own torch is a venv of its own.
  if (unmet.has('torch')) {
    const have = base.installed.get('torch');
    const why =
      `the base interpreter's torch${have ? ` ${have}` : ''} is outside what the project needs, so the env is a venv of its own ` +
      "(the base's torchvision, built for that torch, aborts beside another)";
    return { ...spec, notes: [...spec.notes, why] };
  }
  const provided = [...base.installed.keys()].filter((n) => n !== '' && !unmet.has(n)).sort();
  const used = spec.requirements.filter((r) => provided.includes(r.name)).map((r) => `${r.name} ${base.installed.get(r.name)}`);
  return {
    ...spec,
    baseProvides: provided,
    notes: used.length ? [...spec.notes, `taken from the base interpreter: ${used.join(', ')}`] : spec.notes,
  };
}

function satisfiesBase(base: BaseInterpreter, r: Requirement): boolean {
  const have = base.installed.get(r.name);
  return have !== undefined && satisfies(have, r.specifier);
}

/** The ref's commit date (the era caps of the spec), or null when the checkout is no git work tree. */
async function commitDateOf(repoDir: string, signal: AbortSignal): Promise<string | null> {
  const r = await runGit(['log', '-1', '--format=%cI', 'HEAD'], { cwd: repoDir, signal, timeoutMs: 30_000 }).catch(() => null);
  const date = r && r.code === 0 ? r.stdout.trim() : '';
  return /^\d{4}-\d\d-\d\dT/.test(date) ? date : null;
}

/**
 * With no GPU here, torch comes from a local CPU wheel (REPGEN_ENV_FIND_LINKS) when the spec's range admits none of
 * it: PyPI's Linux torch is a CUDA build of several GB. The version asked and the one used are both said.
 */
function preferLocalTorch(spec: EnvSpec, settings: EnvSettings): EnvSpec {
  if (settings.gpu || settings.findLinks.length === 0) return spec;
  const torch = spec.requirements.find((r) => r.name === 'torch');
  if (!torch || !/^==/.test(torch.specifier.trim()) || spec.baseProvides?.includes('torch')) return spec;
  const replaced: Requirement = { ...torch, specifier: '', why: `${torch.why}; the CPU build found locally was used` };
  return {
    ...spec,
    requirements: spec.requirements.map((r) => (r === torch ? replaced : r)),
    notes: [
      ...spec.notes,
      `torch ${torch.specifier.replace(/^==/, '')} was asked (${torch.why}); with no GPU here the CPU build from the local wheel folder was used`,
    ],
  };
}
