import { parse as parseToml } from 'smol-toml';
import { regexLines } from '../../regex.js';
import { joinPath, readCondaEnv, readRequirementsFile, type DeclaredRequirement } from './read-requirement-files.js';
import { readSetupPy } from './read-setup-py.js';
import { normalizeName, parseRequirement } from './requirement-line.js';

/**
 * What the repository at the ref declares it needs, from its own files, in this order: pyproject.toml
 * `[project]`, `setup.py` (read statically), `setup.cfg`, Poetry, then requirement files and
 * `environment.yml` when none of those declares anything. Pure: file texts in, declarations out.
 */

/** The checkout as the spec reads it: every path (for layout), and the text of the dependency files. */
export interface RepoFiles {
  /** Every file path of the checkout, relative, `/`-separated (a listing, capped by the adapter). */
  paths: string[];
  /** Text of the files this reader asks for (`DEPENDENCY_FILE` matches), by path. */
  texts: ReadonlyMap<string, string>;
}

/** The files whose text the reader needs: the adapter reads these and nothing else. */
export const DEPENDENCY_FILE = regexLines('i')`
  ^(?:[^/]+/)?(?:pyproject\.toml|setup\.py|setup\.cfg|environment\.ya?ml)$
  |(?:^|/)[^/]*req[^/]*\.(?:txt|in)$
  |^requirements?/(?:[^/]+/)?[^/]+\.(?:txt|in)$
`;

export interface RepoDeps {
  /** Folder holding the project's metadata ('' = the root). */
  root: string;
  distribution: string | null;
  requiresPython: string | null;
  requiresPythonWhere: string | null;
  dependencies: DeclaredRequirement[];
  /** Optional extras by name (normalised). */
  extras: Record<string, DeclaredRequirement[]>;
  buildBackend: string | null;
  /** `[build-system].requires`: what compiling the project's extensions needs (setuptools, Cython, torch…). */
  buildRequires: DeclaredRequirement[];
  /** `setup.py` builds native extensions (`ext_modules`, `CUDAExtension`…). */
  setupBuildsExtensions: boolean;
  /** `package_dir={"": "src"}` / `[tool.setuptools.packages.find] where = ["src"]`. */
  declaresSrcLayout: boolean;
  /** Python version a conda environment file names. */
  condaPython: string | null;
  /** Where the dependencies came from, for the comment (`setup.py install_requires`). */
  sources: string[];
}

/** The folder with the project's metadata: the root, else the one sub-folder that has some. */
function projectRoot(texts: ReadonlyMap<string, string>): string {
  const has = (dir: string) => ['pyproject.toml', 'setup.py', 'setup.cfg'].some((f) => texts.has(dir ? `${dir}/${f}` : f));
  if (has('')) return '';
  const dirs = [...new Set([...texts.keys()].filter((p) => p.includes('/')).map((p) => p.slice(0, p.indexOf('/'))))].filter(has);
  return dirs.length === 1 ? (dirs[0] ?? '') : '';
}

export function readRepoDeps(files: RepoFiles): RepoDeps {
  const root = projectRoot(files.texts);
  const at = (f: string) => (root ? `${root}/${f}` : f);
  const out: RepoDeps = {
    root,
    distribution: null,
    requiresPython: null,
    requiresPythonWhere: null,
    dependencies: [],
    extras: {},
    buildBackend: null,
    buildRequires: [],
    setupBuildsExtensions: false,
    declaresSrcLayout: false,
    condaPython: null,
    sources: [],
  };
  const declare = (list: string[], where: string): DeclaredRequirement[] =>
    list.flatMap((text) => {
      const req = parseRequirement(text);
      return req ? [{ req, where, text }] : [];
    });
  let found = false;

  const pyproject = files.texts.get(at('pyproject.toml'));
  if (pyproject !== undefined) found = readPyproject(pyproject, at('pyproject.toml'), files, out, declare) || found;

  const setupPy = files.texts.get(at('setup.py'));
  if (setupPy !== undefined) {
    const s = readSetupPy(setupPy);
    out.distribution ??= s.name;
    out.setupBuildsExtensions = s.extensions;
    out.declaresSrcLayout ||= /package_dir\s*=\s*\{\s*["']{2}\s*:\s*["']src["']/.test(setupPy);
    if (!out.requiresPython && s.pythonRequires) {
      out.requiresPython = s.pythonRequires;
      out.requiresPythonWhere = `${at('setup.py')} python_requires`;
    }
    if (!found && (s.installRequires?.length || s.readsFiles.length)) {
      found = true;
      out.dependencies.push(...declare(s.installRequires ?? [], `${at('setup.py')} install_requires`));
      for (const f of s.readsFiles) {
        const path = requirementFileOf(joinPath(root, f), files);
        if (path !== null) out.dependencies.push(...readRequirementsFile(path, files.texts));
      }
      for (const [name, list] of Object.entries(s.extras)) out.extras[name] ??= declare(list, `${at('setup.py')} extras_require[${name}]`);
      out.sources.push(`${at('setup.py')} install_requires`);
    }
  }

  const setupCfg = files.texts.get(at('setup.cfg'));
  if (setupCfg !== undefined) {
    const cfg = readIni(setupCfg);
    out.distribution ??= cfg.get('metadata')?.get('name') ?? null;
    const options = cfg.get('options');
    if (!out.requiresPython && options?.get('python_requires')) {
      out.requiresPython = options.get('python_requires') ?? null;
      out.requiresPythonWhere = `${at('setup.cfg')} python_requires`;
    }
    out.declaresSrcLayout ||= /=\s*src\b/.test(options?.get('package_dir') ?? '');
    const install = options?.get('install_requires');
    if (!found && install) {
      found = true;
      out.dependencies.push(...declare(iniList(install), `${at('setup.cfg')} install_requires`));
      for (const [name, value] of cfg.get('options.extras_require') ?? []) {
        out.extras[normalizeName(name)] ??= declare(iniList(value), `${at('setup.cfg')} extras_require.${name}`);
      }
      out.sources.push(`${at('setup.cfg')} [options] install_requires`);
    }
  }

  const conda = [...files.texts.keys()].find((p) => /^environment\.ya?ml$/i.test(p));
  const condaEnv = conda ? readCondaEnv(conda, files.texts.get(conda) ?? '') : null;
  out.condaPython = condaEnv?.python ?? null;
  // No metadata declares dependencies, or what it declares could not be read (a setup.py that builds the list from
  // files it names through variables): the requirement files are what the project installs.
  if (!found || out.dependencies.length === 0) {
    const reqFiles = [...files.texts.keys()].filter((p) =>
      /^(?:requirements\.txt|requirements\/(?:[^/]+\/)?(?:base|main|core|runtime)\.txt)$/.test(p),
    );
    for (const f of reqFiles.sort()) out.dependencies.push(...readRequirementsFile(f, files.texts));
    if (reqFiles.length) out.sources.push(reqFiles.join(', '));
    if (condaEnv?.requirements.length) {
      out.dependencies.push(...condaEnv.requirements);
      out.sources.push(conda ?? 'environment.yml');
    }
  }
  return out;
}

type Declare = (list: string[], where: string) => DeclaredRequirement[];

/** pyproject.toml: `[project]` (PEP 621), setuptools' dynamic files, Poetry. True when it declares dependencies. */
function readPyproject(text: string, path: string, files: RepoFiles, out: RepoDeps, declare: Declare): boolean {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch {
    return false;
  }
  const obj = (v: unknown): Record<string, unknown> =>
    v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const project = obj(doc.project);
  const tool = obj(doc.tool);
  const setuptools = obj(tool.setuptools);
  const poetry = obj(tool.poetry);
  out.buildBackend =
    typeof obj(doc['build-system'])['build-backend'] === 'string' ? String(obj(doc['build-system'])['build-backend']) : null;
  out.buildRequires = declare(strs(obj(doc['build-system']).requires), `${path} [build-system].requires`);
  out.distribution = typeof project.name === 'string' ? project.name : typeof poetry.name === 'string' ? poetry.name : null;
  if (typeof project['requires-python'] === 'string') {
    out.requiresPython = project['requires-python'];
    out.requiresPythonWhere = `${path} requires-python`;
  }
  const where = strs(obj(obj(setuptools.packages).find).where);
  out.declaresSrcLayout = where.includes('src') || obj(setuptools['package-dir'])[''] === 'src';
  const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
  let found = false;
  if (Array.isArray(project.dependencies)) {
    found = true;
    out.dependencies.push(...declare(strs(project.dependencies), `${path} [project].dependencies`));
    out.sources.push(`${path} [project].dependencies`);
  } else if (strs(project.dynamic).includes('dependencies')) {
    // `[tool.setuptools.dynamic] dependencies = {file = ["requirements.txt"]}`
    for (const f of strs(obj(obj(setuptools.dynamic).dependencies).file)) {
      const p = joinPath(dir, f);
      if (p === null) continue;
      found = true;
      out.dependencies.push(...readRequirementsFile(p, files.texts));
      out.sources.push(`${path} dynamic dependencies (${p})`);
    }
  }
  for (const [name, list] of Object.entries(obj(project['optional-dependencies']))) {
    out.extras[normalizeName(name)] = declare(strs(list), `${path} [project.optional-dependencies].${name}`);
  }
  if (!found && Object.keys(obj(poetry.dependencies)).length) {
    found = true;
    for (const [name, spec] of Object.entries(obj(poetry.dependencies))) {
      if (name.toLowerCase() === 'python') {
        out.requiresPython ??= typeof spec === 'string' ? poetrySpecifier(spec) : null;
        out.requiresPythonWhere ??= `${path} [tool.poetry.dependencies].python`;
        continue;
      }
      const version = typeof spec === 'string' ? spec : typeof obj(spec).version === 'string' ? String(obj(spec).version) : '*';
      if (obj(spec).optional === true || obj(spec).git || obj(spec).path || obj(spec).url) continue;
      const req = parseRequirement(`${name}${poetrySpecifier(version)}`);
      if (req) out.dependencies.push({ req, where: `${path} [tool.poetry.dependencies]`, text: `${name} = "${version}"` });
    }
    out.sources.push(`${path} [tool.poetry.dependencies]`);
  }
  return found;
}

/** Poetry's `^1.2.3` / `~1.2` / `1.2.*` / `*` as PEP 440. */
export function poetrySpecifier(spec: string): string {
  return spec
    .split(',')
    .map((part) => {
      const s = part.trim();
      if (!s || s === '*') return '';
      const caret = /^\^(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(s);
      if (caret) {
        const [maj, min, pat] = [Number(caret[1]), caret[2], caret[3]];
        const upper =
          maj > 0 || min === undefined
            ? `${maj + 1}.0`
            : Number(min) > 0 || pat === undefined
              ? `0.${Number(min) + 1}`
              : `0.0.${Number(pat) + 1}`;
        return `>=${s.slice(1)},<${upper}`;
      }
      const tilde = /^~(?!=)(\d+)(?:\.(\d+))?/.exec(s);
      if (tilde) return `>=${s.slice(1)},<${tilde[2] === undefined ? Number(tilde[1]) + 1 : `${tilde[1]}.${Number(tilde[2]) + 1}`}`;
      if (/^\d/.test(s)) return `==${s}`;
      return s.replace(/\s+/g, '');
    })
    .filter(Boolean)
    .join(',');
}

/** setup.cfg as sections of keys; a value's continuation lines are kept (lists are one per line). */
function readIni(text: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let section: Map<string, string> | null = null;
  let key: string | null = null;
  for (const raw of text.split(/\r?\n/)) {
    if (/^\s*[#;]/.test(raw)) continue;
    const head = /^\[([^\]]+)\]\s*$/.exec(raw);
    if (head) {
      section = new Map();
      sections.set((head[1] ?? '').trim(), section);
      key = null;
      continue;
    }
    if (!section) continue;
    if (/^\s+\S/.test(raw) && key) {
      section.set(key, `${section.get(key) ?? ''}\n${raw.trim()}`);
      continue;
    }
    const kv = /^([^=:\s][^=:]*?)\s*[=:]\s*(.*)$/.exec(raw);
    if (kv) {
      key = (kv[1] ?? '').trim();
      section.set(key, (kv[2] ?? '').trim());
    }
  }
  return sections;
}

function iniList(value: string): string[] {
  return value
    .split(/\n|;(?=\s*(?!python_|sys_|platform_|os_|implementation_|extra\b)[A-Za-z])/)
    .map((s) => s.replace(/\s#.*$/, '').trim())
    .filter((s) => s && !s.startsWith('file:'));
}

/**
 * The requirement file a setup.py reads: the path as named, else the one file of that name under a requirements
 * folder (`_load_requirements(path_dir=_PATH_REQUIRE, file_name="base.txt")` names only `base.txt`). Null when
 * neither exists, or the name is ambiguous.
 */
function requirementFileOf(path: string | null, files: RepoFiles): string | null {
  if (path === null || files.texts.has(path)) return path;
  const name = path.slice(path.lastIndexOf('/') + 1);
  const under = [...files.texts.keys()].filter((p) => new RegExp(`(?:^|/)requirements?/(?:[^/]+/)?${escapeRe(name)}$`).test(p));
  return under.length === 1 ? (under[0] as string) : null;
}

function escapeRe(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
