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
  /**
   * The report's setup lines' variables (src/env/prove/report-setup-env.ts), set for the probe as the report's script sets
   * them before its imports: Keras 3 imports the backend KERAS_BACKEND names. @defaultValue {}
   */
  env?: Record<string, string>;
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
  const env = options.env ?? {};
  const envKey = Object.keys(env).length ? `\u0000${JSON.stringify(Object.entries(env).sort())}` : '';
  const key = `${workspace ? `${workspace.hostPath}\u0000${workspace.mountPath ?? ''}` : ''}${envKey}`;
  const perWorkspace = cache.get(executor) ?? new Map<string, ProbeCache>();
  cache.set(executor, perWorkspace);
  let known = perWorkspace.get(key);
  const missing = (): string[] => wanted.filter((m) => !known?.modules.has(m));
  if (known && missing().length === 0) return { probe: fromCache(known), error: null };
  // A checkout's contents can change under the same path, and the key does not see them: no disk cache with one.
  const store = workspace || envKey ? undefined : options.store;
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
  const answer = await probeModules(executor, unknown, signal, workspace, env);
  if ('error' in answer) return { probe: null, error: answer.error };
  const p = answer.parsed;
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

type ProbeAnswer = { parsed: EnvironmentProbe } | { error: string; crashed?: string };

/**
 * One probe run over `modules`; when the interpreter itself dies on an import (a C++ abort: Debian's torchvision,
 * built for the base's torch, loaded beside an env's newer torch), the list is halved until each crashing module
 * stands alone and is recorded as failing to import, so one such module no longer costs the whole probe.
 */
async function probeModules(
  executor: ScriptExecutor,
  modules: string[],
  signal?: AbortSignal,
  workspace?: Workspace,
  env: Record<string, string> = {},
): Promise<ProbeAnswer> {
  const one = await probeOnce(executor, modules, signal, workspace, env);
  if (!('crashed' in one) || one.crashed === undefined) return one;
  if (modules.length === 1) {
    const m = modules[0] as string;
    return { error: one.error, crashed: `ImportError: importing ${m} crashed the interpreter (${one.crashed})` };
  }
  const half = Math.ceil(modules.length / 2);
  const parts = [
    await probeModules(executor, modules.slice(0, half), signal, workspace, env),
    await probeModules(executor, modules.slice(half), signal, workspace, env),
  ];
  const done = parts.flatMap((a) => ('parsed' in a ? [a.parsed] : []));
  const hard = parts.find((a) => 'error' in a && a.crashed === undefined);
  if (hard || done.length === 0) return hard ?? one;
  const merged: EnvironmentProbe = { ...(done[0] as EnvironmentProbe), modules: {}, importErrors: {} };
  for (const [i, a] of parts.entries()) {
    const mods = i === 0 ? modules.slice(0, half) : modules.slice(half);
    if ('parsed' in a) {
      Object.assign(merged.modules, a.parsed.modules);
      Object.assign(merged.importErrors as Record<string, string>, a.parsed.importErrors ?? {});
    } else if (a.crashed !== undefined && mods.length === 1) {
      merged.modules[mods[0] as string] = null;
      (merged.importErrors as Record<string, string>)[mods[0] as string] = a.crashed.slice(0, 200);
    }
  }
  return { parsed: merged };
}

async function probeOnce(
  executor: ScriptExecutor,
  modules: string[],
  signal: AbortSignal | undefined,
  workspace: Workspace | undefined,
  env: Record<string, string>,
): Promise<ProbeAnswer> {
  const result = await executor.run(
    {
      files: [{ path: 'probe.py', content: PROBE }],
      entry: 'probe.py',
      args: [JSON.stringify(modules)],
      limits: { timeoutMs: 120_000, memoryMb: 4096, cpuSeconds: 240, maxOutputBytes: 200_000 },
      ...(workspace ? { workspace } : {}),
      ...(Object.keys(env).length ? { env } : {}),
    },
    signal,
  );
  if (result.infra) return { error: `${result.infra.kind}: ${result.infra.message}` };
  const line = result.stdout.split('\n').find((l) => l.startsWith('REPGEN_PROBE '));
  if (!line) {
    const error = `the environment probe printed nothing usable (exit ${result.exitCode}): ${result.output.slice(-300)}`;
    const died = !result.timedOut && (result.signal !== null || result.exitCode === null || result.exitCode > 128);
    const crash = died || /terminate called after|Fatal Python error|Segmentation fault/.test(result.output);
    const last = result.output.trim().split('\n').slice(-1)[0] ?? '';
    return crash ? { error, crashed: `${result.signal ?? `exit ${result.exitCode}`}: ${last.trim()}`.slice(0, 160) } : { error };
  }
  let parsed: ReturnType<typeof EnvironmentProbe.safeParse>;
  try {
    parsed = EnvironmentProbe.safeParse(JSON.parse(line.slice('REPGEN_PROBE '.length)));
  } catch {
    return { error: 'the environment probe printed malformed JSON' };
  }
  if (!parsed.success) return { error: 'the environment probe answered in an unexpected shape' };
  return { parsed: parsed.data };
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
