import { computeEnvSpec, eraPackages, type EnvSpecInput } from './decide/compute-env-spec.js';
import type { ReleaseDates, ReleaseInfo } from './decide/era.js';
import type { EnvSpec } from './types.js';

/**
 * The environment spec of a run (issue 27, item 1). `computeEnvSpec` is the pure core; `resolveEnvSpec`
 * looks up the release dates the era needs through the ReleaseDates port first. Adapters:
 * `readCheckoutFiles` (the checkout), `pypiReleaseDates` (PyPI's JSON API), `loadImportNameTables` (data/).
 */
export async function resolveEnvSpec(
  input: Omit<EnvSpecInput, 'era'> & { commitDate: string | null },
  ports: { releaseDates: ReleaseDates | null },
): Promise<EnvSpec> {
  const { commitDate, ...rest } = input;
  if (!commitDate || !ports.releaseDates) return computeEnvSpec({ ...rest, era: null });
  const releases: Record<string, ReleaseInfo[]> = {};
  for (const name of eraPackages(rest)) {
    const r = await ports.releaseDates.releases(name);
    if (r) releases[name] = r;
  }
  return computeEnvSpec({ ...rest, era: { commitDate, releases } });
}

export { computeEnvSpec, eraPackages, type EnvPolicy, type EnvSpecInput } from './decide/compute-env-spec.js';
export { ERA_SENSITIVE, eraCap, wheelFits, type ReleaseDates, type ReleaseInfo } from './decide/era.js';
export { distributionsForImports, importedModules } from './read/import-names.js';
export { loadImportNameTables } from './read/load-import-names.js';
export { pypiReleaseDates } from './decide/pypi-release-dates.js';
export { readCheckoutFiles } from './read/read-checkout-files.js';
export { reportSetupEnv } from './prove/report-setup-env.js';
export { readReportVersions, type ReportEnvironment, type ReportedVersion } from './read/read-report-versions.js';
export type { RepoFiles } from './read/read-repo-deps.js';
export * from './types.js';
