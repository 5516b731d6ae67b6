export * from './types.js';
export { runRepro, runReproWithEvidence, type ReproInput, type ReproDeps, type ReproEvidence, type BuildContextFn } from './run-repro.js';
export { ReproSettings, reproSettingsFromEnv, type ReproSettingsInput } from './settings.js';
