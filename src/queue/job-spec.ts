import type { OperatorEnv } from '../config/operator-env.js';
import { llmChoice, resolveRunSpec, type RunSpec } from '../pipeline/run-spec.js';
import type { ReproJob } from './repro-job.js';

/**
 * A job's run spec: the operator's settings are the ceilings, the repository's `.github/repgen.yml` (in the job
 * data, read when the job was queued) and the `/repgen` flags may only lower them. Reproductions and fix checks
 * of the worker both take theirs here.
 */
export function jobSpec(operator: OperatorEnv, job: Pick<ReproJob, 'config' | 'gpu' | 'llm'> & { jobId: string }): RunSpec {
  return resolveRunSpec(operator, job.config, { gpu: job.gpu, jobId: job.jobId, ...llmChoice(job.llm) });
}
