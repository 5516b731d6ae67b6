import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createExecutor, readExecConfig } from '../../../src/exec/index.js';
import { startFakeKubeApi, type FakeKubeApi } from '../../helpers/fake-kube-api.js';
import { describeExecutorConformance } from '../executor-conformance.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

/**
 * The shared executor contract, over the Kubernetes adapter and the fake API server: the fake kubelet really
 * runs the container's command (the runner, then the script) with /usr/bin/python3, so exit codes, streams,
 * timeouts, output files and aborts are the real thing; only the cluster around them is faked. The executor
 * is built the production way: REPGEN_EXECUTOR=kubernetes through the factory, cluster access from KUBECONFIG.
 */
let api: FakeKubeApi | undefined;
const savedKubeconfig = process.env.KUBECONFIG;

describeExecutorConformance('kubernetes (fake API server, real python)', async () => {
  api = await startFakeKubeApi();
  const file = join(makeTempDir('kubeconfig-'), 'config');
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      // client-node refuses plain http unless told to skip TLS verification.
      `clusters: [{ name: fake, cluster: { server: "${api.url}", insecure-skip-tls-verify: true } }]`,
      'users: [{ name: fake, user: { token: fake-token } }]',
      'contexts: [{ name: fake, context: { cluster: fake, user: fake } }]',
      'current-context: fake',
      '',
    ].join('\n'),
  );
  process.env.KUBECONFIG = file;
  return createExecutor(readExecConfig({ REPGEN_EXECUTOR: 'kubernetes' }));
});

afterAll(async () => {
  if (savedKubeconfig === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = savedKubeconfig;
  await api?.close();
});
