import type { ScriptExecutor, Workspace } from '../exec/types.js';
import { EnvironmentProbe } from './types.js';

const PROBE = String.raw`
import importlib, importlib.util, json, platform, sys
mods = json.loads(sys.argv[1])
out = {"python": platform.python_version(), "executable": sys.executable, "platform": platform.platform(), "modules": {}, "cuda": False, "cudaVersion": None}
for m in mods:
    try:
        spec = importlib.util.find_spec(m)
    except Exception:
        spec = None
    if spec is None:
        out["modules"][m] = None
        continue
    v = "installed"
    if m in ("torch", "numpy", "tensorflow", "keras", "jax", "transformers", "torchvision", "sklearn", "scipy", "pandas"):
        try:
            v = str(getattr(importlib.import_module(m), "__version__", "installed"))
        except Exception as e:
            v = "broken: " + type(e).__name__
    out["modules"][m] = v
if out["modules"].get("torch") not in (None,) and not str(out["modules"].get("torch")).startswith("broken"):
    import torch
    out["cuda"] = bool(torch.cuda.is_available())
    out["cudaVersion"] = torch.version.cuda
print("REPGEN_PROBE " + json.dumps(out))
`;

/** Modules probed whatever the report imports: what the environment record names. */
export const BASE_MODULES = ['torch', 'numpy'];

/**
 * Asks the executor's interpreter which modules it has and what it is (versions, CUDA). It runs
 * through the executor, so it sees exactly what the candidate scripts will see. Null when the probe
 * itself could not run (the caller treats that as an infrastructure problem).
 */
export async function probeEnvironment(executor: ScriptExecutor, modules: string[], signal?: AbortSignal, workspace?: Workspace): Promise<{ probe: EnvironmentProbe | null; error: string | null }> {
  const wanted = [...new Set([...BASE_MODULES, ...modules])].filter((m) => /^[A-Za-z_][\w]*$/.test(m));
  const result = await executor.run(
    { files: [{ path: 'probe.py', content: PROBE }], entry: 'probe.py', args: [JSON.stringify(wanted)], limits: { timeoutMs: 60_000, memoryMb: 4096, cpuSeconds: 120, maxOutputBytes: 200_000 }, ...(workspace ? { workspace } : {}) },
    signal,
  );
  if (result.infra) return { probe: null, error: `${result.infra.kind}: ${result.infra.message}` };
  const line = result.stdout.split('\n').find((l) => l.startsWith('REPGEN_PROBE '));
  if (!line) return { probe: null, error: `the environment probe printed nothing usable (exit ${result.exitCode}): ${result.output.slice(-300)}` };
  try {
    const parsed = EnvironmentProbe.safeParse(JSON.parse(line.slice('REPGEN_PROBE '.length)));
    return parsed.success ? { probe: parsed.data, error: null } : { probe: null, error: 'the environment probe answered in an unexpected shape' };
  } catch {
    return { probe: null, error: 'the environment probe printed malformed JSON' };
  }
}

/** The environment record of the outcome: interpreter, framework versions, CUDA or not. */
export function environmentRecord(probe: EnvironmentProbe | null, executor: string): Record<string, string> {
  if (!probe) return { executor };
  const record: Record<string, string> = { executor, python: probe.python, interpreter: probe.executable };
  for (const [name, version] of Object.entries(probe.modules)) if (version && version !== 'installed') record[name] = version;
  record.cuda = probe.cuda ? `yes${probe.cudaVersion ? ` (${probe.cudaVersion})` : ''}` : 'no';
  return record;
}
