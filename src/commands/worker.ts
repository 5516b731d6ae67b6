import { appCommand } from '../cli/app-command.js';
import { scriptPython } from '../config/env/exec-env.js';
import { readOperatorEnv } from '../config/operator-env.js';
import { executorChooser } from '../exec/executor-chooser.js';
import { readLocalExecConfig } from '../exec/config.js';
import { checkPython } from '../host/check-python.js';

const HELP = `usage: repgen worker

Runs reproduction jobs from the Redis queue: checks out the issue's repository at the requested ref,
runs the pipeline, and edits the issue's progress comment with the result (check run, labels, PR).
Also runs fix checks: an issue's confirmed reproduction at a pull request's head ("Fixes #N" or
/repgen verify), reported as the check run "RepGen fix check (#N)" on the PR.
SIGTERM/SIGINT: stop taking jobs, let running ones finish for REPGEN_SHUTDOWN_GRACE_S seconds, then
hand them back to the queue for another worker. At start and every REPGEN_LOST_RUN_SWEEP_S seconds it
looks for issues left saying "queued" whose job Redis lost (Redis must persist) and says so on each.

environment: APP_ID, PRIVATE_KEY (or PRIVATE_KEY_PATH), REDIS_URL, GHE_HOST, GHE_PROTOCOL,
REPGEN_QUEUE_PREFIX, REPGEN_WORKER_CONCURRENCY, REPGEN_INSTALLATION_CONCURRENCY, REPGEN_JOB_ATTEMPTS,
REPGEN_LOCK_MS, REPGEN_STALLED_INTERVAL_MS, REPGEN_MAX_STALLED, REPGEN_LOST_RUN_SWEEP_S, REPGEN_WORKDIR, REPGEN_SHUTDOWN_GRACE_S,
REPGEN_GITHUB_THROTTLE, plus the pipeline's, executor's and LLM's settings (see README).
`;

export const command = appCommand('run reproduction jobs from the queue (the GitHub App worker)', HELP, async (env, io, log) => {
  // Read once: a bad variable stops the worker at start, not at its first job.
  const operator = readOperatorEnv(io.env);
  // Every job runs scripts (and byte-compiles checkouts) with it: a program that is not a Python 3 stops the worker now.
  await checkPython(scriptPython(operator), { setting: 'REPGEN_PYTHON', path: io.env.PATH });
  const [{ startReproWorker }, { wireFixCheck }] = await Promise.all([
    import('../../workers/repro-worker.js'),
    import('../../workers/wire-verify.js'),
  ]);
  // One set of executors for reproductions and fix checks.
  const executorFor = executorChooser({ log });
  const handle = await startReproWorker(env, {
    operator,
    executorFor,
    runFixCheck: wireFixCheck(operator, executorFor, log),
    log,
    workRoots: [readLocalExecConfig(io.env).workRoot],
  });
  // The jobs first, then the executors they ran on (the warm pool's sandboxes).
  return () => handle.close().finally(() => executorFor.close());
});
