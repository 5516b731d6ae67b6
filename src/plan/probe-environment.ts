import type { ScriptExecutor, Workspace } from '../exec/types.js';
import type { ProbeStore, StoredProbe } from './probe-store.js';
import { EnvironmentProbe } from './types.js';

// One line of the probe, kept whole: the probe's text is hashed into recorded sessions (fixtures/cassettes).
const PROBE_OUT =
  '{"python": platform.python_version(), "executable": sys.executable, "platform": platform.platform(), ' +
  '"modules": {}, "importErrors": {}, "cuda": False, "cudaVersion": None}';

const PROBE = String.raw`
import importlib, importlib.util, json, platform, sys
mods = json.loads(sys.argv[1])
out = ${PROBE_OUT}
for m in mods:
    try:
        spec = importlib.util.find_spec(m)
    except Exception:
        spec = None
    if spec is None:
        out["modules"][m] = None
        continue
    # Importable, not just findable: a package built against another torch is found but fails to import.
    try:
        mod = importlib.import_module(m)
    except BaseException as e:
        out["modules"][m] = None
        out["importErrors"][m] = (type(e).__name__ + ": " + str(e))[:200]
        continue
    out["modules"][m] = str(getattr(mod, "__version__", "installed"))
if out["modules"].get("torch"):
    import torch
    out["cuda"] = bool(torch.cuda.is_available())
    out["cudaVersion"] = torch.version.cuda
print("REPGEN_PROBE " + json.dumps(out))
`;

/** Modules probed whatever the report imports: what the environment record names. */
export const BASE_MODULES = ['torch', 'numpy'];

/**
 * Packages a reproduction of a DL bug commonly reaches for. Probed once per executor (cached), so the
 * plan can tell the model which of them it may use and which it must not import.
 */
export const COMMON_MODULES = [
  'torchvision',
  'torchaudio',
  'torchtext',
  'transformers',
  'timm',
  'sklearn',
  'scipy',
  'pandas',
  'PIL',
  'cv2',
  'matplotlib',
  'tqdm',
  'tensorflow',
  'keras',
  'jax',
  'lightning',
  'pytorch_lightning',
];

interface ProbeCache {
  base: Omit<EnvironmentProbe, 'modules' | 'importErrors'>;
  /** Version (or 'installed') when importable, null when not, 'unknown' when the probe did not say. */
  modules: Map<string, string | null>;
  importErrors: Map<string, string>;
}

/** Per executor (one interpreter) and workspace: what it was already asked. A worker's executor lives for many runs. */
const cache = new WeakMap<ScriptExecutor, Map<string, ProbeCache>>();

const VALID_MODULE = /^[A-Za-z_][\w]*$/;

/** Where probe answers outlive the process: only for an executor with an environment key, and no workspace. */
export interface ProbeOptions {
  store?: ProbeStore;
  now?: () => number;
}

/**
 * Asks the executor's interpreter which modules it can import and what it is (versions, CUDA). It runs
 * through the executor, so it sees exactly what the candidate scripts will see. Answers are cached per
 * executor: a module is probed once; with a `store`, also on disk under the executor's environment key.
 * Null when the probe itself could not run (the caller treats that as an infrastructure problem).
 */
export async function probeEnvironment(
  executor: ScriptExecutor,
  modules: string[],
  signal?: AbortSignal,
  workspace?: Workspace,
  options: ProbeOptions = {},
): Promise<{ probe: EnvironmentProbe | null; error: string | null }> {
  const wanted = [...new Set([...BASE_MODULES, ...COMMON_MODULES, ...modules])].filter((m) => VALID_MODULE.test(m));
  // The workspace is on the scripts' import path, so what imports depends on it too.
  const key = workspace ? `${workspace.hostPath}\u0000${workspace.mountPath ?? ''}` : '';
  const perWorkspace = cache.get(executor) ?? new Map<string, ProbeCache>();
  cache.set(executor, perWorkspace);
  let known = perWorkspace.get(key);
  const missing = (): string[] => wanted.filter((m) => !known?.modules.has(m));
  if (known && missing().length === 0) return { probe: fromCache(known), error: null };
  // A checkout's contents can change under the same path, and the key does not see them: no disk cache with one.
  const store = workspace ? undefined : options.store;
  const diskKey = store ? await executor.environmentKey?.().catch(() => null) : null;
  if (store && diskKey && !known) {
    const stored = await store.load(diskKey);
    if (stored) {
      known = toCache(stored);
      perWorkspace.set(key, known);
    }
  }
  const unknown = missing();
  if (known && unknown.length === 0) return { probe: fromCache(known), error: null };
  const result = await executor.run(
    {
      files: [{ path: 'probe.py', content: PROBE }],
      entry: 'probe.py',
      args: [JSON.stringify(unknown)],
      limits: { timeoutMs: 120_000, memoryMb: 4096, cpuSeconds: 240, maxOutputBytes: 200_000 },
      ...(workspace ? { workspace } : {}),
    },
    signal,
  );
  if (result.infra) return { probe: null, error: `${result.infra.kind}: ${result.infra.message}` };
  const line = result.stdout.split('\n').find((l) => l.startsWith('REPGEN_PROBE '));
  if (!line)
    return { probe: null, error: `the environment probe printed nothing usable (exit ${result.exitCode}): ${result.output.slice(-300)}` };
  let parsed: ReturnType<typeof EnvironmentProbe.safeParse>;
  try {
    parsed = EnvironmentProbe.safeParse(JSON.parse(line.slice('REPGEN_PROBE '.length)));
  } catch {
    return { probe: null, error: 'the environment probe printed malformed JSON' };
  }
  if (!parsed.success) return { probe: null, error: 'the environment probe answered in an unexpected shape' };
  const p = parsed.data;
  const entry: ProbeCache = known ?? {
    base: { python: p.python, executable: p.executable, platform: p.platform, cuda: p.cuda, cudaVersion: p.cudaVersion },
    modules: new Map(),
    importErrors: new Map(),
  };
  for (const m of unknown) entry.modules.set(m, m in p.modules ? (p.modules[m] ?? null) : 'unknown');
  for (const [m, e] of Object.entries(p.importErrors ?? {})) entry.importErrors.set(m, e);
  perWorkspace.set(key, entry);
  // The key is asked again after the run: a package installed meanwhile must not be saved under the old one.
  if (store && (diskKey ?? null) !== null && (await executor.environmentKey?.().catch(() => null)) === diskKey) {
    await store.save(diskKey as string, toStored(entry, (options.now ?? Date.now)()));
  }
  return { probe: fromCache(entry), error: null };
}

function toCache(s: StoredProbe): ProbeCache {
  return {
    base: { python: s.python, executable: s.executable, platform: s.platform, cuda: s.cuda, cudaVersion: s.cudaVersion },
    modules: new Map(Object.entries(s.modules)),
    importErrors: new Map(Object.entries(s.importErrors)),
  };
}

/** Modules the probe did not answer for ('unknown') are left out: the next process asks again. */
function toStored(c: ProbeCache, savedAt: number): StoredProbe {
  const modules: Record<string, string | null> = {};
  for (const [m, v] of c.modules) if (v !== 'unknown') modules[m] = v;
  return { ...c.base, modules, importErrors: Object.fromEntries(c.importErrors), savedAt };
}

function fromCache(c: ProbeCache): EnvironmentProbe {
  const modules: Record<string, string | null> = {};
  for (const [m, v] of c.modules) if (v !== 'unknown') modules[m] = v;
  return { ...c.base, modules, importErrors: Object.fromEntries(c.importErrors) };
}

/**
 * Which of `modules` the executor's interpreter cannot import, probing (once, cached) the ones it was
 * not asked about yet. A module the probe could not answer for counts as importable: the run will say.
 */
export async function missingModules(
  executor: ScriptExecutor,
  modules: string[],
  signal?: AbortSignal,
  workspace?: Workspace,
  options: ProbeOptions = {},
): Promise<string[]> {
  const valid = modules.filter((m) => VALID_MODULE.test(m));
  if (!valid.length) return [];
  const { probe } = await probeEnvironment(executor, valid, signal, workspace, options);
  return probe ? valid.filter((m) => m in probe.modules && probe.modules[m] === null) : [];
}

/** The environment record of the outcome: interpreter, framework versions, CUDA or not. */
export function environmentRecord(probe: EnvironmentProbe | null, executor: string): Record<string, string> {
  if (!probe) return { executor };
  const record: Record<string, string> = { executor, python: probe.python, interpreter: probe.executable };
  for (const [name, version] of Object.entries(probe.modules)) if (version && version !== 'installed') record[name] = version;
  record.cuda = probe.cuda ? `yes${probe.cudaVersion ? ` (${probe.cudaVersion})` : ''}` : 'no';
  return record;
}
