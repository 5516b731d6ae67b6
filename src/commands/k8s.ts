import { basename, resolve } from 'node:path';
import type { Command } from '../cli/io.js';
import { numberOption, parseCliArgs } from '../cli/parse-args.js';
import { decodeUtf8 } from '../cli/validate-input.js';
import { RepgenError, UsageError } from '../errors.js';
import { readKubernetesConfig } from '../exec/kubernetes/config.js';
import { renderRun, renderYaml } from '../exec/kubernetes/render.js';
import { RunRequest } from '../exec/types.js';
import { ReadBoundedError, readBounded } from '../host/read-bounded.js';

const HELP = `usage: repgen k8s render --script FILE [--gpu N] [--image IMG] [--version PKG=VER]... [--setup CMD]...
                          [--timeout SECONDS] [--memory MB] [--network]

Prints the ConfigMap and batch/v1 Job (YAML) that the Kubernetes executor would apply to run FILE.
Nothing is sent to a cluster; pipe it to 'kubectl apply -f -' to try it by hand.

options:
  --script FILE       the Python script to run (required)
  --gpu N             GPUs to ask for (nvidia.com/gpu limit, GPU node selector and tolerations) [0]
  --image IMG         container image; otherwise picked from the image table (REPGEN_K8S_IMAGES)
  --version PKG=VER   a version from the report, e.g. --version torch=2.1.0 (repeatable; picks the image)
  --setup CMD         a setup command run before the script (repeatable)
  --timeout SECONDS   the script's wall-clock limit [120]
  --memory MB         memory limit of the container [4096]
  --network           allow egress (the pod gets the allowlist label instead of none)

Settings come from REPGEN_K8S_* variables (namespace, CPU, image table, GPU selector...).`;

function render(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<string> {
  const parsed = parseCliArgs(args, {
    script: { type: 'string' },
    gpu: { type: 'string' },
    image: { type: 'string' },
    version: { type: 'string', multiple: true },
    setup: { type: 'string', multiple: true },
    timeout: { type: 'string' },
    memory: { type: 'string' },
    network: { type: 'boolean' },
  });
  if (!parsed) return Promise.resolve(HELP);
  const v = parsed.values;
  if (!v.script) throw new UsageError('--script FILE is required');
  const gpus = numberOption('gpu', v.gpu, { min: 0 }) ?? 0;
  if (!Number.isInteger(gpus)) throw new UsageError(`--gpu must be a whole number, got '${v.gpu}'`);
  const timeout = numberOption('timeout', v.timeout);
  const memory = numberOption('memory', v.memory);
  const versions: Record<string, string> = {};
  for (const pair of v.version ?? []) {
    const [pkg, ver] = pair.split('=');
    if (!pkg || !ver) throw new UsageError(`--version takes PKG=VER, got '${pair}'`);
    versions[pkg] = ver;
  }
  return (async () => {
    const path = resolve(cwd, v.script!);
    let content: string;
    try {
      // The script travels in a ConfigMap, which holds at most 1 MiB.
      content = decodeUtf8(
        await readBounded(path, { maxBytes: 1_000_000, what: `--script '${v.script}'`, noFollow: true }),
        `--script '${v.script}'`,
      );
    } catch (err) {
      throw err instanceof ReadBoundedError ? new UsageError(err.message) : err;
    }
    const name = basename(path);
    const request = RunRequest.parse({
      files: [{ path: name, content }],
      entry: name,
      gpus,
      ...(v.image ? { image: v.image } : {}),
      ...(Object.keys(versions).length ? { versions } : {}),
      setup: v.setup ?? [],
      network: v.network ?? false,
      limits: { ...(timeout ? { timeoutMs: Math.round(timeout * 1000) } : {}), ...(memory ? { memoryMb: Math.round(memory) } : {}) },
      labels: { source: 'repgen-k8s-render' },
    });
    const config = readKubernetesConfig(env);
    const runId = `render-${Date.now().toString(36)}`;
    try {
      return renderYaml(renderRun(request, config, { runId, hostEnv: env }));
    } catch (err) {
      // A request no cluster could run (too large, no image fits) is the user's input here.
      if (err instanceof RepgenError) throw new UsageError(err.message);
      throw err;
    }
  })();
}

export const command: Command = {
  summary: 'Kubernetes executor tools: render the Job a script would run as',
  help: HELP,
  async run(args, io) {
    const [sub, ...rest] = args;
    if (sub !== 'render') throw new UsageError(sub ? `unknown subcommand '${sub}' (valid: render)` : 'missing subcommand (valid: render)');
    io.stdout(await render(rest, io.env, io.cwd));
    return 0;
  },
};
