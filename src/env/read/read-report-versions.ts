import { normalizeName } from './requirement-line.js';

/**
 * The versions a bug report states, in every form reporters paste them: issue templates (`- PyTorch version
 * (GPU?): 2.8.0+cu129`, `- diffusers version: 0.35.0`), `transformers env`, PyTorch's `collect_env`
 * (`PyTorch version: 2.0.1`, `[pip3] numpy==1.24.3`, `Is CUDA available: False`), Lightning's env details
 * (`- torch: 2.0.0`), `pip freeze`, `pip list` and `conda list` tables, `torch.__version__` printouts, and
 * prose (`torch 2.1.0`, `since version 1.0.7`). Pure.
 */

export interface ReportedVersion {
  /** PEP 503 distribution name (`torch`, `pytorch-lightning`). */
  name: string;
  /** The public version, local part cut (`2.8.0`). */
  version: string;
  /** The local part (`cu129`, `cpu`), null when none. */
  local: string | null;
  /** How sure the form is: `stated` (a template, env dump, pin or printout), `listed` (a pip/conda table), `prose`. */
  form: 'stated' | 'listed' | 'prose';
  /** The report's line, clipped. */
  why: string;
}

export interface ReportEnvironment {
  versions: ReportedVersion[];
  /** `3.10.12` or `3.10`, null when the report names none. */
  python: string | null;
  pythonWhy: string | null;
  /** CUDA version the reporter's torch was built for or runs (`12.9`), null when none is named. */
  cuda: string | null;
  cudaWhy: string | null;
  /** Whether the reporter ran on a GPU, when the report says (`Is CUDA available: False` → false). */
  gpu: boolean | null;
  /** Versions named with no package (`since version 1.0.7`): the project's own, most likely. */
  unnamed: Array<{ version: string; why: string }>;
}

/** How reporters name distributions → their PyPI names. */
const ALIASES: Record<string, string> = {
  pytorch: 'torch',
  'pytorch lightning': 'pytorch-lightning',
  'pytorch-lightning': 'pytorch-lightning',
  lightning: 'lightning',
  tensorflow: 'tensorflow',
  'tensorflow-gpu': 'tensorflow',
  tf: 'tensorflow',
  sklearn: 'scikit-learn',
  'scikit learn': 'scikit-learn',
  huggingface_hub: 'huggingface-hub',
  'huggingface hub': 'huggingface-hub',
  xformers: 'xformers',
  torchvision: 'torchvision',
  'torch vision': 'torchvision',
  cv2: 'opencv-python',
  opencv: 'opencv-python',
};
/** Things with a version that are no distribution of an env. */
const NOT_PACKAGES = new Set([
  'python',
  'cuda',
  'cudnn',
  'cuda/cudnn',
  'cuda runtime',
  'nvidia driver',
  'driver',
  'os',
  'platform',
  'gcc',
  'clang',
  'cmake',
  'libc',
  'rocm',
  'hip',
  'mps',
  'xla',
  'gpu',
  'cpu',
  'system',
  'distro',
  'ubuntu',
  'debian',
  'windows',
  'macos',
  'linux',
  'kernel',
  'conda',
  'pip',
  'nccl',
  'mkl',
  'is debug build',
  'jaxlib backend',
  'model',
  'release',
  'version',
  'bitsandbytes cuda',
]);
/** Distributions whose name reporters write in prose (`torch 2.1.0`, `with numpy 1.26`). */
const PROSE_NAMES = [
  'torch',
  'pytorch',
  'torchvision',
  'torchaudio',
  'numpy',
  'tensorflow',
  'keras',
  'jax',
  'jaxlib',
  'transformers',
  'diffusers',
  'accelerate',
  'lightning',
  'pytorch-lightning',
  'pandas',
  'scipy',
  'timm',
  'peft',
  'datasets',
  'tokenizers',
  'onnx',
  'onnxruntime',
  'triton',
  'xformers',
];

const VERSION = String.raw`v?(\d+(?:\.\d+)+(?:(?:a|b|rc|\.post|\.dev)\d+)*(?:\+[\w.]+)?)`;
// Anything before the name that is no word (`- 🤗 Diffusers version:`, `#- `, `> * `) is the template's decoration.
const TEMPLATE = new RegExp(String.raw`^[^A-Za-z0-9\n]*?\`?([A-Za-z][\w./ -]*?)\`?\s+[Vv]ersion\b[^:\n]{0,60}?:\s*\`?${VERSION}`);
const DASH_COLON = new RegExp(String.raw`^\s*[-*]\s+\`?([A-Za-z][\w.-]*)\`?\s*:\s*\`?${VERSION}\`?\s*$`);
const PIN = new RegExp(String.raw`^\s*(?:\[(?:pip3?|conda)\]\s*)?[-*]?\s*([A-Za-z][\w.-]*)(?:\[[\w,.-]+\])?\s*===?\s*${VERSION}`);
const TABLE_ROW = new RegExp(String.raw`^\s*(?:\[(?:pip3?|conda)\]\s*)?([A-Za-z][\w.-]*)\s+${VERSION}(?:\s+\S+){0,3}\s*$`);
const PRINTED = new RegExp(String.raw`^\s*(?:Out\[\d+\]:\s*)?['"]?${VERSION}['"]?\s*$`);

function clip(line: string): string {
  const s = line.trim();
  return s.length > 160 ? `${s.slice(0, 157)}…` : s;
}

function splitLocal(v: string): { version: string; local: string | null } {
  const plus = v.indexOf('+');
  return plus < 0 ? { version: v, local: null } : { version: v.slice(0, plus), local: v.slice(plus + 1) };
}

/** A reporter's name for a package → its distribution name, null when it names no package. */
export function reportedName(raw: string): string | null {
  const n = raw
    .replace(/\(.*?\)/g, '')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase();
  if (!n || NOT_PACKAGES.has(n)) return null;
  const alias = ALIASES[n];
  if (alias) return alias;
  if (/\s/.test(n)) return null;
  return normalizeName(n);
}

export function readReportVersions(text: string): ReportEnvironment {
  const env: ReportEnvironment = { versions: [], python: null, pythonWhy: null, cuda: null, cudaWhy: null, gpu: null, unnamed: [] };
  const rank = { stated: 0, listed: 1, prose: 2 } as const;
  const found = new Map<string, ReportedVersion>();
  const add = (rawName: string, rawVersion: string, form: ReportedVersion['form'], line: string) => {
    const name = reportedName(rawName);
    if (!name) return;
    const { version, local } = splitLocal(rawVersion.replace(/[.,;:)]+$/, ''));
    const prev = found.get(name);
    if (prev && rank[prev.form] <= rank[form]) return;
    found.set(name, { name, version, local, form, why: clip(line) });
    if (local && /^cu\d{3,}$/.test(local) && !env.cuda) {
      env.cuda = `${local.slice(2, -1)}.${local.slice(-1)}`;
      env.cudaWhy = clip(line);
    }
  };
  const lines = text.split(/\r?\n/).map((l) => (l.length > 2000 ? '' : l));
  const tableRows = tableRowIndexes(lines);
  lines.forEach((line, i) => {
    readSpecialLines(line, env);
    const t = TEMPLATE.exec(line);
    if (t) return add(t[1] ?? '', t[2] ?? '', 'stated', line);
    const p = PIN.exec(line);
    if (p) return add(p[1] ?? '', p[2] ?? '', 'stated', line);
    const d = DASH_COLON.exec(line);
    if (d) return add(d[1] ?? '', d[2] ?? '', 'stated', line);
    const printed = readVersionPrintout(lines, i);
    if (printed) return add(printed.module, printed.version, 'stated', printed.why);
    if (tableRows.has(i)) {
      const r = TABLE_ROW.exec(line);
      if (r) return add(r[1] ?? '', r[2] ?? '', 'listed', line);
    }
    for (const m of line.matchAll(PROSE)) add(m[1] ?? '', m[2] ?? '', 'prose', line);
    for (const m of line.matchAll(/\b(?:since|from|in|on|with|after|before|until)\s+(?:version|release|v)\s*v?(\d+\.\d+(?:\.\d+)*)\b/gi)) {
      if (env.unnamed.length < 5) env.unnamed.push({ version: m[1] ?? '', why: clip(line) });
    }
  });
  env.versions = [...found.values()];
  return env;
}

const PROSE = new RegExp(
  String.raw`(?<![\w.-])(${PROSE_NAMES.map((n) => n.replace(/-/g, '[-_ ]')).join('|')})(?:\s+version)?(?:\s*[:=]\s*|\s+|==)${VERSION}(?!\w|\.\d)`,
  'gi',
);

/** Rows of pip list / conda list tables: a header line, or a run of three or more `name  version` lines. */
function tableRowIndexes(lines: string[]): Set<number> {
  const out = new Set<number>();
  let inTable = false;
  let run: number[] = [];
  const flush = () => {
    if (run.length >= 3) run.forEach((i) => out.add(i));
    run = [];
  };
  lines.forEach((line, i) => {
    if (/^\s*#?\s*(?:Package|Name)\s+Version\b/.test(line)) {
      inTable = true;
      return;
    }
    if (/^[\s-]+$/.test(line) && inTable) return;
    if (TABLE_ROW.test(line)) {
      if (inTable) out.add(i);
      else run.push(i);
      return;
    }
    inTable = false;
    flush();
  });
  flush();
  return out;
}

/** `>>> torch.__version__` then `'2.1.0+cu118'`; `print(np.__version__)` then `1.26.4`; `torch.__version__ = 2.1.0`. */
function readVersionPrintout(lines: string[], i: number): { module: string; version: string; why: string } | null {
  const line = lines[i] ?? '';
  const m = /([A-Za-z_][\w]*)\.__version__/.exec(line);
  if (!m) return null;
  const module =
    ({ np: 'numpy', pd: 'pandas', tf: 'tensorflow', pl: 'pytorch-lightning', L: 'lightning' } as Record<string, string>)[m[1] ?? ''] ??
    m[1] ??
    '';
  const inline = new RegExp(String.raw`__version__\W{0,8}?['"]?${VERSION}`).exec(line);
  if (inline) return { module, version: inline[1] ?? '', why: clip(line) };
  for (let j = i + 1; j < Math.min(lines.length, i + 4); j++) {
    const next = lines[j] ?? '';
    if (!next.trim() || /^\s*```/.test(next)) continue;
    const p = PRINTED.exec(next);
    if (p) return { module, version: p[1] ?? '', why: clip(`${line.trim()} → ${next.trim()}`) };
    break;
  }
  return null;
}

/** Python, CUDA and GPU lines, which name no distribution. */
function readSpecialLines(line: string, env: ReportEnvironment): void {
  // Templates put examples in parentheses (`Python version (e.g., 3.9): 3.8`): never the answer.
  const bare = line.replace(/\([^)]*\)/g, '');
  const py = /\bPython(?:\s+version)?[^:\n\d]{0,30}[:=]?\s*v?(3\.\d{1,2}(?:\.\d+)?)\b/i.exec(bare);
  if (py && !env.python && !/python_requires|requires-python/i.test(line)) {
    env.python = py[1] ?? null;
    env.pythonWhy = clip(line);
  }
  const cuda = /\bCUDA(?:\/cuDNN)?(?: used to build PyTorch| runtime)?(?:\s+version)?[^:\n\d]{0,20}:\s*(\d+\.\d+)/i.exec(line);
  if (cuda && !env.cuda) {
    env.cuda = cuda[1] ?? null;
    env.cudaWhy = clip(line);
  }
  const avail = /\b(?:Is CUDA available|CUDA available|available)\s*:\s*(True|False|Yes|No)\b/i.exec(line);
  const gpuFlag = /\(GPU\?\)\s*:\s*\S+\s*\((True|False)\)/i.exec(line);
  const flag = avail?.[1] ?? gpuFlag?.[1];
  if (flag && env.gpu === null) env.gpu = /^(true|yes)$/i.test(flag);
}
