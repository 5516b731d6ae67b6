import { pythonLikelihood } from '../context/python-syntax.js';
import type { ReportReading } from '../symptoms/types.js';
import { notebookStatements } from './notebook-statements.js';
import type { ReportFacts } from './types.js';
import { regexLines } from '../regex.js';
import { resolveScriptCalls } from '../context/resolve-script-calls.js';

const PYTHON_LANGS = new Set(['python', 'py', 'python3', 'ipython', 'pycon', 'ipython3']);
const OTHER_LANGS = new Set([
  'c',
  'cpp',
  'c++',
  'cuda',
  'java',
  'javascript',
  'js',
  'ts',
  'typescript',
  'go',
  'rust',
  'rs',
  'bash',
  'sh',
  'shell',
  'console',
  'powershell',
  'r',
  'julia',
  'matlab',
  'scala',
  'kotlin',
  'swift',
  'cs',
  'csharp',
  'lua',
  'ruby',
  'php',
  'sql',
  'dockerfile',
  'makefile',
  'cmake',
]);
const OUTPUT_LANGS = new Set([
  'text',
  'txt',
  'log',
  'output',
  'plain',
  'plaintext',
  'stderr',
  'stdout',
  'pytb',
  'traceback',
  'yaml',
  'yml',
  'json',
  'toml',
  'ini',
  'diff',
  'markdown',
  'md',
  'html',
  'xml',
  'csv',
]);

/** Output, tracebacks and version lists pasted in unlabelled fences: not code. */
function looksLikeOutput(code: string): boolean {
  const lines = code.split('\n').filter((l) => l.trim());
  if (!lines.length) return true;
  if (/^\s*Traceback \(most recent call last\)/m.test(code)) return true;
  const versionish = lines.filter((l) => /^[\w.-]+\s*(==|>=|:)\s*[\w.+-]+\s*$/.test(l.trim())).length;
  if (versionish / lines.length > 0.6) return true;
  const outputish = lines.filter((l) => /^\s*(tensor\(|\[|\(|Epoch\b|epoch\b|[\d.eE+-]+\s*$|\w+Error:|Warning:)/.test(l)).length;
  return outputish / lines.length > 0.6;
}

function looksLikeOtherLanguage(code: string): boolean {
  return regexLines('m')`
    #include\s*[<"]|\bint\s+main\s*\(|\bstd::|\bpublic\s+static\s+void\b|\bconsole\.log\(
    |\bfunction\s+\w+\s*\(.*\)\s*\{|^\s*(?:const|let)\s+\w+\s*=.*;\s*$|\bfn\s+main\s*\(
    |\bpackage\s+main\b
  `.test(code);
}

/** A shell line: a prompt, a command run from the shell (`pip install x`, `python a.py`), an env assignment. */
const SHELL_LINE = regexLines()`
  ^\s*(?:[$%>]\s|#!|(?:sudo|pip3?|python3?|conda|mamba|uv|git|cd|ls|export|source|apt(?:-get)?|brew|wget|curl|nvidia-smi
  |bash|sh|echo|mkdir|rm|cp|mv|docker|torchrun|accelerate|make|cmake|npm)\b(?!\s*[=.(\[:,]))
`;

/**
 * Code in a fence labelled as another language that is Python all the same: every line parses as Python, it has a
 * Python construct (an import, a definition, a call or an assignment), and no line is a shell command. Real shell
 * blocks (`pip install x`, `$ python a.py`) stay shell.
 */
async function isPythonUnderOtherLabel(code: string): Promise<boolean> {
  const lines = code.split('\n').filter((l) => l.trim() && !/^\s*#/.test(l));
  if (!lines.length || lines.some((l) => SHELL_LINE.test(l))) return false;
  if (!/^\s*(?:import\s+[\w.]+|from\s+[\w.]+\s+import\b|def\s+\w+\s*\(|class\s+\w+)|\w\s*\(|^\s*[\w.[\], ]+\s*=[^=]/m.test(code))
    return false;
  return (await pythonLikelihood(code)) === 1;
}

const HARDWARE = regexLines('gi')`
  \b(?:(?:RTX|GTX|Quadro|Tesla)\s?[A-Z]?\d{3,4}\w*|[AHVTLP]\d{2,3}(?:\s?(?:GPU|80GB|40GB|16GB|32GB))?
  |TPU(?:\s?v\d)?|Apple\s+M[1-4]\w*|MPS|ROCm|CUDA\s*(?:version\s*)?\d+(?:\.\d+)?|cuDNN\s*\d[\d.]*
  |cuda:\d|CPU[- ]only|on (?:the )?CPU|no GPU|multi-GPU|DataParallel|DistributedDataParallel)\b
  |\.cuda\(\)
`;

const DATA = regexLines('i')`
  \b(?:dataset|data set|dataloader|csv|tsv|parquet|images?|samples?|MNIST|FashionMNIST|CIFAR-?\d+
  |ImageNet|COCO|IMDB|SST-?2|GLUE|shape|torch\.Size|batch of|my data|training data|\.npy|\.h5|\.pkl)\b
`;

function attachmentKind(url: string): ReportFacts['attachments'][number]['kind'] {
  const u = url.toLowerCase().split('?')[0] ?? '';
  if (/\.(zip|tar|tgz|gz|bz2|xz|7z|rar)$/.test(u)) return 'archive';
  if (/\.(pt|pth|ckpt|bin|safetensors|h5|hdf5|onnx|pb|keras)$/.test(u)) return 'weights';
  if (/\.(npy|npz|csv|tsv|parquet|pkl|pickle|json|jsonl|txt)$/.test(u)) return 'data';
  if (/\.ipynb$/.test(u)) return 'notebook';
  if (/\.(png|jpe?g|gif|webp|svg|bmp)$/.test(u)) return 'image';
  return 'other';
}

const clipCode = (s: string): string => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > 120 ? `${flat.slice(0, 117)}…` : flat;
};

/** Calls that make tensors/arrays/frames out of nothing or out of literals: the code builds its data. */
const BUILDS = regexLines()`
  ^\s*([A-Za-z_][\w, ()[\]]*?)\s*=\s*((?:torch|np|numpy|pd|tf|jnp)\.(?:tensor|Tensor|FloatTensor
  |LongTensor|as_tensor|from_numpy|randn|rand|randint|randn_like|rand_like|zeros|ones|full|arange
  |linspace|eye|empty|array|asarray|random\.\w+|DataFrame|constant|convert_to_tensor)\s*\(.*
  |\[\s*\[?\s*-?\d[\d.,\s[\]-]*\]?.*|(?:TensorDataset|make_classification|make_regression|make_blobs
  |make_moons)\s*\(.*)$
`;
/** Calls that read data from files, hubs or dataset classes: the code loads its data. */
const LOADS = regexLines('g')`
  \b(?:datasets\.\w+\([^)\n]*\)?|pd\.read_\w+\([^)\n]*\)?|np\.(?:load|loadtxt
  |genfromtxt)\w*\([^)\n]*\)?|torch\.load\([^)\n]*\)?|load_dataset\([^)\n]*\)?|ImageFolder\([^)\n]*\)?
  |DatasetFolder\([^)\n]*\)?|Image\.open\([^)\n]*\)?|cv2\.imread\([^)\n]*\)?|h5py\.File\([^)\n]*\)?
  |flow_from_directory\([^)\n]*\)?|image_dataset_from_directory\([^)\n]*\)?|(?:keras
  |tf\.keras)\.datasets\.\w+\.load_data\(\))
`;
/** Names that conventionally hold data or a batch source (not attributes: `self.features` is a layer). */
const LOADER_NAME = regexLines('g')`
  (?<![.\w])((?:[A-Za-z]\w*_)?(?:loader|dataloader|dataset|data|features|targets|labels|inputs|images)
  |[xXyY]_(?:train|test|val|valid))(?![\w(])
`;

/**
 * What the report's code shows of its data, deterministically: data it builds (tensors from literals or
 * random calls, DataFrames, TensorDatasets), data it loads (files, dataset classes, hubs) and data it uses
 * without showing where it comes from (a `train_loader` it never defines). Pure.
 */
export function dataInCode(code: string): string[] {
  const out: string[] = [];
  const add = (s: string) => {
    if (!out.includes(s) && out.length < 12) out.push(s);
  };
  const lines = code.split('\n');
  for (const line of lines) {
    // Top-level lines only: inside functions the same calls make intermediate tensors, not the data.
    if (line.length > 2000 || /^\s/.test(line)) continue;
    const m = BUILDS.exec(line);
    if (m) add(`code builds data: \`${clipCode(line)}\``);
  }
  for (const m of code.matchAll(LOADS)) add(`code loads data: \`${clipCode(m[0])}\``);
  // Names are read with strings and comments blanked (a path 'data/x' names nothing), keyword arguments skipped.
  const bare = code.replace(/("""|'''|"|')(?:\\.|(?!\1)[^\\\n])*\1/g, '""').replace(/#[^\n]*/g, '');
  const defined = new Set<string>();
  for (const m of bare.matchAll(
    /^[ \t]*(?!def\b|class\b|if\b|elif\b|while\b|return\b)(?:for\s+)?([\w, ()[\]]+?)\s*(?:[-+*/]?=(?!=)|\bin\b)/gm,
  ))
    for (const n of (m[1] ?? '').split(/[\s,()[\]]+/)) if (n) defined.add(n);
  const unseen = [
    ...new Set(
      [...bare.matchAll(LOADER_NAME)].filter((m) => !/^\s*=(?!=)/.test(bare.slice((m.index ?? 0) + m[0].length))).map((m) => m[1] ?? ''),
    ),
  ].filter((n) => n && !defined.has(n));
  if (unseen.length)
    add(
      `code uses data it does not show: ${unseen
        .slice(0, 4)
        .map((n) => `\`${n}\``)
        .join(', ')}`,
    );
  return out;
}

/**
 * Deterministic facts beyond the symptom reader: which blocks are Python, hardware hints, data
 * descriptions, attachments. Pure: the body in, facts out.
 */
export async function extractFacts(
  body: string,
  reading: ReportReading,
  { bodyChars = body.length, truncated = false } = {},
): Promise<ReportFacts> {
  const pythonBlocks: string[] = [];
  const otherLanguageBlocks: ReportFacts['otherLanguageBlocks'] = [];
  for (const block of reading.codeBlocks) {
    const lang = block.lang.trim().toLowerCase();
    const code = block.code;
    const firstLine = (code.split('\n').find((l) => l.trim()) ?? '').trim().slice(0, 120);
    if (OUTPUT_LANGS.has(lang)) continue;
    if (OTHER_LANGS.has(lang)) {
      // Issue templates put Python under other labels (kornia's in a ```bash fence): the code decides, not the label.
      if (await isPythonUnderOtherLabel(code)) pythonBlocks.push(code);
      else otherLanguageBlocks.push({ lang, firstLine });
      continue;
    }
    if (PYTHON_LANGS.has(lang)) {
      if (!looksLikeOutput(code) || /^\s*>>>/m.test(code)) pythonBlocks.push(code);
      continue;
    }
    if (looksLikeOutput(code)) continue;
    if (looksLikeOtherLanguage(code)) {
      otherLanguageBlocks.push({ lang: lang || 'unlabelled', firstLine });
      continue;
    }
    // Unlabelled or odd labels: Python when tree-sitter reads most of it as Python.
    if ((await pythonLikelihood(code)) >= 0.8 && /\b(import|def|class|torch|tf\.|np\.|=|\()/.test(code)) pythonBlocks.push(code);
  }

  const prose = body.replace(/```[\s\S]*?```/g, ' ');
  const hardwareHints = [...new Set([...body.matchAll(HARDWARE)].map((m) => m[0].trim()))].slice(0, 20);
  const dataDescriptions: string[] = [];
  for (const sentence of prose.split(/(?<=[.!?])\s+|\n+/)) {
    const s = sentence.trim();
    if (s.length > 8 && s.length < 400 && DATA.test(s) && !dataDescriptions.includes(s)) dataDescriptions.push(s);
    if (dataDescriptions.length >= 10) break;
  }
  // What the code itself says about the data comes first: it is what a reproduction can reuse.
  const fromCode = dataInCode(pythonBlocks.join('\n'));
  dataDescriptions.unshift(...fromCode.filter((d) => !dataDescriptions.includes(d)));
  dataDescriptions.splice(24);

  const attachments: ReportFacts['attachments'] = [];
  for (const m of body.matchAll(/\bhttps?:\/\/[^\s)<>\]"']+/g)) {
    const url = m[0];
    const kind = attachmentKind(url);
    if (kind !== 'other' || /user-attachments|\/files\/\d+\//.test(url)) attachments.push({ url, kind });
  }

  const tracebackModuleLines = [
    ...reading.tracebacks.flatMap((t) => t.frames.filter((f) => f.function === '<module>' && f.code).map((f) => f.code ?? '')),
    // Notebook tracebacks (IPython's own format) are not Python tracebacks; their cell's marked line is what ran.
    ...notebookStatements(body),
  ];
  const allCode = pythonBlocks.join('\n');
  const frameworks = await reportFrameworks(allCode);
  return {
    pythonBlocks,
    otherLanguageBlocks,
    hardwareHints,
    dataDescriptions,
    attachments,
    tracebackModuleLines,
    frameworks,
    bodyChars,
    truncated,
  };
}

const FRAMEWORKS = ['torch', 'tensorflow', 'keras', 'jax', 'flax', 'transformers', 'lightning', 'pytorch_lightning', 'sklearn', 'numpy'];

/**
 * The frameworks the report's code runs, by the module each import names (`import torch as K` is torch, whatever
 * the report calls it; `from tensorflow import keras` is TensorFlow's Keras). Code that shows no import of a
 * framework is read by its conventional names (`tf.`, `torch.`) instead.
 */
async function reportFrameworks(code: string): Promise<string[]> {
  const { imported } = await resolveScriptCalls(code);
  const inKeras = (m: string): boolean => /^(?:tensorflow(?:\.python)?\.keras|tf_keras)(?:\.|$)/.test(m);
  const byImport = FRAMEWORKS.filter((fw) => imported.some((m) => m === fw || m.startsWith(`${fw}.`) || (fw === 'keras' && inKeras(m))));
  if (byImport.length) return byImport;
  return FRAMEWORKS.filter((fw) => new RegExp(`\\b${fw === 'tensorflow' ? 'tf' : fw}\\.`, 'm').test(code));
}
