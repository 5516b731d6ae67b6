// Stage 0b, environment: the project's own environment for every run of the job (issue 27). The spec comes from
// the report, the checkout and repgen.yml (src/env's spec function); the builder makes or reuses the env; what
// came out goes to evidence.json, the comment's Environment line, and the executor (its interpreter).
import { needsExtensionBuild } from '../../../env/project-build.js';
import { LEFT_OUT } from '../../../env/unbuildable.js';
import type {
  BuiltEnv,
  EnvBuilder,
  EnvBuildFailure,
  EnvBuildProgress,
  EnvSpec,
  ProjectBuildResult,
  VersionDecision,
} from '../../../env/types.js';
import type { IssueInput, ProgressFn } from '../../types.js';
import type { BuildCheckout } from './built-workspace.js';
import { fixAdvice, type FixAdviceFor } from './fix-advice.js';

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
}

export type EnvStageResult =
  /** `note`: why there is no env when one was wanted (the spec could not be worked out), said in the outcome. */
  | { kind: 'none'; decisions?: VersionDecision[]; note?: string }
  | {
      kind: 'built';
      spec: EnvSpec;
      env: BuiltEnv;
      /**
       * The project has extensions: the build of the job's checkout, and how any other checkout (the fixing ref, a
       * bisection step) is built for its runs. Null: runs mount the checkouts as they are.
       */
      project: { checkout: string; result: ProjectBuildResult & { ok: true }; buildCheckout: BuildCheckout } | null;
    }
  | { kind: 'failed'; spec: EnvSpec; failure: EnvBuildFailure };

/** Builds (or reuses) the job's env. A builder that throws is a failed build, said as one, never a crash of the run. */
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
  const count = spec.requirements.length;
  await progress('intake', `building the environment (${count} package${count === 1 ? '' : 's'})`);
  const onProgress = (p: EnvBuildProgress): void => void progress('intake', progressLine(p, count));
  try {
    const result = await ports.builder.build(spec, { checkout: input.checkout, signal, onProgress });
    if (!result.ok) return { kind: 'failed', spec, failure: result.failure };
    const env = result.env;
    const compile = ports.builder.buildProject?.bind(ports.builder);
    if (!input.checkout || !compile || !needsExtensionBuild(spec)) return { kind: 'built', spec, env, project: null };
    const n = spec.project?.extensions.length ?? 0;
    await progress('intake', `building the environment: compiling the project's extensions (${n} source file${n === 1 ? '' : 's'})`);
    const built = await compile(spec, env, input.checkout, signal);
    if (!built.ok) return { kind: 'failed', spec, failure: built.failure };
    const buildCheckout: BuildCheckout = (hostPath, sig) => compile(spec, env, hostPath, sig);
    return { kind: 'built', spec, env, project: { checkout: input.checkout, result: built, buildCheckout } };
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
    ...decisionNotes(spec),
    ...spec.notes.map((n) => `Environment: ${n}`),
  ];
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
export function decisionRecord(spec: Pick<EnvSpec, 'decisions'>): Record<string, string> {
  return Object.fromEntries(
    (spec.decisions ?? []).map((d) => [`${d.name} (decided)`, `${d.version ?? (d.specifier || 'any')} (${DECIDED_BY[d.source]})`]),
  );
}

/** The evidence notes' line of the version decision: each key package, its version and the source that decided it. Pure. */
export function decisionNotes(spec: Pick<EnvSpec, 'decisions'>): string[] {
  const ds = spec.decisions ?? [];
  if (!ds.length) return [];
  const one = (d: VersionDecision): string =>
    `${d.name} ${d.version ?? (d.specifier || 'any')} (${DECIDED_BY[d.source]}${d.source === 'user' ? `: ${d.why.slice(0, 80)}` : ''})`;
  return [`Environment: versions decided: ${ds.map(one).join(', ')}.`];
}

/** The one sentence of an env that could not be built: the step, the package, and the setting that fixes it (`where`). Pure. */
export function envFailureSummary(failure: EnvBuildFailure, where: FixAdviceFor = 'repo-config'): string {
  const what = failure.package ? `${failure.step} of ${failure.package}` : `the ${failure.step} step`;
  const fix = failure.configKey ? fixAdvice(failure.configKey, where) : '';
  const first = failure.message.split('\n').find((l) => l.trim()) ?? '';
  return `The project's environment could not be built: ${what} failed (${first.trim().slice(0, 300)}). No script was run.${fix}`;
}
