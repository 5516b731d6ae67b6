import { NETWORK_PATTERNS } from '../agent/conventions.js';
import type { ReportResult } from '../report/types.js';
import type { Blocker, EnvironmentProbe, PlanStep, ReproPlan } from './types.js';

export * from './types.js';
export { probeEnvironment, environmentRecord } from './probe-environment.js';

/** Standard-library modules never worth probing. */
const STDLIB = new Set(['os', 'sys', 'math', 'time', 'random', 'json', 're', 'copy', 'collections', 'itertools', 'functools', 'typing', 'dataclasses', 'pathlib', 'abc', 'argparse', 'logging', 'warnings', 'pickle', 'io', 'string', 'datetime', 'glob', 'shutil', 'subprocess', 'threading', 'multiprocessing', 'enum', 'operator', 'statistics', 'csv', 'gc', 'inspect', 'traceback', 'contextlib', 'tempfile', 'unittest', 'platform', 'struct', 'uuid', 'hashlib', 'heapq', 'bisect', 'queue', 'signal', 'socket', 'zipfile', 'gzip', 'textwrap', 'pprint', '__future__']);

/** Top-level module names a script imports (pure). */
export function importedModules(code: string): string[] {
  const mods = new Set<string>();
  for (const m of code.matchAll(/^\s*(?:from\s+([\w.]+)\s+import\b|import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*))/gm)) {
    const names = m[1] ? [m[1]] : (m[2] ?? '').split(',').map((s) => s.trim().split(/\s+/)[0] ?? '');
    for (const n of names) {
      const top = n.split('.')[0];
      if (top && !n.startsWith('.') && !STDLIB.has(top)) mods.add(top);
    }
  }
  return [...mods];
}

/** What needs the network in this code (dataset/weight downloads), in words. */
export function networkNeeds(code: string): string[] {
  return [...new Set(NETWORK_PATTERNS.filter((p) => p.re.test(code)).map((p) => p.what))];
}

const DATA_LOADER = /\b(?:ImageFolder|DatasetFolder|read_csv|read_excel|read_json|read_parquet|read_table|loadtxt|genfromtxt|np\.load|torch\.load|load_img|imread|Image\.open|flow_from_directory|image_dataset_from_directory|load_from_disk|h5py\.File)\s*\(/;
const DATA_PATH = /(['"])((?:[A-Za-z]:[\\/]|\/(?:kaggle|content|home|Users|data|mnt|media|datasets|root|workspace)\/|~\/|\.{0,2}\/?[\w.-]+\/)[^'"\n]*|[^'"\n]*\.(?:csv|tsv|npy|npz|pt|pth|h5|hdf5|pkl|pickle|parquet|xlsx|jpg|jpeg|png|txt|json))\1/g;

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
  const imports = importedModules(code);
  const missingModules = probe ? imports.filter((m) => probe.modules[m] === null) : [];
  const blockers: Blocker[] = [
    ...networkNeeds(code).map((what) => ({ kind: 'network' as const, what: `${what}; runs here have no network` })),
    ...missingModules.map((m) => ({ kind: 'missing_package' as const, what: `package \`${m}\` is not installed in this runner's Python` })),
    ...localDataNeeds(code).map((p) => ({ kind: 'data' as const, what: `the report's data file(s) (\`${p}\`), which are on the reporter's machine, not in the report` })),
  ];
  const versions = report.reading.versions.map((v) => `${v.name}==${v.version}`).join(', ');
  const here = probe ? Object.entries(probe.modules).filter(([, v]) => v && v !== 'installed').map(([k, v]) => `${k} ${v}`).join(', ') : 'unknown';
  const loadsData = report.facts.dataDescriptions.some((d) => d.startsWith('code loads data')) || blockers.some((b) => b.kind !== 'missing_package');
  const dataStrategy: ReproPlan['dataStrategy'] = loadsData ? 'synthetic' : code.trim() ? 'report_code' : 'synthetic';
  const expected = report.reading.expected;
  const assertion = expected.length
    ? expected.map((s) => (s.exception ? `the run ends with ${s.exception.type}: ${s.exception.message}` : `the run shows ${s.kind.replace(/_/g, ' ')}${s.metric ? ` in ${s.metric}` : ''}`)).join('; and ')
    : 'the behaviour the report describes (it shows no error or output to match)';
  const steps: PlanStep[] = [
    { kind: 'environment', description: `Python with ${here}${versions ? `; the report used ${versions}` : ''}; CPU${probe?.cuda ? ' and CUDA' : ' only, no CUDA'}; no network.` },
    {
      kind: 'data',
      description:
        dataStrategy === 'synthetic'
          ? `The report's data is not available here${report.facts.dataDescriptions.length ? ` (${report.facts.dataDescriptions.slice(0, 3).join('; ')})` : ''}: generate synthetic tensors with the same shapes and dtypes, seeded from REPGEN_SEED.`
          : 'Use the data the report\'s code builds itself.',
    },
    { kind: 'model', description: report.facts.pythonBlocks.length ? 'Use the report\'s own model/code, unchanged where it carries the bug.' : `Write the smallest model/code that exercises: ${report.bug.coreProblem}` },
    { kind: 'run', description: 'One self-contained script, CPU, seconds not minutes: few epochs, small batches, print metrics per step/epoch in the report\'s format.' },
    { kind: 'assertion', description: `Let the bug show by itself: ${assertion}. Never raise the reported exception or print the reported text yourself.` },
  ];
  return { steps, dataStrategy, assertion, blockers, imports, missingModules };
}
