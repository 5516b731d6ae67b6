export * from './types.js';
export { runRepro, runReproWithEvidence, type ReproInput, type ReproDeps, type ReproEvidence, type BuildContextFn } from './run-repro.js';
export { ReproSettings, reproSettingsFrom, type ReproSettingsInput } from './settings.js';
export { resolveRunSpec, RunRequest, llmChoice, type RunSpec, type RunRequestInput, type Cap, type CapName } from './run-spec.js';
export { reproduceIssue, type ReproduceResult } from './reproduce-issue.js';
export type { IssueSource, ResultPublisher, ProjectCheckout, RunReport, RunEnd, Published, ReproPorts, SpecSummary } from './ports.js';
