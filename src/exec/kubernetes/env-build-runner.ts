import { constants } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig, V1Job, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../log.js';
import type { KubernetesConfig } from './config.js';
import { clusterClients, newRunId } from './options.js';
import { RUN_ID_LABEL } from './render.js';
import { ENV_BUILD_CONTAINER, renderEnvBuildJob, STEP_START_SLACK_SECONDS, type EnvBuildStep } from './render-env-build.js';
import { describeApiError, httpStatus, withRetry, type RetryOptions } from './retry.js';
import { chownDir } from '../../host/untrusted-tree.js';

/**
 * The env builder's steps on Kubernetes: each step a Job in the repro namespace (render-env-build.ts), on the RWX
 * claim of the env cache, instead of bubblewrap in the worker (which a restricted pod cannot run, and which would put
 * third-party setup.py code in the pod holding RepGen's secrets). The worker waits for the Job, reads the step's
 * stdout and stderr from the files it wrote on the claim, and deletes the Job, also when the build is cancelled.
 */

export interface StepOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
}

export type EnvBuildStepRunner = (step: EnvBuildStep, signal: AbortSignal) => Promise<StepOutcome>;

export interface KubernetesBuildRunnerOptions {
  config: KubernetesConfig;
  /** The worker's REPGEN_ENV_CACHE, where it mounts the claim (build pods mount its `work/` at the same path). */
  cacheRoot: string;
  /** The build pods' uid: the worker's own when it is not root, so it can read, publish and remove what they write. */
  runAsUser: number;
  kubeConfig?: KubeConfig;
  log?: Logger;
  retry?: RetryOptions;
  /** How often the Job is looked at. @defaultValue 1000 */
  tickMs?: number;
  /** Source of step ids (tests). */
  newStepId?: () => string;
}

/** What the worker keeps of a step's stdout (the head) and stderr (the tail), as the local builder does. */
const MAX_LOG = 1 << 20;
const PULL_FAILURES = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
]);

export function createKubernetesBuildRunner(options: KubernetesBuildRunnerOptions): EnvBuildStepRunner {
  const { config } = options;
  const { log, batch, core, retry, tickMs } = clusterClients(options);
  const ns = config.namespace;

  return async function runStep(step, signal) {
    const outcome = (o: Partial<StepOutcome>): StepOutcome => ({
      code: null,
      stdout: '',
      stderr: '',
      timedOut: false,
      aborted: false,
      ...o,
    });
    if (signal.aborted) return outcome({ stderr: 'cancelled before it started', aborted: true });
    const stepId = (options.newStepId ?? newRunId)();
    const outputDir = await mkdtemp(join(options.cacheRoot, 'work', 'b-step-'));
    // work/ is the build steps' uid's too: the fresh folder is chowned through its own descriptor, never a link put there.
    if (process.geteuid?.() === 0 && options.runAsUser !== 0) await chownDir(outputDir, options.runAsUser, options.runAsUser);
    let job: V1Job;
    try {
      job = renderEnvBuildJob(step, config, { stepId, cacheRoot: options.cacheRoot, outputDir, runAsUser: options.runAsUser });
    } catch (err) {
      await rm(outputDir, { recursive: true, force: true });
      return outcome({ stderr: err instanceof Error ? err.message : String(err) });
    }
    const name = job.metadata?.name as string;
    let created = false;
    try {
      await withRetry('create env-build Job', () => batch.createNamespacedJob({ namespace: ns, body: job }), retry, {
        log,
        signal,
        onConflict: () => batch.readNamespacedJob({ name, namespace: ns }),
      });
      created = true;
      log.info({ job: name, namespace: ns, argv0: step.argv[0] }, 'env build step started on kubernetes');
      const end = await waitForEnd(name, stepId, step, signal);
      if (end.kind !== 'exited')
        return outcome({ ...end.outcome, stderr: `${await readTail(outputDir, 'err')}${end.outcome.stderr ?? ''}` });
      const [stdout, stderr] = await Promise.all([readHead(outputDir, 'out'), readTail(outputDir, 'err')]);
      const oom =
        end.reason === 'OOMKilled' ? `\nrepgen: the build ran out of memory (${Math.round(step.memoryBytes / 1024 ** 3)} GiB ceiling)` : '';
      return outcome({ code: end.code, stdout, stderr: stderr + oom });
    } catch (err) {
      if (signal.aborted) return outcome({ stderr: 'the build was cancelled', aborted: true });
      return outcome({ stderr: `Kubernetes API: ${describeApiError(err)}` });
    } finally {
      if (created) {
        await withRetry(
          'delete env-build Job',
          () => batch.deleteNamespacedJob({ name, namespace: ns, propagationPolicy: 'Background' }),
          retry,
          {
            log,
          },
        ).catch((err: unknown) => {
          if (httpStatus(err) !== 404)
            log.error({ job: name, error: describeApiError(err) }, 'env-build Job cleanup failed; ttlSecondsAfterFinished removes it');
        });
      }
      await rm(outputDir, { recursive: true, force: true });
    }
  };

  type End = { kind: 'exited'; code: number | null; reason: string | undefined } | { kind: 'ended'; outcome: Partial<StepOutcome> };

  /** Polls the Job and its pod until the step ends, its time is up, or the build is cancelled. */
  async function waitForEnd(name: string, stepId: string, step: EnvBuildStep, signal: AbortSignal): Promise<End> {
    const started = Date.now();
    const deadline = started + step.timeoutMs + (STEP_START_SLACK_SECONDS + 30) * 1000;
    for (;;) {
      if (signal.aborted) return { kind: 'ended', outcome: { aborted: true, stderr: '\nthe build was cancelled' } };
      const [current, pods] = await Promise.all([
        withRetry('read env-build Job', () => batch.readNamespacedJob({ name, namespace: ns }), retry, { log, signal }),
        withRetry(
          'list env-build pods',
          () => core.listNamespacedPod({ namespace: ns, labelSelector: `${RUN_ID_LABEL}=${stepId}` }),
          retry,
          {
            log,
            signal,
          },
        ),
      ]);
      const pod = pods.items[0];
      const terminated = containerState(pod)?.terminated;
      const failed = current.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
      if (terminated) return { kind: 'exited', code: terminated.exitCode ?? null, reason: terminated.reason };
      if (failed?.reason === 'DeadlineExceeded')
        return {
          kind: 'ended',
          outcome: { timedOut: true, stderr: `\nthe step passed its ${Math.round(step.timeoutMs / 60_000)}-minute ceiling` },
        };
      if (failed)
        return { kind: 'ended', outcome: { stderr: `\nthe build pod failed: ${failed.reason ?? ''} ${failed.message ?? ''}`.trimEnd() } };
      const stuck = stuckReason(pod, Date.now() - started);
      if (stuck) return { kind: 'ended', outcome: { stderr: `\n${stuck}` } };
      if (Date.now() > deadline) return { kind: 'ended', outcome: { timedOut: true, stderr: '\nthe build pod did not finish in time' } };
      await sleep(tickMs, undefined, { signal }).catch(() => undefined);
    }
  }

  /** A pod that will not start: its image cannot be pulled, or no node takes it; said with the setting to check. */
  function stuckReason(pod: V1Pod | undefined, waitedMs: number): string | null {
    const waiting = containerState(pod)?.waiting;
    if (waiting?.reason && PULL_FAILURES.has(waiting.reason) && waitedMs > config.imagePullGraceMs) {
      return `the build pod cannot start its image (${waiting.reason}: ${waiting.message ?? ''}); check the "projectEnv" row of REPGEN_K8S_IMAGES`;
    }
    const unscheduled = pod?.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
    if (unscheduled && waitedMs > config.scheduleTimeoutMs) {
      return `no node took the build pod in ${Math.round(config.scheduleTimeoutMs / 1000)} s (${unscheduled.reason ?? ''}: ${unscheduled.message ?? ''})`;
    }
    return null;
  }
}

function containerState(pod: V1Pod | undefined) {
  return pod?.status?.containerStatuses?.find((c) => c.name === ENV_BUILD_CONTAINER)?.state;
}

/**
 * One of the step's output files, bounded. The folder lies on a volume the step could write, so neither it nor the
 * file may be a link: the worker would otherwise read (and show in the comment's log tail) a file of its own. The
 * folder is opened once without following a link, and the file through that descriptor, so a link swapped in
 * between is not followed either.
 */
async function readBounded(dir: string, file: 'out' | 'err', from: 'head' | 'tail'): Promise<string> {
  const dh = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW).catch(() => null);
  if (!dh) return '';
  try {
    const fh = await open(`/proc/self/fd/${dh.fd}/${file}`, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
      () => null,
    );
    if (!fh) return '';
    try {
      const info = await fh.stat();
      if (!info.isFile()) return '';
      const size = Math.min(info.size, from === 'head' ? MAX_LOG : MAX_LOG / 2);
      const buf = Buffer.alloc(size);
      const { bytesRead } = await fh.read(buf, 0, size, from === 'head' ? 0 : Math.max(0, info.size - size));
      return buf.subarray(0, bytesRead).toString('utf8');
    } finally {
      await fh.close();
    }
  } finally {
    await dh.close();
  }
}

const readHead = (dir: string, file: 'out' | 'err') => readBounded(dir, file, 'head');
const readTail = (dir: string, file: 'out' | 'err') => readBounded(dir, file, 'tail');
