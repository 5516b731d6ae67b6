import { parse as parseYaml } from 'yaml';
import { parseRequirement, type ParsedRequirement } from './requirement-line.js';

/**
 * `requirements*.txt` (following `-r other.txt` inside the repository) and conda's `environment.yml`,
 * read as text. Editable installs, URLs, paths and options are left out: the env takes distributions from
 * an index. Pure.
 */

/** A requirement as a file of the repository declares it. */
export interface DeclaredRequirement {
  req: ParsedRequirement;
  /** `requirements.txt:3`, `pyproject.toml [project].dependencies`, `setup.py install_requires`. */
  where: string;
  /** The line or string as written. */
  text: string;
}

/** Deepest `-r` chain followed (a file that includes one that includes one…); deeper is an error, never a silent cut. */
export const MAX_INCLUDE_DEPTH = 20;
/** Most requirement lines read through one file and its includes; more is an error (no project declares that many). */
export const MAX_REQUIREMENTS = 20_000;

/** A requirement file (with its includes) past a ceiling: the env spec fails with this message, said in the outcome. */
export class RequirementFilesError extends Error {
  override name = 'RequirementFilesError';
}

interface Frame {
  path: string;
  dir: string;
  lines: string[];
  next: number;
}

/**
 * The requirements of `path` among `files` (path → text), `-r`/`--requirement` includes followed in place, each
 * file once. Iterative, with a ceiling on the include depth and on the requirements read: a chain of files holding
 * 1.77 M lines overflowed the stack when each level was spread into its parent's list.
 * @throws RequirementFilesError past {@link MAX_INCLUDE_DEPTH} or {@link MAX_REQUIREMENTS}.
 */
export function readRequirementsFile(path: string, files: ReadonlyMap<string, string>): DeclaredRequirement[] {
  const out: DeclaredRequirement[] = [];
  const seen = new Set<string>();
  const stack: Frame[] = [];
  const open = (p: string): void => {
    const text = files.get(p);
    if (text === undefined || seen.has(p)) return;
    if (stack.length >= MAX_INCLUDE_DEPTH)
      throw new RequirementFilesError(`${path}: its -r includes go deeper than ${MAX_INCLUDE_DEPTH} files (at ${p})`);
    seen.add(p);
    // Continuation lines (`\` at the end) join before anything else, as pip reads them.
    const lines = text.replace(/\\\r?\n/g, ' ').split(/\r?\n/);
    stack.push({ path: p, dir: p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '', lines, next: 0 });
  };
  open(path);
  while (stack.length) {
    const frame = stack[stack.length - 1]!;
    if (frame.next >= frame.lines.length) {
      stack.pop();
      continue;
    }
    const i = frame.next++;
    const line = (frame.lines[i] ?? '').replace(/(^|\s)#.*$/, '').trim();
    if (!line) continue;
    const include = /^(?:-r|--requirement)(?:\s+|=)(\S+)$/.exec(line);
    if (include) {
      const target = joinPath(frame.dir, include[1] ?? '');
      if (target !== null) open(target);
      continue;
    }
    // Options (`-e .`, `--index-url`, `-c constraints.txt`, `--hash`), URLs and local paths are not index requirements.
    if (/^-/.test(line) || /^[a-z+]+:\/\//i.test(line) || /^[./~]/.test(line) || /\.(whl|tar\.gz|zip)$/.test(line)) continue;
    const req = parseRequirement(line.replace(/\s+--hash=\S+/g, ''));
    if (!req) continue;
    if (out.length >= MAX_REQUIREMENTS)
      throw new RequirementFilesError(`${path}: more than ${MAX_REQUIREMENTS} requirements through its -r includes`);
    out.push({ req, where: `${frame.path}:${i + 1}`, text: line });
  }
  return out;
}

/** `a/b` + `../c.txt` → `a/c.txt`; null when the path leaves the repository. */
export function joinPath(dir: string, rel: string): string | null {
  if (rel.startsWith('/')) return null;
  const parts = dir ? dir.split('/') : [];
  for (const p of rel.split('/')) {
    if (p === '..') {
      if (!parts.length) return null;
      parts.pop();
    } else if (p && p !== '.') parts.push(p);
  }
  return parts.join('/');
}

/** Conda names whose PyPI name differs; conda-only packages (toolkits, compilers) have no PyPI side. */
const CONDA_TO_PYPI: Record<string, string | null> = {
  pytorch: 'torch',
  'pytorch-cpu': 'torch',
  'pytorch-gpu': 'torch',
  cudatoolkit: null,
  'cuda-toolkit': null,
  'pytorch-cuda': null,
  cudnn: null,
  cpuonly: null,
  mkl: null,
  pip: null,
  python: null,
  'py-opencv': 'opencv-python',
  libopencv: null,
  'tensorflow-gpu': 'tensorflow',
};

export interface CondaEnv {
  requirements: DeclaredRequirement[];
  /** `python=3.8` → `3.8`. */
  python: string | null;
}

/** `environment.yml`: conda dependencies (`numpy=1.21`, `pytorch::pytorch>=1.7`) and its `pip:` list. */
export function readCondaEnv(path: string, text: string): CondaEnv {
  let data: unknown;
  try {
    data = parseYaml(text, { maxAliasCount: 50 });
  } catch {
    return { requirements: [], python: null };
  }
  const deps = (data as { dependencies?: unknown } | null)?.dependencies;
  if (!Array.isArray(deps)) return { requirements: [], python: null };
  const out: DeclaredRequirement[] = [];
  let python: string | null = null;
  for (const d of deps) {
    if (typeof d === 'string') {
      // `channel::name=1.2=build`: conda's `=1.2` is a prefix match (`==1.2.*`), `==` exact, the build string dropped.
      const m = /^(?:[\w.-]+::)?([A-Za-z0-9][\w.-]*)\s*(?:(==|>=|<=|>|<|!=|=)\s*([\w.*+!-]+))?/.exec(d.trim());
      if (!m) continue;
      const name = (m[1] ?? '').toLowerCase();
      if (name === 'python' && m[3]) python = /^(3\.\d+)/.exec(m[3])?.[1] ?? null;
      const pypi = name in CONDA_TO_PYPI ? CONDA_TO_PYPI[name] : name;
      if (!pypi) continue;
      const op = m[2] === '=' ? '==' : m[2];
      const version = m[3] && m[2] === '=' && !m[3].includes('*') && m[3].split('.').length < 3 ? `${m[3]}.*` : m[3];
      const req = parseRequirement(op && version ? `${pypi}${op}${version}` : pypi);
      if (req) out.push({ req, where: `${path} dependencies`, text: d });
    } else if (d && typeof d === 'object' && Array.isArray((d as { pip?: unknown }).pip)) {
      for (const p of (d as { pip: unknown[] }).pip) {
        if (typeof p !== 'string' || /^-|:\/\//.test(p.trim())) continue;
        const req = parseRequirement(p);
        if (req) out.push({ req, where: `${path} pip`, text: p });
      }
    }
  }
  return { requirements: out, python };
}
