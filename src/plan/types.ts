import { z } from 'zod';

export const PlanStepKind = z.enum(['environment', 'data', 'model', 'run', 'assertion']);
export type PlanStepKind = z.infer<typeof PlanStepKind>;

export const PlanStep = z.object({ kind: PlanStepKind, description: z.string() });
export type PlanStep = z.infer<typeof PlanStep>;

/** What the run environment can and cannot give this report (network, packages). */
export const Blocker = z.object({
  kind: z.enum(['network', 'missing_package', 'data']),
  /** "a torchvision dataset download (download=True)", "package `transformers` is not installed here". */
  what: z.string(),
});
export type Blocker = z.infer<typeof Blocker>;

export const ReproPlan = z.object({
  steps: z.array(PlanStep),
  /** Where the data comes from: the report's own code, synthetic tensors of the right shape, or nowhere yet. */
  dataStrategy: z.enum(['report_code', 'synthetic', 'none_needed']),
  /** What the final run must show, in words (the matcher decides, not this text). */
  assertion: z.string(),
  blockers: z.array(Blocker),
  /** Top-level modules the report's code imports, and which of them the interpreter lacks. */
  imports: z.array(z.string()),
  missingModules: z.array(z.string()),
});
export type ReproPlan = z.infer<typeof ReproPlan>;

/** The interpreter the scripts run under, as probed through the executor. */
export const EnvironmentProbe = z.object({
  python: z.string(),
  executable: z.string().catch(''),
  platform: z.string().catch(''),
  /** Installed version per probed module; null when not importable. */
  modules: z.record(z.string(), z.string().nullable()),
  /** Why a module that is installed failed to import (`ImportError: …`). */
  importErrors: z.record(z.string(), z.string()).optional(),
  cuda: z.boolean().catch(false),
  cudaVersion: z.string().nullable().catch(null),
});
export type EnvironmentProbe = z.infer<typeof EnvironmentProbe>;
