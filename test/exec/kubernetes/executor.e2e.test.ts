import { describe, expect, it } from 'vitest';
import { KubernetesExecConfig } from '../../../src/exec/kubernetes/config.js';
import { createKubernetesExecutor } from '../../../src/exec/kubernetes/executor.js';
import { describeExecutorConformance } from '../executor-conformance.js';

/**
 * Opt-in, against a real cluster: `E2E=1 E2E_K8S=1 KUBECONFIG=… npx vitest run test/exec/kubernetes/executor.e2e.test.ts`.
 * Needs the repro namespace (k8s/base/namespaces.yaml) and rights like the worker's Role. The image only needs
 * a `python` (E2E_K8S_IMAGE, default python:3.12-slim); E2E_K8S_GPU=1 also runs a GPU request.
 */
const enabled = process.env.E2E_K8S === '1';
const image = process.env.E2E_K8S_IMAGE ?? 'python:3.12-slim';
const config = () =>
  KubernetesExecConfig.parse({
    kind: 'kubernetes',
    namespace: process.env.REPGEN_K8S_NAMESPACE ?? 'repgen-repro',
    images: [{ match: {}, image }],
    scheduleTimeoutMs: 300_000,
  });

describe.runIf(enabled)('kubernetes executor on a real cluster', () => {
  describeExecutorConformance('kubernetes (real cluster)', () => createKubernetesExecutor({ config: config() }));

  it.runIf(process.env.E2E_K8S_GPU === '1')(
    'sees a GPU when it asks for one',
    async () => {
      const exec = createKubernetesExecutor({ config: config() });
      const r = await exec.run({
        files: [
          {
            path: 'gpu.py',
            content: 'import subprocess\nprint(subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout)\n',
          },
        ],
        entry: 'gpu.py',
        gpus: 1,
      });
      expect(r.infra).toBeNull();
      expect(r.stdout).toMatch(/GPU 0:/);
    },
    600_000,
  );
});
