import type { EnvSpec, ProjectInstall } from '../types.js';
import type { RepoDeps } from './read-repo-deps.js';

/**
 * How the project at the ref is made importable: its import roots (`src/` layouts), whether it must be
 * built (native extensions), and its own top-level packages (so the script's `import diffusers` is the
 * checkout, never a download). Pure: a listing of paths and what the metadata said.
 */

const NATIVE_SOURCE = /\.(?:cpp|cc|cxx|cu|cuh|c|pyx)$/;
/** Build backends that compile: their projects cannot be used from the source tree. */
const NATIVE_BACKENDS = /scikit_build|mesonpy|maturin|setuptools_rust|py_build_cmake|cmake/;
const SKIP_DIR = /(?:^|\/)(?:tests?|docs?|examples?|benchmarks?|third_party|3rdparty|vendor|build|dist|\.[^/]+)\//;

export interface ProjectLayout {
  install: ProjectInstall | null;
  /** Top-level import names the checkout provides (`diffusers`, `lightning`, `fairseq_cli`). */
  packages: string[];
}

export function projectLayout(paths: readonly string[], deps: RepoDeps): ProjectLayout {
  const root = deps.root;
  const rel = root ? paths.filter((p) => p.startsWith(`${root}/`)).map((p) => p.slice(root.length + 1)) : [...paths];
  const hasMetadata = ['pyproject.toml', 'setup.py', 'setup.cfg'].some((f) => rel.includes(f));
  const pkgsUnder = (prefix: string) =>
    [
      ...new Set(
        rel
          .filter((p) => p.startsWith(prefix) && /^[A-Za-z_]\w*\/__init__\.py$/.test(p.slice(prefix.length)))
          .map((p) => p.slice(prefix.length, p.indexOf('/', prefix.length))),
      ),
    ].filter((n) => !/^(tests?|docs?|examples?|benchmarks?|scripts?|tools)$/.test(n));
  const srcPkgs = pkgsUnder('src/');
  const flatPkgs = pkgsUnder('');
  const srcLayout = srcPkgs.length > 0 && (deps.declaresSrcLayout || flatPkgs.length === 0);
  const packages = srcLayout ? srcPkgs : flatPkgs;
  // Single-module projects (`timm.py`-less repos are packages; `tqdm`-like ones are one file) count too.
  if (!packages.length && deps.distribution) {
    const mod = deps.distribution.replace(/-/g, '_');
    if (rel.includes(`${mod}.py`)) packages.push(mod);
  }
  if (!hasMetadata && !packages.length) return { install: null, packages: [] };

  const inPackage = (p: string) => packages.some((pkg) => p.startsWith(srcLayout ? `src/${pkg}/` : `${pkg}/`));
  const extensions = rel
    .filter((p) => NATIVE_SOURCE.test(p) && inPackage(p) && !SKIP_DIR.test(p.slice(p.indexOf('/') + 1)))
    .slice(0, 50)
    .map((p) => (root ? `${root}/${p}` : p));
  const nativeBackend = deps.buildBackend !== null && NATIVE_BACKENDS.test(deps.buildBackend);
  const build = (deps.setupBuildsExtensions && extensions.length > 0) || nativeBackend;
  return {
    install: {
      root,
      importRoots: [srcLayout ? (root ? `${root}/src` : 'src') : root],
      mode: build ? 'build' : 'pth',
      distribution: deps.distribution,
      extensions,
    },
    packages: packages.sort(),
  };
}

/** Whether the spec's project has extensions to compile before it can be imported. Pure. */
export function needsExtensionBuild(spec: Pick<EnvSpec, 'project'>): boolean {
  return spec.project?.mode === 'build' && spec.project.extensions.length > 0;
}
