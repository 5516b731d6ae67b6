import { ATTEMPT_SEED, candidateRequest, type RunLimitsSettings } from '../agent/run-candidate.js';
import type { ScriptExecutor, Workspace } from '../exec/types.js';
import type { Logger } from '../log.js';
import type { ReportReading } from '../symptoms/types.js';

/**
 * Asks the executor to get ready for the runs this reproduction will make, as soon as their shape is known
 * (interpreter, workspace, limits): the local executor starts a fork server, which then serves the attempts and
 * every confirmation seed. Never awaited and never thrown: an executor without warmUp, or one that refuses,
 * only leaves the runs cold.
 */
export function warmRuns(
  executor: ScriptExecutor,
  input: { report: Pick<ReportReading, 'versions'>; settings: RunLimitsSettings; workspace?: Workspace },
  log: Logger,
): void {
  const warmUp = executor.warmUp?.bind(executor);
  if (!warmUp) return;
  const warm = (seed: number): Promise<boolean> =>
    Promise.resolve()
      .then(() => warmUp(candidateRequest('', { report: input.report, seed, settings: input.settings }, input.workspace)))
      .catch((err: unknown) => {
        log.debug({ seed, err: err instanceof Error ? err.message : String(err) }, 'warm-up refused; the run starts cold');
        return false;
      });
  void warm(ATTEMPT_SEED);
}
