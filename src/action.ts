import { SetupError } from './errors.js';
import { createLineLogger, type Logger } from './log.js';
import { runAction, type ActionDeps, type ActionResult } from './action/run-action.js';
import { readActionEnv } from './action/read-action-env.js';
import { writeOutputs } from './action/write-outputs.js';

/**
 * GitHub Action entry (action.yml → bin/action.js → here): reads the workflow's event and inputs, runs the
 * App's triggers, permission rule and pipeline on it, and writes the step's outputs. Wiring only.
 */
export async function main(
  env: NodeJS.ProcessEnv = process.env,
  wiring: Partial<Omit<ActionDeps, 'env'>> = {},
  write: (line: string) => void = (l) => process.stdout.write(l),
): Promise<number> {
  const log: Logger = wiring.log ?? createLineLogger(write, { verbose: env.RUNNER_DEBUG === '1' });
  let result: ActionResult;
  const cancel = wiring.signal ? null : cancelOnSignal();
  try {
    const actionEnv = readActionEnv(env);
    result = await runAction(actionEnv, { ...wiring, env, log, signal: wiring.signal ?? cancel?.signal });
    await writeOutputs(actionEnv.outputFile, {
      status: result.status,
      verdict: result.verdict ?? '',
      'repro-path': result.reproPath ?? '',
      'evidence-path': result.evidencePath ?? '',
      'comment-url': result.commentUrl ?? '',
    });
  } catch (err) {
    // Only what happens before the run's comment exists lands here (bad inputs, an unreadable event, GitHub refusing the first call).
    const message =
      err instanceof SetupError
        ? err.message
        : `${err instanceof Error ? err.name : 'Error'}: ${err instanceof Error ? err.message : String(err)}`;
    write(`::error title=RepGen::${escapeData(message)}\n`);
    return 1;
  } finally {
    cancel?.dispose();
  }
  write(`RepGen: ${result.status}: ${result.message.replace(/\s*[\r\n]+\s*/g, ' ')}\n`);
  if (result.exitCode === 1) write(`::error title=RepGen::${escapeData(result.message)}\n`);
  return result.exitCode;
}

/** A cancelled workflow run: the runner sends SIGINT, then SIGTERM; either stops the run and its scripts. */
function cancelOnSignal(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const stop = (): void => controller.abort(new Error('the workflow run was cancelled'));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: controller.signal,
    dispose: () => {
      process.removeListener('SIGINT', stop);
      process.removeListener('SIGTERM', stop);
    },
  };
}

/** Workflow-command escaping (as @actions/core does), so a message cannot issue commands of its own. */
export function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
