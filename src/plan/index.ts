import { CONVENTIONAL_IMPORTS, isKerasCode, NETWORK_PATTERNS } from '../context/conventions.js';
import { KERAS_IMPORTS } from '../context/keras-conventions.js';
import type { ReportResult } from '../report/types.js';
import type { Blocker, EnvironmentProbe, PlanStep, ReproPlan } from './types.js';
import { regexLines } from '../regex.js';

export * from './types.js';
export { probeEnvironment, environmentRecord, missingModules, COMMON_MODULES, type ProbeOptions } from './probe-environment.js';
export { StoredProbe, type ProbeStore } from './probe-store.js';
export { createDiskProbeStore } from './probe-store-disk.js';

/** Standard-library modules never worth probing. */
const STDLIB = new Set([
  'os',
  'sys',
  'math',
  'time',
  'random',
  'json',
  're',
  'copy',
  'collections',
  'itertools',
  'functools',
  'typing',
  'dataclasses',
  'pathlib',
  'abc',
  'argparse',
  'logging',
  'warnings',
  'pickle',
  'io',
  'string',
  'datetime',
  'glob',
  'shutil',
  'subprocess',
  'threading',
  'multiprocessing',
  'enum',
  'operator',
  'statistics',
  'csv',
  'gc',
  'inspect',
  'traceback',
  'contextlib',
  'tempfile',
  'unittest',
  'platform',
  'struct',
  'uuid',
  'hashlib',
  'heapq',
  'bisect',
  'queue',
  'signal',
  'socket',
  'zipfile',
  'gzip',
  'textwrap',
  'pprint',
  '__future__',
]);

/** Top-level module names a script imports (pure). */
export function importedModules(code: string): string[] {
  const mods = new Set<string>();
  for (const m of code.matchAll(
    /^\s*(?:from\s+([\w.]+)\s+import\b|import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*))/gm,
  )) {
    const names = m[1] ? [m[1]] : (m[2] ?? '').split(',').map((s) => s.trim().split(/\s+/)[0] ?? '');
    for (const n of names) {
      const top = n.split('.')[0];
      if (top && !n.startsWith('.') && !STDLIB.has(top)) mods.add(top);
    }
  }
  return [...mods];
}

/**
 * Modules the code reaches through a conventional name it never imports (`transforms.Compose` needs
 * torchvision, `pd.read_csv` pandas, `tqdm(...)` tqdm): a snippet's imports are often left out. Pure.
 */
export function referencedModules(code: string): string[] {
  const bare = code.replace(/("|')(?:\\.|(?!\1)[^\\\n])*\1/g, '""').replace(/#[^\n]*/g, '');
  const mods = new Set<string>();
  // Keras's names count where torch has none of that name, and its lower-case ones (`add`, `layers`) in Keras code only.
  // A name the code binds itself (`class Model(nn.Module)`, `from x import Dense`) is its own, not Keras's.
  const bound = (n: string): boolean =>
    new RegExp(`^\\s*(?:class|def)\\s+${n}\\b|^\\s*${n}\\s*=[^=]|^\\s*(?:from|import)\\b[^\\n]*\\b${n}\\b`, 'm').test(bare);
  const keras = Object.entries(KERAS_IMPORTS).filter(
    ([n]) => !Object.hasOwn(CONVENTIONAL_IMPORTS, n) && (/^[A-Z]/.test(n) || isKerasCode(code)) && !bound(n),
  );
  // A conventional name the code binds itself (`import keras`: Keras 3, not `from tensorflow import keras`) is its own.
  const conventional = Object.entries(CONVENTIONAL_IMPORTS).filter(([n]) => !bound(n));
  for (const [name, statement] of [...conventional, ...keras]) {
    if (!new RegExp(`(?<![.\\w])${name}\\s*[.(]`).test(bare)) continue;
    const top = /^\s*(?:from|import)\s+([\w]+)/.exec(statement)?.[1];
    if (top && !STDLIB.has(top)) mods.add(top);
  }
  return [...mods];
}

/** What needs the network in this code (dataset/weight downloads), in words. */
export function networkNeeds(code: string): string[] {
  return [...new Set(NETWORK_PATTERNS.filter((p) => p.re.test(code)).map((p) => p.what))];
}

const DATA_LOADER = regexLines()`
  \b(?:ImageFolder|DatasetFolder|read_csv|read_excel|read_json|read_parquet|read_table|loadtxt
  |genfromtxt|np\.load|torch\.load|load_img|imread|Image\.open|flow_from_directory
  |image_dataset_from_directory|load_from_disk|h5py\.File)\s*\(
`;
const DATA_PATH = regexLines('g')`
  (['"])((?:[A-Za-z]:[\\/]|\/(?:kaggle|content|home|Users|data|mnt|media|datasets|root|workspace)\/
  |~\/|\.{0,2}\/?[\w.-]+\/)[^'"\n]*|[^'"\n]*\.(?:csv|tsv|npy|npz|pt|pth|h5|hdf5|pkl|pickle|parquet
  |xlsx|jpg|jpeg|png|txt|json))\1
`;

/** Data files the code loads from paths that exist only on the reporter's machine. */
export function localDataNeeds(code: string): string[] {
  if (!DATA_LOADER.test(code)) return [];
  const paths = [...code.matchAll(DATA_PATH)].map((m) => m[2] ?? '').filter((p) => p && !/^https?:/.test(p) && !/\{/.test(p));
  return [...new Set(paths)].slice(0, 3);
}

export interface PlanInput {
  report: ReportResult;
  /** The completed tier-0 script when there is one (imports already added), else the joined blocks. */
  code: string;
  probe: EnvironmentProbe | null;
}

/**
 * Plan: modular steps (environment, data, model, run, assertion) and what stands in the way here
 * (downloads without network, packages this interpreter lacks). Pure: it decides from the report and
 * the probe; tier 1 gets the plan in its prompt.
 */
export function runPlan(input: PlanInput): ReproPlan {
  const { report, code, probe } = input;
  const imports = [...new Set([...importedModules(code), ...referencedModules(code)])];
  const notImportable = (m: string): boolean => probe !== null && m in probe.modules && probe.modules[m] === null;
  const missingModules = imports.filter(notImportable);
  const blockers: Blocker[] = [
    ...networkNeeds(code).map((what) => ({ kind: 'network' as const, what: `${what}; runs here have no network` })),
    ...missingModules.map((m) => ({ kind: 'missing_package' as const, what: `package \`${m}\` is not installed in this runner's Python` })),
    ...localDataNeeds(code).map((p) => ({
      kind: 'data' as const,
      what: `the report's data file(s) (\`${p}\`), which are on the reporter's machine, not in the report`,
    })),
  ];
  const versions = report.reading.versions.map((v) => `${v.name}==${v.version}`).join(', ');
  const installed = probe
    ? Object.entries(probe.modules)
        .filter(([, v]) => v)
        .map(([k, v]) => (v === 'installed' ? k : `${k} ${v}`))
    : [];
  const absent = probe
    ? Object.entries(probe.modules)
        .filter(([, v]) => v === null)
        .map(([k]) => k)
    : [];
  const dataFacts = report.facts.dataDescriptions.filter((d) => d.startsWith('code '));
  const loadsData = dataFacts.some((d) => d.startsWith('code loads data')) || blockers.some((b) => b.kind !== 'missing_package');
  const showsNoData = dataFacts.some((d) => d.startsWith('code uses data it does not show'));
  // A missing package anywhere in the report's code rules its data path out too: the model must not be sent
  // back to a loader that cannot import here.
  const dataStrategy: ReproPlan['dataStrategy'] =
    loadsData || missingModules.length || showsNoData ? 'synthetic' : code.trim() ? 'report_code' : 'synthetic';
  const expected = report.reading.expected;
  const assertion = expected.length
    ? expected
        .map((s) =>
          s.exception
            ? `the run ends with ${s.exception.type}: ${s.exception.message}`
            : `the run shows ${s.kind.replace(/_/g, ' ')}${s.metric ? ` in ${s.metric}` : ''}`,
        )
        .join('; and ')
    : 'the behaviour the report describes (it shows no error or output to match)';
  const missingText = missingModules.map((m) => `\`${m}\``).join(', ');
  const why = [
    ...(missingModules.length ? [`it needs ${missingText}, which ${missingModules.length === 1 ? 'is' : 'are'} not installed here`] : []),
    ...(loadsData ? ['it loads files or downloads that are not here'] : []),
    ...(showsNoData ? ['the report does not show where its batches come from'] : []),
  ];
  const steps: PlanStep[] = [
    {
      kind: 'environment',
      description: probe
        ? `Python ${probe.python} with ` +
          `${installed.join(', ') || 'the standard library only'}${versions ? `; the report used ${versions}` : ''}; ` +
          `CPU${probe.cuda ? ' and CUDA' : ' only, no CUDA'}; no ` +
          `network.${absent.length ? ` Not installed here, never import: ${absent.join(', ')}.` : ''}`
        : `Python of unknown contents${versions ? `; the report used ${versions}` : ''}; no network.`,
    },
    {
      kind: 'data',
      description:
        dataStrategy === 'synthetic'
          ? `Do not use the report's own data ` +
            `path${why.length ? ` (${why.join('; ')})` : ''}${dataFacts.length ? `. What the report shows of it: ${dataFacts.slice(0, 3).join('; ')}` : ''}. ` +
            `Generate synthetic tensors with torch/numpy of the same shapes and dtypes, seeded from REPGEN_SEED.`
          : `Use the data the report's code builds itself${dataFacts.length ? ` (${dataFacts.slice(0, 2).join('; ')})` : ''}.`,
    },
    {
      kind: 'model',
      description: report.facts.pythonBlocks.length
        ? missingModules.length
          ? `Use the report's own model/code where it carries the bug, but it imports ${missingText}, not ` +
            `installed here: rebuild what needs ${missingModules.length === 1 ? 'it' : 'them'} with installed ` +
            `packages only and never import ${missingText}.`
          : "Use the report's own model/code, unchanged where it carries the bug."
        : `Write the smallest model/code that exercises: ${report.bug.coreProblem}`,
    },
    {
      kind: 'run',
      description:
        "One self-contained script, CPU, seconds not minutes: few epochs, small batches, print metrics per step/epoch in the report's format.",
    },
    {
      kind: 'assertion',
      description: `Let the bug show by itself: ${assertion}. Never raise the reported exception or print the reported text yourself.`,
    },
  ];
  return { steps, dataStrategy, assertion, blockers, imports, missingModules };
}
