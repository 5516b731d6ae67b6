import { z } from 'zod';

/**
 * The environment a run needs, and what building it gave. The contract between the pure spec function
 * (`resolveEnvSpec`: report ∧ repository ∧ script imports ∧ repgen.yml ∧ operator policy → EnvSpec) and the
 * builder (`EnvBuilder.build(spec) → BuiltEnv | EnvBuildFailure`). Nothing downstream re-reads a requirement
 * file or the report's version lines: they read this.
 */

/** Where a requirement came from; every requirement says so, so the comment can cite it. */

/** Frameworks whose era (the newest release when the commit was made) sets a floor on the base's version (decide/decide-versions.ts). */
export const ERA_FRAMEWORKS = ['torch', 'tensorflow', 'jax'] as const;

/** One import line of a report's code, as data (src/env/prove/report-imports.ts): `from keras.layers import Dense`. */
export interface ImportStatement {
  module: string;
  names: string[];
}

export const RequirementSource = z.enum(['report', 'repo', 'script', 'config', 'era', 'policy']);
export type RequirementSource = z.infer<typeof RequirementSource>;

/** One distribution the env must hold. */
export const Requirement = z
  .object({
    /** Distribution name, PEP 503-normalised (`scikit-learn`, `pillow`). */
    name: z.string().regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/),
    /** PEP 440 specifier set, '' for any (`==2.1.0`, `>=1.0,<2`, `<1.24`). */
    specifier: z.string().max(200),
    /** Extras (`torch[opt]` → `['opt']`). */
    extras: z.array(z.string()).default([]),
    source: RequirementSource,
    /** The evidence, quoted: the report line, the file and its line, the import, the config key. */
    why: z.string().max(500),
  })
  .strict();
export type Requirement = z.infer<typeof Requirement>;

/** How the project at the ref is made importable in the env. */
export const ProjectInstall = z
  .object({
    /** Folder of the checkout that holds pyproject.toml / setup.py, relative ('' = the root). */
    root: z.string(),
    /** Folders put on sys.path (a `.pth`): `['src']` for a src/ layout, `['']` for a flat one. */
    importRoots: z.array(z.string()),
    /** `pth`: the import roots on sys.path, no build; `build`: the project built and installed (native extensions). */
    mode: z.enum(['pth', 'build']),
    /** The project's distribution name when it declares one (so the lock never pulls it from the index). */
    distribution: z.string().nullable(),
    /** C/C++/CUDA extension sources found (`setup.py` ext_modules, `.cpp`/`.cu` under the package). */
    extensions: z.array(z.string()),
  })
  .strict();
export type ProjectInstall = z.infer<typeof ProjectInstall>;

/**
 * Which source decided a key package's version, from the world inward: the user's explicit pin (`--with`,
 * repgen.yml `environment.packages`), the report's stated version, the project's declared range at the commit, the
 * commit's era, the base interpreter (kept because it satisfies all of these), the operator's CPU wheelhouse, or
 * nothing (an import with no version: the newest).
 */
export const DecisionSource = z.enum(['user', 'report', 'project', 'era', 'base', 'wheelhouse', 'import']);
export type DecisionSource = z.infer<typeof DecisionSource>;

/** One key package's version decision, as evidence.json and the comment state it. */
export const VersionDecision = z
  .object({
    name: z.string(),
    /** What the env asks for (`==2.7.*`, `>=1.4`, '' for any). */
    specifier: z.string().max(200),
    /** The exact version when the decision names one (the base's, the wheelhouse's), else null: the lock's. */
    version: z.string().nullable(),
    source: DecisionSource,
    why: z.string().max(500),
  })
  .strict();
export type VersionDecision = z.infer<typeof VersionDecision>;

export const EnvSpec = z
  .object({
    /** Python minor version wanted (`3.11`), null: the base interpreter's. */
    python: z
      .string()
      .regex(/^3\.\d{1,2}$/)
      .nullable(),
    pythonWhy: z.string().max(500).nullable(),
    requirements: z.array(Requirement),
    project: ProjectInstall.nullable(),
    /** Index to resolve from (the operator's allowlist decides; null: uv's default, PyPI). */
    indexUrl: z.string().url().nullable(),
    extraIndexUrls: z.array(z.string().url()),
    /** Local wheel folders (the machine's torch CPU wheel lies in one). */
    findLinks: z.array(z.string()),
    /** Resolve as of this date (uv `--exclude-newer`) when the report names no versions: the ref's era. */
    excludeNewer: z.string().datetime({ offset: true }).nullable(),
    /** The ref's commit date, when known: the import ladder bounds a package it moves up by it. */
    eraDate: z.string().datetime({ offset: true }).nullable().optional(),
    /** Packages resolved as of a date each (uv `--exclude-newer-package`): a ladder's move up, bounded by the era. */
    excludeNewerPackages: z.record(z.string(), z.string().datetime({ offset: true })).optional(),
    /** repgen.yml `environment.build`: shell commands run in the env with network to the index only. */
    buildCommands: z.array(z.string().max(1000)).max(20),
    /** Facts the spec function noticed that the comment should state (`CUDA build asked, CPU used`). */
    notes: z.array(z.string().max(500)),
    /**
     * Distributions the base interpreter already holds that the env takes from it instead of the index (an overlay:
     * a venv that sees the base's site-packages, with only the rest installed). Where the index cannot give a build
     * that works here (PyPI's torchvision beside a CPU-only torch), the base's does. Absent or []: a venv of its own.
     */
    baseProvides: z.array(z.string()).optional(),
    /** Each key package's version and the source that decided it (src/env/decide/decide-versions.ts). */
    decisions: z.array(VersionDecision).optional(),
    /**
     * A run with no GPU: the torch versions of the operator's CPU wheel folders. The import ladder moves torch only to one
     * of them, never to the index's CUDA build (several GB). Absent: a GPU run, or a spec the decision did not see.
     */
    cpuTorchWheels: z.array(z.string().max(100)).max(500).optional(),
    /** With `cpuTorchWheels`: PyTorch's CPU index when the operator allows it, where a move no wheel fits resolves. */
    cpuTorchIndex: z.string().url().optional(),
  })
  .strict();
export type EnvSpec = z.infer<typeof EnvSpec>;

/** A requirement the builder could not honour exactly, and what it took instead. */
export const Substitution = z
  .object({
    name: z.string(),
    wanted: z.string(),
    got: z.string(),
    why: z.string().max(500),
  })
  .strict();
export type Substitution = z.infer<typeof Substitution>;

/** A built (or reused) env: what every run of the job uses. */
export const BuiltEnv = z
  .object({
    /** Interpreter inside the venv (an absolute host path); runs and fork servers use it. */
    python: z.string(),
    /** Folders the sandbox must bind read-only for that interpreter to work (the venv, its base Python). */
    readOnlyPaths: z.array(z.string()),
    pythonVersion: z.string(),
    /** sha256 of the lock text: the cache key, and the fork servers' key. */
    lockHash: z.string().regex(/^[0-9a-f]{64}$/),
    /** `name==version` lines, as written to the repro PR's requirements-repro.txt. */
    lock: z.string(),
    pins: z.record(z.string(), z.string()),
    substitutions: z.array(Substitution),
    cached: z.boolean(),
    buildMs: z.number().int().min(0),
    /**
     * What the env takes from the base interpreter (an overlay); [] for a venv of its own, which may differ from the
     * spec's `baseProvides` (a lock that needs its own torch, or NumPy 2). Absent: as the spec says.
     */
    fromBase: z.array(z.string()).optional(),
  })
  .strict();
export type BuiltEnv = z.infer<typeof BuiltEnv>;

/** One env the import ladder built and tried (issue 39, item 3): the evidence lists every one and why it was rejected. */
export const EnvCandidate = z
  .object({
    lockHash: z.string().nullable(),
    /** What this candidate changed from the one before (`torch >2.0.1`); '' for the first, the decision's own. */
    change: z.string().max(300),
    /** The versions of the frameworks and numpy in it (`torch` → `2.1.0`). */
    key: z.record(z.string(), z.string()),
    /** accepted: proved by import; unproved: kept without a proof (none could run, or the ladder ran out); rejected. */
    outcome: z.enum(['accepted', 'rejected', 'unproved', 'build-failed']),
    why: z.string().max(1000),
  })
  .strict();
export type EnvCandidate = z.infer<typeof EnvCandidate>;

/** Why an env could not be built: its own exit status, never "no model" or needs-info. */
export const EnvBuildFailure = z
  .object({
    step: z.enum(['resolve', 'download', 'install', 'project', 'extensions', 'build-command', 'python', 'timeout']),
    /** The package that failed, when one did. */
    package: z.string().nullable(),
    message: z.string().max(2000),
    logTail: z.string().max(8000),
    /** The repgen.yml key that fixes it (`environment.python`, `environment.packages`). */
    configKey: z.string().nullable(),
  })
  .strict();
export type EnvBuildFailure = z.infer<typeof EnvBuildFailure>;

export type EnvBuildResult = { ok: true; env: BuiltEnv } | { ok: false; failure: EnvBuildFailure };

/** The project's checkout made importable with its extensions compiled (src/env/build/project-build.ts). */
export type ProjectBuildResult =
  | {
      ok: true;
      /** The folder runs mount as the workspace: the built copy, or the checkout itself when nothing is compiled. */
      checkout: string;
      /** Whether extensions were compiled (now or by an earlier job). */
      built: boolean;
      cached: boolean;
      buildMs: number;
    }
  | { ok: false; failure: EnvBuildFailure };

/** Progress of a build, for the CLI line and the issue comment ("building the environment (N packages)"). */
export interface EnvBuildProgress {
  phase: 'resolving' | 'installing' | 'project' | 'reused';
  packages?: number;
}

/** The port: a builder that turns a spec into an env, reusing a cached one when the lock matches. */
export interface EnvBuilder {
  build(
    spec: EnvSpec,
    opts: { checkout: string | null; signal: AbortSignal; onProgress?: (p: EnvBuildProgress) => void },
  ): Promise<EnvBuildResult>;
  /**
   * The checkout with the project's C/C++ extensions compiled, for runs to mount in its place (absent: a builder that
   * cannot compile; the checkout is then used as it is).
   */
  buildProject?(spec: EnvSpec, env: BuiltEnv, checkout: string, signal: AbortSignal): Promise<ProjectBuildResult>;
  /**
   * Imports modules in a built env (src/env/prove/prove-imports.ts): the import proof of the env stage's ladder. Absent: a
   * builder that cannot, whose envs are accepted unproved (and said so).
   */
  proveImports?(env: BuiltEnv, req: ImportProofRequest, signal: AbortSignal): Promise<ImportProof>;
}

/** What one import proof imports, and how (src/env/prove/prove-imports.ts). */
export interface ImportProofRequest {
  /** Top-level modules: the project's packages and the report's imports that the env provides. */
  modules: string[];
  /** The report's setup lines' variables, set for the interpreter as its script sets them before its imports. */
  setupEnv: Record<string, string>;
  /** Host folders put first on sys.path (the checkout's import roots), as runs see the mounted checkout. */
  importRoots: string[];
  /** The checkout's commit: a passed proof of the same env, modules and commit is not run again. Absent: never kept. */
  checkoutKey?: string;
  /**
   * The report's own import lines of those modules, as data (src/env/prove/report-imports.ts): `from keras.layers.core
   * import Dense` fails on Keras 3 where `import keras` does not. @defaultValue []
   */
  statements?: ImportStatement[];
}

/** One module that did not import in a candidate env, as the proof reports it. */
export interface ProofFailure {
  module: string;
  /** `Type: message`, the exception it chained from, and what the import wrote to stderr. */
  error: string;
  /** Distributions that own the modules the error names (`packages_distributions()`), with their versions. */
  versions: Record<string, string>;
}

/** The proof's answer: the modules that failed (empty: proved), or null when the proof itself could not run. */
export type ImportProof = { failures: ProofFailure[] } | null;

/** The env cache's folders (src/env/build/env-cache.ts lays them out and opens them). */
export interface EnvCachePaths {
  root: string;
  /** The folder a build writes: `<root>/work`, or a scope's folder under it (openBuildScope). */
  work: string;
  /** uv's cache: a scope's, under `work`. */
  uvCache: string;
  envs: string;
  locks: string;
}
