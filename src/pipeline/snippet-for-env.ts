// The report's completed code fitted to the environment the probe found (src/pipeline/run-repro.ts, stage 3): CUDA
// calls to the CPU, Keras's backend as the report's words name it, pretrained weights offline, stand-ins for the
// packages a runner lacks; and the probe's record of the project's own packages. Pure.
import { mapCudaToCpu, mapWeightsOffline, standInMissingModules, withReportedSetup, type CompletedSnippet } from '../agent/tier0.js';
import { distributionsForImports, loadImportNameTables, reportSetupEnv } from '../env/index.js';
import { importedModules } from '../plan/index.js';
import type { ReproSettings } from './settings.js';
import type { EnvironmentProbe } from '../plan/index.js';
import type { ReportResult } from '../report/index.js';

/** Symptoms whose bug is the device itself: the report's CUDA calls stay. */
const DEVICE_KINDS: readonly string[] = ['device_mismatch', 'cuda_unavailable', 'cuda_device_assert', 'out_of_memory'];

/** The snippet as it runs here, and the probe with the modules given a stand-in marked as such. */
export function snippetForEnv(
  snippet: CompletedSnippet,
  ctx: { probe: EnvironmentProbe; setupEnv: Record<string, string>; code: string; report: ReportResult },
): { snippet: CompletedSnippet; probe: EnvironmentProbe } {
  let probe = ctx.probe;
  const deviceBug = ctx.report.reading.expected.some((x) => DEVICE_KINDS.includes(x.kind));
  let out = !probe.cuda && !deviceBug ? (mapCudaToCpu(snippet) ?? snippet) : snippet;
  // Keras's backend the report names only in words: the script sets it as the reporter's shell did (and the probe).
  const ownSetup = reportSetupEnv(ctx.code);
  const wordsOnly = Object.fromEntries(Object.entries(ctx.setupEnv).filter(([k]) => !(k in ownSetup)));
  out = withReportedSetup(out, wordsOnly) ?? out;
  out = mapWeightsOffline(out, ctx.report.reading.expected) ?? out;
  // Packages this runner lacks but that have a faithful stand-in (tqdm, train_test_split) stop blocking the run.
  const stood = standInMissingModules(
    out,
    Object.entries(probe.modules)
      .filter(([, v]) => v === null)
      .map(([m]) => m),
  );
  if (stood.substituted.length)
    probe = { ...probe, modules: { ...probe.modules, ...Object.fromEntries(stood.substituted.map((m) => [m, 'stand-in'])) } };
  return { snippet: stood.snippet, probe };
}

/** The project's own packages are in the workspace: one that fails to import is not missing, its import may be the bug. */
export function withWorkspaceModules(probe: EnvironmentProbe, projectPackages: ReadonlySet<string>): EnvironmentProbe {
  if (!projectPackages.size) return probe;
  const modules = Object.fromEntries(
    Object.entries(probe.modules).map(([m, v]) => [
      m,
      v === null && projectPackages.has(m) && probe.importErrors?.[m] ? 'workspace (fails to import)' : v,
    ]),
  );
  return { ...probe, modules };
}

/**
 * The installable packages the report's code imports, as the env stage reads them (never the reporter's local modules,
 * the standard library or the project's own); a package with a stand-in here (tqdm) is not lacked.
 */
export function reportPackagesOf(report: ReportResult, probe: EnvironmentProbe, projectPackages: ReadonlySet<string>): string[] {
  const standIns = new Set(Object.entries(probe.modules).flatMap(([m, v]) => (v === 'stand-in' ? [m] : [])));
  return distributionsForImports(importedModules(report.facts.pythonBlocks.join('\n')), loadImportNameTables(), [...projectPackages])
    .map((d) => d.module)
    .filter((m) => !standIns.has(m));
}

/** What tier 0 and tier 1 may spend, from the run's settings; the deadline counts from the run's start. */
export function agentBudget(s: ReproSettings, started: number) {
  return {
    maxAttempts: s.maxAttempts,
    attemptsPerBundle: s.attemptsPerBundle,
    maxBundles: s.maxBundles,
    maxTokens: s.maxTokens,
    maxCostUsd: s.maxCostUsd,
    deadline: started + s.wallClockMs,
    runTimeoutMs: s.runTimeoutMs,
    runMemoryMb: s.runMemoryMb,
  };
}
