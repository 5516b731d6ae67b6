// Stage 0b, environment: the project's own environment for every run of the job (issue 27). The spec comes from
// the report, the checkout and repgen.yml (src/env's spec function); the builder makes or reuses the env; what
// came out goes to evidence.json, the comment's Environment line, and the executor (its interpreter).
import { classifyProofFailure } from '../../../env/prove/import-failure.js';
import { nextCandidate } from '../../../env/prove/next-candidate.js';
import { withoutEraBound } from '../../../env/prove/era-bound.js';
import { needsExtensionBuild } from '../../../env/read/project-layout.js';
import { normaliseName, projectPthLines } from '../../../env/lock/uv-lock.js';
import { LEFT_OUT } from '../../../env/build/unbuildable.js';
import type {
  BuiltEnv,
  EnvBuilder,
  EnvBuildFailure,
  EnvBuildProgress,
  EnvCandidate,
  EnvSpec,
  ProjectBuildResult,
  VersionDecision,
} from '../../../env/types.js';
import type { IssueInput, ProgressFn } from '../../types.js';
import type { ImportStatement } from '../../../env/prove/report-imports.js';
import type { BuildCheckout } from './built-workspace.js';
import { eraVerdict, type ProofEra } from './era-verdict.js';
import { unprovedStage, withoutExtensionsNote } from './without-extensions.js';
import { fixAdvice, type FixAdviceFor } from './fix-advice.js';

/** What the import proof of the stage's envs imports, and under which setup lines (issue 39, item 3). */
export interface EnvProofInput {
  /** The project's own top-level packages (they are proved whenever there is a checkout). */
  projectPackages: string[];
  /** Top-level modules the report's code imports; each is proved when the env is to provide it. */
  reportModules: string[];
  /** The report's setup lines' variables (src/env/prove/report-setup-env.ts). */
  setupEnv: Record<string, string>;
  /** The distribution a top-level module comes from (`sklearn` → `scikit-learn`). */
  distributionOf: (module: string) => string | null;
  /** The checkout's commit, when it is a clean git work tree: a passed proof there is kept (src/env/prove/prove-imports.ts). */
  checkoutKey?: string;
  /**
   * The ref's commit date and release dates: a name the code imports that a release newer than the commit lacks was
   * removed since, so the next candidate moves that library down to the commit's series, not up (era-verdict.ts).
   */
  era?: ProofEra;
  /** The report's own import lines (src/env/prove/report-imports.ts); those of proved modules are imported as written. */
  statements?: ImportStatement[];
}

/** What the stage needs: the spec function over the checkout, and a builder. */
export interface EnvPorts {
  /**
   * The spec of this job's env, or null when there is nothing to build (no checkout, nothing declared), or `keep: 'base'`
   * with the version decisions when the base interpreter satisfies every source (the evidence still says who decided).
   */
  specFor(
    input: { issue: IssueInput; repoDir: string | null },
    signal: AbortSignal,
  ): Promise<EnvSpec | { keep: 'base'; decisions: VersionDecision[] } | null>;
  builder: EnvBuilder;
  /** What the import proof imports; absent or null: envs are accepted as built. */
  proofFor?(input: { issue: IssueInput; repoDir: string | null }): Promise<EnvProofInput | null>;
  /** Envs the import ladder builds at most (REPGEN_ENV_MAX_CANDIDATES). @defaultValue 3 */
  maxCandidates?: number;
}

type BuiltStage = {
  kind: 'built';
  spec: EnvSpec;
  env: BuiltEnv;
  /**
   * The project has extensions: the build of the job's checkout, and how any other checkout (the fixing ref, a
   * bisection step) is built for its runs. Null: runs mount the checkouts as they are.
   */
  project: { checkout: string; result: ProjectBuildResult & { ok: true }; buildCheckout: BuildCheckout } | null;
  /** The import ladder's candidates, in the order built; [] when no proof ran. */
  candidates?: EnvCandidate[];
  /**
   * The project's extensions did not compile: the env is used with the checkout as it is (`project` null) only when the
   * import proof passes without them (torchvision's `_C` is optional), else this failure is the stage's.
   */
  extensionFailure?: EnvBuildFailure;
};

export type EnvStageResult =
  /** `note`: why there is no env when one was wanted (the spec could not be worked out), said in the outcome. */
  { kind: 'none'; decisions?: VersionDecision[]; note?: string } | BuiltStage | { kind: 'failed'; spec: EnvSpec; failure: EnvBuildFailure };

/**
 * Builds (or reuses) the job's env, and proves it by import: the project and the report's imports must import in it
 * under the report's setup lines. A failed proof is classified (src/env/prove/import-failure.ts) and the next candidate
 * built (src/env/prove/next-candidate.ts), at most `maxCandidates` in all, each cached by its lock. An env no candidate
 * proves is still used (the first, or the one with fewest failures), and every candidate is in the evidence. A
 * builder that throws is a failed build, said as one, never a crash of the run.
 */
export async function prepareEnv(
  input: { issue: IssueInput; repoDir: string | null; checkout: string | null },
  ports: EnvPorts,
  progress: ProgressFn,
  signal: AbortSignal,
): Promise<EnvStageResult> {
  let spec: Awaited<ReturnType<EnvPorts['specFor']>>;
  try {
    spec = await ports.specFor({ issue: input.issue, repoDir: input.repoDir }, signal);
  } catch (err) {
    // Never silent: the runs go on with the base interpreter, and the outcome says why there is no env.
    signal.throwIfAborted();
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]?.slice(0, 300) ?? '';
    return {
      kind: 'none',
      note: `Environment: the project's environment could not be worked out (${message}); the runs used the base interpreter.`,
    };
  }
  if (!spec) return { kind: 'none' };
  if ('keep' in spec) return { kind: 'none', decisions: spec.decisions };
  const first = await buildCandidate(spec, input.checkout, ports, progress, signal);
  const prove = ports.builder.proveImports?.bind(ports.builder);
  if (first.kind !== 'built' || !prove) return unprovedStage(first);
  const proof = await ports.proofFor?.({ issue: input.issue, repoDir: input.repoDir }).catch(() => null);
  if (!proof) return unprovedStage(first);
  const max = Math.max(1, ports.maxCandidates ?? DEFAULT_MAX_CANDIDATES);
  const candidates: EnvCandidate[] = [];
  const tried: Array<{ stage: BuiltStage; failures: number }> = [];
  let stage: BuiltStage = first;
  let change = '';
  for (;;) {
    const modules = modulesToProve(stage, proof, input.checkout !== null);
    await progress('intake', `proving the environment: importing ${modules.join(', ') || 'nothing'}`);
    // The project's code as runs see it: the copy its extensions were compiled in, where there is one (detectron2's `_C`
    // is not in the checkout), and the proof kept for that copy apart from one of the bare checkout.
    const compiled = stage.project?.result ?? null;
    const roots = stage.spec.project && input.checkout ? projectPthLines(stage.spec.project, compiled?.checkout ?? input.checkout) : [];
    const checkoutKey = proof.checkoutKey && compiled?.built ? `${proof.checkoutKey}+extensions` : proof.checkoutKey;
    // The report's lines of those modules, beyond the bare `import x` the modules already are.
    const statements = (proof.statements ?? []).filter(
      (st) => modules.includes(st.module.split('.')[0] as string) && (st.names.length > 0 || st.module.includes('.')),
    );
    const req = {
      modules,
      setupEnv: proof.setupEnv,
      importRoots: roots,
      ...(checkoutKey ? { checkoutKey } : {}),
      ...(statements.length ? { statements } : {}),
    };
    // A proof that cannot run (a runner that cannot bind the checkout) proves nothing and fails nothing.
    const answer = await prove(stage.env, req, signal).catch(() => null);
    signal.throwIfAborted();
    const key = keyVersions(stage.env, stage.spec);
    if (!answer) {
      candidates.push({ lockHash: stage.env.lockHash, change, key, outcome: 'unproved', why: 'the import proof could not run' });
      return unprovedStage({ ...stage, candidates });
    }
    if (answer.failures.length === 0) {
      const lines = statements.length
        ? ` and the report's ${statements.length} import line${statements.length === 1 ? '' : 's'} of them`
        : '';
      const without = stage.extensionFailure ? ', without its compiled extensions (they did not build)' : '';
      const why = modules.length ? `imports ${modules.join(', ')}${lines}${without}` : 'nothing to import';
      candidates.push({ lockHash: stage.env.lockHash, change, key, outcome: 'accepted', why: clip(why) });
      return withoutExtensionsNote({ ...stage, candidates });
    }
    const ctx = { pins: stage.env.pins, projectPackages: proof.projectPackages, distributionOf: proof.distributionOf, free: freeOf(stage) };
    // The commit's era, where it decides (a release newer than the commit removed the name), is more precise than reading
    // an unbounded package as of a newer major than the code (`free`): the era's series first, that rule after.
    const verdictOf = async (f: (typeof answer.failures)[number]): Promise<ReturnType<typeof classifyProofFailure>> => {
      const plain = classifyProofFailure(f, { ...ctx, free: [] });
      const dated = await eraVerdict(plain, f, stage.env.pins, proof.era);
      return dated !== plain ? dated : classifyProofFailure(f, ctx);
    };
    const verdicts = await Promise.all(answer.failures.map(async (f) => ({ f, v: await verdictOf(f) })));
    signal.throwIfAborted();
    const why = verdicts.map(({ f, v }) => `${f.module}: ${v.why}`).join('; ');
    candidates.push({ lockHash: stage.env.lockHash, change, key, outcome: 'rejected', why: clip(why) });
    tried.push({ stage, failures: answer.failures.length });
    const next = candidates.length < max ? verdicts.map(({ v }) => nextCandidate(stage.spec, v)).find((n) => n !== null) : undefined;
    if (!next) return exhausted(tried, candidates);
    await progress('intake', `the environment does not import (${clip(why, 200)}); building the next candidate: ${next.change}`);
    let built = await buildCandidate(next.spec, input.checkout, ports, progress, signal);
    change = next.change;
    // The era's newest release may not be new enough (code of the ref that calls an unreleased API): the bound goes.
    if (built.kind === 'failed' && next.eraBound) {
      built = await buildCandidate(withoutEraBound(next.spec, next.eraBound), input.checkout, ports, progress, signal);
      change = `${next.change.replace(/ \(released by [^)]*\)$/, '')} (no release of the era builds)`;
    }
    if (built.kind !== 'built') {
      const failed = built.kind === 'failed' ? envFailureSummary(built.failure) : 'nothing to build';
      candidates.push({ lockHash: null, change, key: {}, outcome: 'build-failed', why: clip(failed) });
      return exhausted(tried, candidates);
    }
    stage = built;
  }
}

/** Envs the import ladder builds at most by default. */
export const DEFAULT_MAX_CANDIDATES = 3;

const KEY_PACKAGES = ['torch', 'tensorflow', 'jax', 'keras', 'numpy', 'torchvision', 'transformers'];

function keyVersions(env: BuiltEnv, spec: EnvSpec): Record<string, string> {
  const out: Record<string, string> = {};
  // A venv of its own takes nothing from the base, whatever the spec offered it.
  const fromBase = env.fromBase ?? spec.baseProvides ?? [];
  for (const n of KEY_PACKAGES) {
    if (env.pins[n]) out[n] = env.pins[n];
    else if (fromBase.includes(n)) out[n] = 'the base interpreter’s';
  }
  return out;
}

function clip(s: string, n = 1000): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** The project's packages, and the report's imports that the env is to provide (a module of its own is the script's). */
function modulesToProve(stage: BuiltStage, proof: EnvProofInput, checkout: boolean): string[] {
  const provided = new Set([
    ...stage.spec.requirements.map((r) => r.name),
    ...(stage.env.fromBase ?? stage.spec.baseProvides ?? []),
    ...Object.keys(stage.env.pins),
  ]);
  const fromReport = proof.reportModules.filter((m) => {
    const dist = proof.distributionOf(m);
    return provided.has(normaliseName(m)) || (dist !== null && provided.has(normaliseName(dist)));
  });
  const own = checkout ? proof.projectPackages : [];
  return [...new Set([...own, ...fromReport.filter((m) => !own.includes(m))])].filter((m) => /^[A-Za-z_]\w*$/.test(m));
}

/** The env's distributions no requirement bounds: the resolver took the newest it could of each. */
function freeOf(stage: BuiltStage): string[] {
  const bounded = new Set(stage.spec.requirements.filter((r) => r.specifier.trim() !== '').map((r) => normaliseName(r.name)));
  return Object.keys(stage.env.pins).filter((d) => !bounded.has(normaliseName(d)));
}

/**
 * No candidate proved: the one with the fewest failures (the first on a tie) is used, unproved, and said. One whose
 * extensions did not compile is never used unproved: when every candidate is such, the build failure is the stage's.
 */
function exhausted(tried: Array<{ stage: BuiltStage; failures: number }>, candidates: EnvCandidate[]): EnvStageResult {
  const usable = tried.filter((t) => !t.stage.extensionFailure);
  if (!usable.length) return unprovedStage({ ...(tried[0] as (typeof tried)[number]).stage, candidates });
  const best = usable.reduce((a, b) => (b.failures < a.failures ? b : a));
  const note = `no candidate env imported everything the report uses (${candidates.length} tried); the one with the fewest import failures is used`;
  const spec = { ...best.stage.spec, notes: [...best.stage.spec.notes, note] };
  return { ...best.stage, spec, candidates };
}

/** One candidate: the env built (or reused), and the project's extensions compiled when it has any. */
async function buildCandidate(
  spec: EnvSpec,
  checkout: string | null,
  ports: EnvPorts,
  progress: ProgressFn,
  signal: AbortSignal,
): Promise<EnvStageResult> {
  const count = spec.requirements.length;
  await progress('intake', `building the environment (${count} package${count === 1 ? '' : 's'})`);
  const onProgress = (p: EnvBuildProgress): void => void progress('intake', progressLine(p, count));
  try {
    const result = await ports.builder.build(spec, { checkout, signal, onProgress });
    if (!result.ok) return { kind: 'failed', spec, failure: result.failure };
    const env = result.env;
    const compile = ports.builder.buildProject?.bind(ports.builder);
    if (!checkout || !compile || !needsExtensionBuild(spec)) return { kind: 'built', spec, env, project: null };
    const n = spec.project?.extensions.length ?? 0;
    await progress('intake', `building the environment: compiling the project's extensions (${n} source file${n === 1 ? '' : 's'})`);
    const built = await compile(spec, env, checkout, signal);
    // Kept for the import proof to judge (unprovedStage): a project whose Python imports without them runs as it is.
    if (!built.ok) return { kind: 'built', spec, env, project: null, extensionFailure: built.failure };
    const buildCheckout: BuildCheckout = (hostPath, sig) => compile(spec, env, hostPath, sig);
    return { kind: 'built', spec, env, project: { checkout, result: built, buildCheckout } };
  } catch (err) {
    signal.throwIfAborted();
    const message = err instanceof Error ? err.message : String(err);
    return {
      kind: 'failed',
      spec,
      failure: { step: 'install', package: null, message: message.slice(0, 2000), logTail: '', configKey: null },
    };
  }
}

function progressLine(p: EnvBuildProgress, count: number): string {
  const n = p.packages ?? count;
  switch (p.phase) {
    case 'resolving':
      return `building the environment: resolving ${n} package${n === 1 ? '' : 's'}`;
    case 'installing':
      return `building the environment: installing ${n} package${n === 1 ? '' : 's'}`;
    case 'project':
      return 'building the environment: making the project importable';
    case 'reused':
      return `reusing the environment built before (${n} package${n === 1 ? '' : 's'})`;
  }
}

/** The Environment line's entries for a built env: what a maintainer needs to recreate it. Pure. */
export function envRecord(env: BuiltEnv, project: ProjectBuildResult | null = null): Record<string, string> {
  const pins = Object.keys(env.pins).length;
  const how = env.cached ? 'reused' : `built in ${(env.buildMs / 1000).toFixed(1)} s`;
  const ext =
    project?.ok && project.built ? (project.cached ? 'compiled before' : `compiled in ${(project.buildMs / 1000).toFixed(1)} s`) : null;
  return {
    env: `Python ${env.pythonVersion}, ${pins} pinned package${pins === 1 ? '' : 's'}, lock ${env.lockHash.slice(0, 12)}, ${how}`,
    ...(env.pins['torch'] ? { 'torch (env)': env.pins['torch'] } : {}),
    ...(ext ? { extensions: `the project's C/C++ extensions ${ext} (CPU only, in a copy of the checkout)` } : {}),
  };
}

/** Notes for the comment: each substitution, said as what was asked, what was used and why. Pure. */
export function envNotes(env: BuiltEnv, spec: EnvSpec): string[] {
  return [
    ...env.substitutions.map((s) =>
      s.got === LEFT_OUT
        ? `Environment: ${s.name} was left out (${s.why}).`
        : `Environment: ${s.name} ${s.wanted} was asked, ${s.got} was used (${s.why}).`,
    ),
    ...decisionNotes(spec, env),
    ...spec.notes.flatMap((n) => {
      const kept = asTaken(n, env);
      return kept === null ? [] : [`Environment: ${kept}`];
    }),
  ];
}

const TAKEN = 'taken from the base interpreter: ';

/**
 * The decision's "taken from the base interpreter: numpy 1.24.2, torch 1.13.0" as the env was built: a lock that needed
 * its own numpy took nothing from the base (cv2-nan: opencv 5 needs NumPy 2), and the note then said what the env did not
 * do. Only the packages the env took (`fromBase`) are kept; null when none is. Any other note is returned as it is. Pure.
 */
function asTaken(note: string, env: Pick<BuiltEnv, 'fromBase'>): string | null {
  if (!note.startsWith(TAKEN) || !env.fromBase) return note;
  const taken = note
    .slice(TAKEN.length)
    .split(', ')
    .filter((p) => env.fromBase?.includes(p.split(' ')[0] ?? ''));
  return taken.length ? `${TAKEN}${taken.join(', ')}` : null;
}

const DECIDED_BY: Record<VersionDecision['source'], string> = {
  user: 'your pin',
  report: 'the report',
  project: "the project's declared range",
  era: "the commit's era",
  base: 'the base interpreter',
  wheelhouse: "the operator's CPU wheel",
  import: 'imported, newest',
};

/** The comment's Environment entries of the version decision: `torch (decided)` → `==2.7.* (the report)`. Pure. */
export function decisionRecord(spec: Pick<EnvSpec, 'decisions'>, env?: Pick<BuiltEnv, 'pins' | 'fromBase'>): Record<string, string> {
  return Object.fromEntries(
    (spec.decisions ?? []).map((d) => [
      `${d.name} (decided)`,
      asBuilt(d, env) ?? `${d.version ?? (d.specifier || 'any')} (${DECIDED_BY[d.source]})`,
    ]),
  );
}

/**
 * A decision for the base's version that the built env did not keep (its lock needed its own: an overlay's metadata or
 * import check, or a lock taking nothing from the base): what the env has, and why, instead of the base's version.
 */
function asBuilt(d: VersionDecision, env: Pick<BuiltEnv, 'pins' | 'fromBase'> | undefined): string | null {
  if (!env || d.source !== 'base' || !env.fromBase) return null;
  const own = env.pins[d.name];
  if (!own || env.fromBase.includes(d.name)) return null;
  return `${own} (the env's own: the base interpreter's ${d.version ?? 'version'} was decided, but the lock needs its own)`;
}

/** The evidence notes' line of the version decision: each key package, its version and the source that decided it. Pure. */
export function decisionNotes(spec: Pick<EnvSpec, 'decisions'>, env?: Pick<BuiltEnv, 'pins' | 'fromBase'>): string[] {
  const ds = spec.decisions ?? [];
  if (!ds.length) return [];
  const one = (d: VersionDecision): string => {
    const built = asBuilt(d, env);
    if (built) return `${d.name} ${built}`;
    return `${d.name} ${d.version ?? (d.specifier || 'any')} (${DECIDED_BY[d.source]}${d.source === 'user' ? `: ${d.why.slice(0, 80)}` : ''})`;
  };
  return [`Environment: versions decided: ${ds.map(one).join(', ')}.`];
}

/** The one sentence of an env that could not be built: the step, the package, and the setting that fixes it (`where`). Pure. */
export function envFailureSummary(failure: EnvBuildFailure, where: FixAdviceFor = 'repo-config'): string {
  const what = failure.package ? `${failure.step} of ${failure.package}` : `the ${failure.step} step`;
  const fix = failure.configKey ? fixAdvice(failure.configKey, where) : '';
  const first = failure.message.split('\n').find((l) => l.trim()) ?? '';
  return `The project's environment could not be built: ${what} failed (${first.trim().slice(0, 300)}). No script was run.${fix}`;
}
