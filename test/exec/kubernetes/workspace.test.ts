import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidRunRequestError } from '../../../src/exec/errors.js';
import { KubernetesExecConfig } from '../../../src/exec/kubernetes/config.js';
import { WORKSPACE_INIT_NAME } from '../../../src/exec/kubernetes/render.js';
import { WorkspaceServer } from '../../../src/exec/kubernetes/workspace.js';
import { createKubernetesExecutor } from '../../../src/exec/kubernetes/executor.js';
import { startFakeKubeApi, type FakeKubeApi } from '../../helpers/fake-kube-api.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

/**
 * Scenario: a Kubernetes run with the project's checkout. The worker offers the tree once under a one-time
 * token; the Job's init container fetches it into an emptyDir; the script's container imports it read-only.
 * The token must reach the init container only: not the script's environment, files, ConfigMap or spec.
 */

let api: FakeKubeApi | undefined;
let server: WorkspaceServer | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await api?.close();
  await server?.close();
  api = undefined;
  server = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function checkout(): string {
  const dir = makeTempDir('repgen-k8s-ws-');
  dirs.push(dir);
  mkdirSync(join(dir, 'toylib'));
  writeFileSync(join(dir, 'toylib', '__init__.py'), 'def block(a, b):\n    return a + b[: len(b) - 1]\n');
  mkdirSync(join(dir, '.git'));
  writeFileSync(join(dir, '.git', 'config'), '[remote "origin"]\n  url = https://example.invalid/private.git\n');
  return dir;
}

const SCRIPT = String.raw`
import os, json
import toylib
print("IMPORTED", toylib.__file__)
try:
    toylib.block([1, 2], [1, 2])
    print("BLOCK_OK")
except Exception as e:
    print("BLOCK_ERR", type(e).__name__)
seen = {"env": dict(os.environ), "files": {}}
for root in [os.getcwd(), os.environ.get("REPGEN_WORKSPACE", "")]:
    for dp, dn, fn in os.walk(root):
        for f in fn:
            p = os.path.join(dp, f)
            try:
                seen["files"][p] = open(p, errors="replace").read()
            except Exception:
                pass
print("GIT_DIR_PRESENT", os.path.isdir(os.path.join(os.environ.get("REPGEN_WORKSPACE", "/nonexistent"), ".git")))
print("SEEN " + json.dumps(seen))
`;

describe('kubernetes executor: the workspace', () => {
  it('the init step fetches the checkout; the script imports it and never holds the init step’s credential', async () => {
    server = await new WorkspaceServer({ publicUrl: 'http://placeholder', port: 0, host: '127.0.0.1' }).start();
    server.setPublicUrl(`http://127.0.0.1:${server.port}`);
    const tokens: string[] = [];
    const urls: string[] = [];
    const recording = {
      offer: (hostPath: string) => {
        const o = server!.offer(hostPath);
        tokens.push(o.token);
        urls.push(o.url);
        return o;
      },
    };
    api = await startFakeKubeApi();
    const exec = createKubernetesExecutor({
      config: KubernetesExecConfig.parse({ kind: 'kubernetes' }),
      kubeConfig: api.kubeConfig(),
      tickMs: 50,
      retry: { baseDelayMs: 10, maxDelayMs: 50 },
      workspaceServer: recording,
    });
    const r = await exec.run({ files: [{ path: 'repro.py', content: SCRIPT }], entry: 'repro.py', workspace: { hostPath: checkout() } });
    expect(r.infra).toBeNull();
    expect(r.stdout).toContain('IMPORTED');
    expect(r.stdout).toContain('BLOCK_OK');
    expect(r.stdout).toContain('GIT_DIR_PRESENT False');
    const token = tokens[0] ?? '';
    expect(token.length).toBeGreaterThan(20);
    // Nothing the script could see holds the token: its environment and every file it can reach.
    expect(r.output).not.toContain(token);
    const seen = JSON.parse(
      r.stdout
        .split('\n')
        .find((l) => l.startsWith('SEEN '))!
        .slice(5),
    ) as { env: Record<string, string>; files: Record<string, string> };
    expect(Object.values(seen.env).join('\n')).not.toContain(token);
    expect(Object.keys(seen.files).some((p) => p.endsWith('toylib/__init__.py'))).toBe(true);

    // The spec: the token is on the init container alone; the script's container mounts the tree read-only.
    const job = api.created.find((c) => c.kind === 'jobs')!.object;
    const spec = job.spec.template.spec;
    const init = spec.initContainers.find((c: any) => c.name === WORKSPACE_INIT_NAME);
    expect(init.env.some((e: any) => e.value === token)).toBe(true);
    const main = spec.containers[0];
    expect(JSON.stringify(main)).not.toContain(token);
    expect(main.volumeMounts).toContainEqual({ name: 'workspace', mountPath: '/workspace', readOnly: true });
    expect(main.env).toContainEqual({ name: 'PYTHONPATH', value: '/workspace' });
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(job.spec.template.metadata.labels['repgen.dev/network']).toBe('none');
    const cm = api.created.find((c) => c.kind === 'configmaps')!.object;
    expect(JSON.stringify(cm)).not.toContain(token);

    // One-time: the token is used up, so a script that learnt it could still fetch nothing.
    const again = await fetch(urls[0]!, { headers: { authorization: `Bearer ${token}` } });
    expect(again.status).toBe(403);
  });

  it('a workspace run without a workspace server is refused, not run without its project', async () => {
    api = await startFakeKubeApi();
    const exec = createKubernetesExecutor({
      config: KubernetesExecConfig.parse({ kind: 'kubernetes' }),
      kubeConfig: api.kubeConfig(),
      tickMs: 50,
    });
    await expect(
      exec.run({ files: [{ path: 'a.py', content: 'print(1)' }], entry: 'a.py', workspace: { hostPath: checkout() } }),
    ).rejects.toBeInstanceOf(InvalidRunRequestError);
  });

  it('the workspace server answers 403 to a wrong token and an unknown id alike', async () => {
    server = await new WorkspaceServer({ publicUrl: 'http://x', port: 0, host: '127.0.0.1' }).start();
    server.setPublicUrl(`http://127.0.0.1:${server.port}`);
    const o = server.offer(checkout());
    expect((await fetch(o.url, { headers: { authorization: 'Bearer nope' } })).status).toBe(403);
    expect(
      (await fetch(`http://127.0.0.1:${server.port}/workspace/${'0'.repeat(24)}`, { headers: { authorization: `Bearer ${o.token}` } }))
        .status,
    ).toBe(403);
    o.release();
    expect((await fetch(o.url, { headers: { authorization: `Bearer ${o.token}` } })).status).toBe(403);
  });
});
