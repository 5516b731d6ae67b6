import { setTimeout as sleep } from 'node:timers/promises';
import { Log, type V1ConfigMap } from '@kubernetes/client-node';
import { InvalidRunRequestError } from '../errors.js';
import { judgeRun, failingWaitReason, containerStatus, toRunResult, type JobView, type PodView, type Verdict } from './judge.js';
import { CONTAINER_NAME, RUN_ID_LABEL, renderRun } from './render.js';
import { describeApiError, httpStatus, withRetry } from './retry.js';
import { parseRunnerLog } from './runner.js';
import { startResumableWatch } from './watch.js';
import { RunRequest, type RunRequestInput, type RunResult, type ScriptExecutor } from '../types.js';
import { CappedSink, clusterClients, defaultKubeConfig, newRunId, type KubernetesExecutorOptions } from './options.js';

export type { KubernetesExecutorOptions } from './options.js';

/**
 * The Kubernetes executor: each run is a ConfigMap (runner + files) and a batch/v1 Job in the repro namespace.
 * It watches the Job and its pod to the end, reads the pod log (the runner's frames) and deletes both objects,
 * also when the run is aborted. It never decides what a run means; judge.ts maps states to results.
 */

/** Creates the executor. Cheap: nothing talks to the cluster before the first run. */
export function createKubernetesExecutor(options: KubernetesExecutorOptions): ScriptExecutor {
  const { config } = options;
  const kc = options.kubeConfig ?? defaultKubeConfig();
  const { log, batch, core, retry, tickMs } = clusterClients({ ...options, kubeConfig: kc });
  const logGraceMs = options.logGraceMs ?? 10_000;
  const ns = config.namespace;

  async function deleteQuietly(what: string, call: () => Promise<unknown>): Promise<void> {
    try {
      await withRetry(what, call, retry, { log });
    } catch (err) {
      if (httpStatus(err) === 404) return;
      log.error({ what, error: describeApiError(err) }, 'kubernetes cleanup failed; ttlSecondsAfterFinished will remove the Job');
    }
  }

  async function run(input: RunRequestInput, signal?: AbortSignal): Promise<RunResult> {
    const parsed = RunRequest.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InvalidRunRequestError(`invalid run request: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim());
    }
    const request = parsed.data;
    const runId = (options.newRunId ?? newRunId)();
    const offer = request.workspace && options.workspaceServer ? options.workspaceServer.offer(request.workspace.hostPath) : null;
    let rendered: ReturnType<typeof renderRun>;
    try {
      rendered = renderRun(request, config, {
        runId,
        hostEnv: options.hostEnv ?? process.env,
        ...(offer ? { workspace: { url: offer.url, token: offer.token } } : {}),
      });
    } catch (err) {
      offer?.release();
      throw err;
    }
    const { name } = rendered;
    const cap = request.limits.maxOutputBytes;
    const resultCtx = (wallMs: number) => ({
      executor: 'kubernetes',
      cap,
      wallMs,
      network: request.network,
      notes: rendered.notes,
      memoryMb: request.limits.memoryMb,
      timeoutMs: request.limits.timeoutMs,
      cpuSeconds: request.limits.cpuSeconds,
    });
    const startedAt = Date.now();
    const infraResult = (kind: NonNullable<RunResult['infra']>['kind'], message: string): RunResult =>
      toRunResult({ kind: 'infra', infra: { kind, message } }, null, resultCtx(Date.now() - startedAt));

    if (signal?.aborted) return infraResult('aborted', 'the run was cancelled before it started');
    const runLog = { runId, job: name, namespace: ns, image: rendered.image };

    let created = false;
    try {
      await withRetry('create ConfigMap', () => core.createNamespacedConfigMap({ namespace: ns, body: rendered.configMap }), retry, {
        log,
        ...(signal ? { signal } : {}),
        // An earlier attempt that timed out may have landed: the name is ours alone.
        onConflict: () => core.readNamespacedConfigMap({ name, namespace: ns }),
      });
      created = true;
      const job = await withRetry('create Job', () => batch.createNamespacedJob({ namespace: ns, body: rendered.job }), retry, {
        log,
        ...(signal ? { signal } : {}),
        onConflict: () => batch.readNamespacedJob({ name, namespace: ns }),
      });
      log.info(runLog, 'kubernetes run started');
      await adoptConfigMap(job.metadata?.uid);
      return await watchToEnd(signal);
    } catch (err) {
      if (signal?.aborted) return infraResult('aborted', 'the run was cancelled');
      log.warn({ ...runLog, error: describeApiError(err) }, 'kubernetes API refused the run');
      return infraResult('api_error', `Kubernetes API: ${describeApiError(err)}`);
    } finally {
      offer?.release();
      if (created) {
        await deleteQuietly('delete Job', () => batch.deleteNamespacedJob({ name, namespace: ns, propagationPolicy: 'Background' }));
        await deleteQuietly('delete ConfigMap', () => core.deleteNamespacedConfigMap({ name, namespace: ns }));
        log.debug(runLog, 'kubernetes run cleaned up');
      }
    }

    /** Makes the Job own the ConfigMap, so the cluster deletes both even if this worker dies. Best effort. */
    async function adoptConfigMap(uid: string | undefined): Promise<void> {
      if (!uid) return;
      try {
        await withRetry(
          'own ConfigMap',
          async () => {
            const cm: V1ConfigMap = await core.readNamespacedConfigMap({ name, namespace: ns });
            cm.metadata = { ...cm.metadata, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid }] };
            return core.replaceNamespacedConfigMap({ name, namespace: ns, body: cm });
          },
          retry,
          { log },
        );
      } catch (err) {
        log.warn({ ...runLog, error: describeApiError(err) }, 'could not make the Job own its ConfigMap');
      }
    }

    async function watchToEnd(signal?: AbortSignal): Promise<RunResult> {
      let job: JobView | null = null;
      let jobGone = false;
      const pods = new Map<string, PodView>();
      let waitingKey: string | null = null;
      let waitingSince: number | null = null;
      let settleAttempts = 0;
      let settling = false;
      let fatal: unknown;
      const logStreams = new Map<string, { sink: CappedSink; abort: () => void }>();
      const logLimit = cap * 4 + 1_048_576;
      const guardMs = ((rendered.job.spec?.activeDeadlineSeconds ?? 0) + 120) * 1000;

      let resolveVerdict!: (v: Verdict | { kind: 'aborted' }) => void;
      const verdictPromise = new Promise<Verdict | { kind: 'aborted' }>((r) => {
        resolveVerdict = r;
      });
      let done = false;
      const finish = (v: Verdict | { kind: 'aborted' }) => {
        if (done) return;
        done = true;
        resolveVerdict(v);
      };

      function currentPod(): PodView | null {
        let latest: PodView | null = null;
        for (const pod of pods.values()) {
          if (containerStatus(pod)?.state?.terminated) return pod;
          latest = pod;
        }
        return latest;
      }

      function startLogs(pod: PodView, afterVerdict = false): void {
        if (done && !afterVerdict) return;
        const podName = pod.metadata?.name;
        const state = containerStatus(pod)?.state;
        if (!podName || logStreams.has(podName) || !(state?.running || state?.terminated)) return;
        const sink = new CappedSink(logLimit);
        const entry = { sink, abort: () => undefined as void };
        logStreams.set(podName, entry);
        new Log(kc)
          .log(ns, podName, CONTAINER_NAME, sink, { follow: true, limitBytes: logLimit })
          .then((controller) => {
            entry.abort = () => controller.abort();
            if (done && !containerStatus(currentPod())?.state?.terminated) controller.abort();
          })
          .catch((err: unknown) => {
            // Too early (container still creating) or a broken connection: the next pod event tries again.
            log.debug({ ...runLog, error: describeApiError(err) }, 'pod log not available yet');
            if (logStreams.get(podName) === entry) logStreams.delete(podName);
          });
      }

      function evaluate(): void {
        if (done) return;
        if (fatal !== undefined)
          return finish({ kind: 'infra', infra: { kind: 'api_error', message: `Kubernetes API: ${describeApiError(fatal)}` } });
        const pod = currentPod();
        const now = Date.now();
        const reason = failingWaitReason(pod);
        const key = reason ? `${pod?.metadata?.name ?? ''}:${reason.replace('ImagePullBackOff', 'ErrImagePull')}` : null;
        if (key !== waitingKey) {
          waitingKey = key;
          waitingSince = key ? now : null;
        }
        const verdict = judgeRun({
          job,
          pod,
          now,
          createdAt: startedAt,
          waitingSince,
          scheduleTimeoutMs: config.scheduleTimeoutMs,
          imagePullGraceMs: config.imagePullGraceMs,
          image: rendered.image,
          settleAttempts,
        });
        if (verdict.kind === 'wait') {
          if (jobGone) return finish({ kind: 'infra', infra: { kind: 'aborted', message: 'the Job was deleted outside RepGen' } });
          if (now - startedAt > guardMs) {
            return finish({
              kind: 'infra',
              infra: { kind: 'api_error', message: `no end of Job ${name} seen within ${Math.round(guardMs / 1000)}s` },
            });
          }
          return;
        }
        if (verdict.kind === 'settle') {
          if (settling) return;
          settling = true;
          void sleep(200)
            .then(() => listPods())
            .then((listed) => {
              for (const item of listed.items) onPod('SYNC', item as PodView);
            })
            .catch(() => undefined)
            .finally(() => {
              settleAttempts += 1;
              settling = false;
              evaluate();
            });
          return;
        }
        finish(verdict);
      }

      function onPod(type: string, pod: PodView): void {
        const podName = pod.metadata?.name;
        if (!podName) return;
        const known = pods.get(podName);
        // A DELETED event may carry an older status than one already seen; keep the terminated one.
        if (!(type === 'DELETED' && containerStatus(known ?? null)?.state?.terminated)) pods.set(podName, pod);
        startLogs(pod);
      }

      const listPods = async () => {
        const list = await withRetry(
          'list pods',
          () => core.listNamespacedPod({ namespace: ns, labelSelector: `${RUN_ID_LABEL}=${runId}` }),
          retry,
          { log },
        );
        return { items: list.items, resourceVersion: list.metadata?.resourceVersion };
      };
      const stopPods = startResumableWatch({
        kubeConfig: kc,
        path: `/api/v1/namespaces/${ns}/pods`,
        query: { labelSelector: `${RUN_ID_LABEL}=${runId}` },
        list: listPods,
        onEvent: (type, object) => {
          onPod(type, object as PodView);
          evaluate();
        },
        onFatal: (err) => {
          fatal = err;
          evaluate();
        },
        log,
        ...(options.watchTimeoutSeconds ? { timeoutSeconds: options.watchTimeoutSeconds } : {}),
      });
      const stopJob = startResumableWatch({
        kubeConfig: kc,
        path: `/apis/batch/v1/namespaces/${ns}/jobs`,
        query: { fieldSelector: `metadata.name=${name}` },
        list: async () => {
          const list = await withRetry(
            'list jobs',
            () => batch.listNamespacedJob({ namespace: ns, fieldSelector: `metadata.name=${name}` }),
            retry,
            { log },
          );
          return { items: list.items, resourceVersion: list.metadata?.resourceVersion };
        },
        onEvent: (type, object) => {
          if (type === 'DELETED') jobGone = true;
          else job = object as JobView;
          evaluate();
        },
        onFatal: (err) => {
          fatal = err;
          evaluate();
        },
        log,
        ...(options.watchTimeoutSeconds ? { timeoutSeconds: options.watchTimeoutSeconds } : {}),
      });
      const ticker = setInterval(evaluate, tickMs);
      const onAbort = () => finish({ kind: 'aborted' });
      signal?.addEventListener('abort', onAbort, { once: true });
      // An abort while the objects were being created fired before this listener existed.
      if (signal?.aborted) onAbort();

      try {
        const verdict = await verdictPromise;
        if (verdict.kind === 'aborted') {
          log.info(runLog, 'kubernetes run aborted');
          return toRunResult(
            { kind: 'infra', infra: { kind: 'aborted', message: 'the run was cancelled' } },
            null,
            resultCtx(Date.now() - startedAt),
          );
        }
        const logText = await collectLogs(verdict);
        const decoded = logText === null ? null : parseRunnerLog(logText, cap);
        log.info({ ...runLog, verdict: verdict.kind, exitCode: decoded?.exit?.code }, 'kubernetes run ended');
        return toRunResult(verdict, decoded, resultCtx(Date.now() - startedAt));
      } finally {
        clearInterval(ticker);
        signal?.removeEventListener('abort', onAbort);
        stopPods();
        stopJob();
        for (const stream of logStreams.values()) stream.abort();
      }

      /** The pod log: the followed stream, completed by one plain read when it lacks the runner's exit frame. */
      async function collectLogs(verdict: Verdict): Promise<string | null> {
        const pod = currentPod();
        const podName = pod?.metadata?.name;
        if (!podName) return null;
        if (verdict.kind === 'finished' && !logStreams.has(podName)) startLogs(pod, true);
        const stream = logStreams.get(podName);
        if (stream) await Promise.race([stream.sink.ended, sleep(verdict.kind === 'finished' ? logGraceMs : 1000)]);
        let text = stream?.sink.text() ?? '';
        if (verdict.kind === 'finished' && !parseRunnerLog(text, cap).exit) {
          try {
            const full = await withRetry(
              'read pod log',
              () => core.readNamespacedPodLog({ name: podName, namespace: ns, container: CONTAINER_NAME, limitBytes: logLimit }),
              retry,
              { log },
            );
            if (full.length > text.length) text = full;
          } catch (err) {
            log.warn({ ...runLog, error: describeApiError(err) }, 'pod log could not be read');
          }
        }
        return text;
      }
    }
  }

  return { name: 'kubernetes', run };
}
