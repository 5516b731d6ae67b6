import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SetupError } from '../../src/errors.js';
import { InvalidRunRequestError } from '../../src/exec/errors.js';
import { createExecutor, readExecConfig, type ScriptExecutor } from '../../src/exec/index.js';
import { WORKSPACE_INIT_NAME } from '../../src/exec/kubernetes/render.js';
import type { Logger } from '../../src/log.js';
import { startFakeKubeApi, type FakeKubeApi } from '../helpers/fake-kube-api.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * Scenario: the worker's factory with REPGEN_EXECUTOR=kubernetes. With REPGEN_K8S_WORKSPACE_URL it opens the
 * workspace port itself; a repro Job's init container fetches the checkout once from it, and nothing the
 * script's container holds (env, args, ConfigMap) carries the one-time token. close() shuts the port.
 */

let api: FakeKubeApi | undefined;
let executor: ScriptExecutor | undefined;
let blocker: Server | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await executor?.close?.();
  await api?.close();
  await new Promise<void>((resolve) => (blocker ? blocker.close(() => resolve()) : resolve()));
  executor = api = blocker = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function checkout(): string {
  const dir = makeTempDir('repgen-exec-index-');
  dirs.push(dir);
  mkdirSync(join(dir, 'toylib'));
  writeFileSync(join(dir, 'toylib', '__init__.py'), 'MARK = "from-the-checkout"\n');
  return dir;
}

/** A port nobody listens on right now (the server must know its public URL before it listens). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

function recordingLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) => lines.push(`${level} ${msg} ${JSON.stringify(obj)}`);
  return { lines, debug: () => undefined, info: at('info'), warn: at('warn'), error: at('error') };
}

const env = (port: number, url = `http://127.0.0.1:${port}`) => ({
  REPGEN_EXECUTOR: 'kubernetes',
  REPGEN_K8S_WORKSPACE_URL: url,
  REPGEN_K8S_WORKSPACE_PORT: String(port),
});
const SCRIPT = 'import os, toylib\nprint("MARK", toylib.MARK)\nprint("ENV", sorted(k for k in os.environ if "WORKSPACE" in k))\n';

describe('createExecutor: the Kubernetes kind with the workspace server', () => {
  it('opens the port: 403 to a wrong token, the tar once to the init container, the token nowhere the script reaches; close() shuts it', async () => {
    const port = await freePort();
    // The pod waits before starting, so the offer is still live while a wrong token knocks.
    api = await startFakeKubeApi({ startDelayMs: 1500 });
    executor = await createExecutor(readExecConfig(env(port)), { kubeConfig: api.kubeConfig() });
    const running = executor.run({
      files: [{ path: 'repro.py', content: SCRIPT }],
      entry: 'repro.py',
      workspace: { hostPath: checkout() },
    });

    const { object: job } = await api.waitFor(() => api!.created.find((c) => c.kind === 'jobs'));
    const spec = job.spec.template.spec;
    const init = spec.initContainers.find((c: any) => c.name === WORKSPACE_INIT_NAME);
    const initEnv = Object.fromEntries(init.env.map((e: any) => [e.name, e.value])) as Record<string, string>;
    const url = initEnv.REPGEN_WORKSPACE_URL!;
    const token = initEnv.REPGEN_WORKSPACE_TOKEN!;
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/workspace/[0-9a-f]{24}$`));
    expect(token.length).toBeGreaterThan(20);
    expect((await fetch(url, { headers: { authorization: 'Bearer wrong-token-of-the-same-kind-000000000' } })).status).toBe(403);
    expect((await fetch(url)).status).toBe(403);

    const r = await running;
    expect(r.infra).toBeNull();
    expect(r.stdout).toContain('MARK from-the-checkout');
    // Hostile: the script's container, its ConfigMap and what the script saw carry neither the token nor the URL.
    const main = spec.containers[0];
    expect(JSON.stringify(main)).not.toContain(token);
    expect(JSON.stringify(main.env ?? [])).not.toContain(url);
    expect(JSON.stringify([main.command, main.args])).not.toContain(token);
    const cm = api.created.find((c) => c.kind === 'configmaps')!.object;
    expect(JSON.stringify(cm)).not.toContain(token);
    expect(r.output).not.toContain(token);
    expect(r.stdout).toContain("ENV ['REPGEN_WORKSPACE']");
    // Served once: the same token now gets what a stranger gets.
    expect((await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status).toBe(403);

    await executor.close?.();
    await expect(fetch(`http://127.0.0.1:${port}/workspace/${'0'.repeat(24)}`)).rejects.toThrow();
  });

  it('without REPGEN_K8S_WORKSPACE_URL opens no port, says so once, and refuses a workspace run naming the variable', async () => {
    const log = recordingLog();
    api = await startFakeKubeApi();
    executor = await createExecutor(readExecConfig({ REPGEN_EXECUTOR: 'kubernetes' }), { kubeConfig: api.kubeConfig(), log });
    expect(log.lines.filter((l) => l.startsWith('warn'))).toEqual([expect.stringContaining('REPGEN_K8S_WORKSPACE_URL is not set')]);
    const refused = executor.run({ files: [{ path: 'a.py', content: 'print(1)' }], entry: 'a.py', workspace: { hostPath: checkout() } });
    await expect(refused).rejects.toBeInstanceOf(InvalidRunRequestError);
    await expect(refused).rejects.toThrow(/REPGEN_K8S_WORKSPACE_URL/);
    expect(api.created).toEqual([]);
    // A run without a checkout still goes through.
    expect((await executor.run({ files: [{ path: 'a.py', content: 'print(1)' }], entry: 'a.py' })).stdout).toContain('1');
  });

  it('a taken port is a SetupError naming REPGEN_K8S_WORKSPACE_PORT; a host name instead of an IP is warned about', async () => {
    const port = await freePort();
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(port, '0.0.0.0', () => resolve()));
    const taken = createExecutor(readExecConfig(env(port)));
    await expect(taken).rejects.toBeInstanceOf(SetupError);
    await expect(taken).rejects.toThrow(new RegExp(`workspace port ${port} \\(REPGEN_K8S_WORKSPACE_PORT\\)`));

    const log = recordingLog();
    const other = await freePort();
    executor = await createExecutor(readExecConfig(env(other, `http://repgen-worker.repgen.svc:${other}`)), { log });
    expect(log.lines.filter((l) => l.startsWith('warn'))).toEqual([expect.stringContaining('names a host, not an IP')]);
  });
});
