import { afterAll } from 'vitest';
import { KubernetesExecConfig } from '../../src/exec/kubernetes-config.js';
import { createKubernetesExecutor } from '../../src/exec/kubernetes.js';
import { startFakeKubeApi, type FakeKubeApi } from '../helpers/fake-kube-api.js';
import { describeExecutorConformance } from './executor-conformance.js';

/**
 * The shared executor contract, over the Kubernetes adapter and the fake API server: the fake kubelet really
 * runs the container's command (the runner, then the script) with /usr/bin/python3, so exit codes, streams,
 * timeouts, output files and aborts are the real thing; only the cluster around them is faked.
 */
let api: FakeKubeApi | undefined;

describeExecutorConformance(
  'kubernetes (fake API server, real python)',
  async () => {
    api = await startFakeKubeApi();
    return createKubernetesExecutor({ config: KubernetesExecConfig.parse({ kind: 'kubernetes' }), kubeConfig: api.kubeConfig(), tickMs: 100 });
  },
);

afterAll(async () => {
  await api?.close();
});
