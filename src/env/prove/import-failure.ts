import type { EnvironmentConfigKey } from '../../config/repo-config.js';
import type { ProofFailure } from '../types.js';
import { normaliseName } from '../lock/uv-lock.js';
import { satisfies } from '../compare-versions.js';

/**
 * Whether a run's import error is the environment's fault (issue 27, item 5): the project itself does not import,
 * one of its declared dependencies is missing, or a module of the env fails to load. Such a run is an environment
 * failure, never a reproduction or a mismatch. An import the script makes of a module nobody declared is the
 * script's own mistake and is left to the agent. Pure: reads the traceback text only.
 */
export interface EnvImportFailure {
  /** The module that failed (`absl`, `detectron2._C`). */
  module: string;
  /** Why it counts as the env's failure, for the comment. */
  why: string;
  /** The repgen.yml key that would fix it. */
  configKey: Extract<EnvironmentConfigKey, 'environment.packages' | 'environment.build'>;
}

export interface ImportContext {
  /** The env's pins (distribution → version): a pinned distribution that does not import is the env's failure too. */
  pins: Record<string, string>;
  /** Distributions the spec asked for (declared by the project, the report or the config). */
  declared: string[];
  /** Top-level packages of the project's checkout (`detectron2`, `lightning`). */
  projectPackages: string[];
  /** Where runs see the checkout (`/workspace`). */
  workspaceMount: string;
  /** The distribution a top-level module comes from (`absl` → `absl-py`, the spec's import-name mapping). */
  distributionOf?: (module: string) => string | null;
}

interface ImportErrorLine {
  module: string;
  /** `cannot import name X from Y`: the name. */
  name: string | null;
  /** The file of the frame that raised it. */
  file: string | null;
}

function lastImportError(stderr: string): ImportErrorLine | null {
  const lines = stderr.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] as string;
    const missing = /^(?:ModuleNotFoundError|ImportError): No module named '([^']+)'/.exec(line);
    const cannot = /^ImportError: cannot import name '([^']+)' from '([^']+)'/.exec(line);
    const shared = /^ImportError: (lib[^:]+\.so[^:]*): cannot open shared object file/.exec(line);
    if (!missing && !cannot && !shared) continue;
    let file: string | null = null;
    for (let j = i - 1; j >= 0; j--) {
      const m = /^\s*File "([^"]+)", line \d+/.exec(lines[j] as string);
      if (m) {
        file = m[1] as string;
        break;
      }
    }
    if (missing) return { module: missing[1] as string, name: null, file };
    if (cannot) return { module: cannot[2] as string, name: cannot[1] as string, file };
    return { module: (shared as RegExpExecArray)[1] as string, name: null, file };
  }
  return null;
}

/** Distribution names a top-level module may come from: its own name, and the mapping's (`absl` ← `absl-py`). */
function candidates(top: string, ctx: ImportContext): string[] {
  const mapped = ctx.distributionOf?.(top);
  return [normaliseName(top), normaliseName(top.replace(/_/g, '-')), ...(mapped ? [normaliseName(mapped)] : [])];
}

export function readEnvImportFailure(stderr: string, ctx: ImportContext): EnvImportFailure | null {
  const err = lastImportError(stderr);
  if (!err) return null;
  const top = err.module.split('.')[0] as string;
  const inProject = ctx.projectPackages.includes(top);
  const raisedInEnv = err.file !== null && (err.file.includes('/site-packages/') || err.file.startsWith(`${ctx.workspaceMount}/`));
  if (inProject && (err.name?.startsWith('_') || /(^|\.)_[A-Za-z0-9]+$/.test(err.module))) {
    return {
      module: err.name ? `${err.module}.${err.name}` : err.module,
      why: `the project's compiled extension ${err.name ?? err.module} is not built`,
      configKey: 'environment.build',
    };
  }
  if (inProject)
    // The project's own module is missing (a src/ layout not installed): a build command installs it.
    return { module: err.module, why: `the project (${top}) does not import in the built environment`, configKey: 'environment.build' };
  const declared = new Set([...ctx.declared, ...Object.keys(ctx.pins)].map(normaliseName));
  if (candidates(top, ctx).some((d) => declared.has(d))) {
    return {
      module: err.module,
      why: `${top} is a declared dependency but does not import in the built environment`,
      configKey: 'environment.packages',
    };
  }
  if (raisedInEnv) {
    const who = err.file?.startsWith(`${ctx.workspaceMount}/`) ? "the project's code" : 'an installed package';
    return {
      module: err.module,
      why: `${who} imports ${err.module}, which the environment lacks`,
      configKey: 'environment.packages',
    };
  }
  return null;
}

/**
 * Why a module failed the env's import proof, read as what the next candidate must change (issue 39, item 3): a
 * framework lacking an attribute or submodule the code uses is too old; an API the code uses that a release removed
 * (`np.float`, `torch.solve`) means too new; an extension compiled against another NumPy C-API needs the other numpy;
 * a top-level module nothing installed is missing. `constraint` is the clause the next candidate puts on `package`.
 */
export interface ProofVerdict {
  kind: 'framework-too-old' | 'api-removed' | 'numpy-abi' | 'extension-unbuilt' | 'missing-module' | 'other';
  /** The distribution to change (PEP 503 name), null when none can be named. */
  package: string | null;
  /** `>2.0.1`, `<1.24`, `>=2`, '' (any version: add it); null when no next candidate follows. */
  constraint: string | null;
  why: string;
}

/**
 * Attributes a release removed, by module: code that uses them ran on an older one. Where the release that removed a
 * name is known, the next candidate goes straight below it (`np.float` left in 1.24: from numpy 2.4.6 the next
 * candidate is `<1.24`, not `<2` and then `<1.26`, which a ladder of three never gets past); otherwise one minor down.
 */
const REMOVED: Record<
  string,
  { names: RegExp; removedIn?: ReadonlyArray<readonly [RegExp, string]>; before: (version: string) => string }
> = {
  numpy: {
    names: new RegExp(
      '^(?:float|int|bool|object|complex|str|long|unicode|asscalar|alen|float_|complex_|NaN|NAN|Inf|PINF|NINF|infty|string_|' +
        'unicode_|cumproduct|sometrue|alltrue|msort|round_|product|find_common_type|mat)$',
    ),
    removedIn: [
      // The builtin aliases deprecated in 1.20, removed in 1.24.
      [/^(?:float|int|bool|object|complex|str|long|unicode)$/, '1.24'],
      [/^(?:asscalar|alen)$/, '1.23'],
      [
        /^(?:float_|complex_|NaN|NAN|Inf|PINF|NINF|infty|string_|unicode_|cumproduct|sometrue|alltrue|msort|round_|product|find_common_type|mat)$/,
        '2.0',
      ],
    ],
    before: (v) => (Number(v.split('.')[0]) >= 2 ? '<2' : `<${minorOf(v)}`),
  },
  torch: {
    names: /^(?:solve|symeig|lstsq|eig|matrix_rank|chain_matmul|_six|qr|ger|triangular_solve|cholesky)$/,
    before: (v) => `<${minorOf(v)}`,
  },
};

/**
 * Modules a release of their distribution removed, and the release that did: code importing one ran on an older
 * release (setuptools 82 dropped `pkg_resources`, torch 2.0 `torch._six`, TensorFlow 2.0 `tensorflow.contrib`).
 */
const REMOVED_MODULES: Record<string, { dist: string; removedIn: string }> = {
  pkg_resources: { dist: 'setuptools', removedIn: '82' },
  'torch._six': { dist: 'torch', removedIn: '2.0' },
  'tensorflow.contrib': { dist: 'tensorflow', removedIn: '2.0' },
  'sklearn.externals.joblib': { dist: 'scikit-learn', removedIn: '0.23' },
  // Keras 2.13 moved its code under keras/src and ships only the public API at the top (read from the 2.12.0 and
  // 2.13.1 wheels): Keras 2 code's `from keras.layers.core import Dense` imports on 2.12 and on no later release,
  // Keras 3 included, so a move up from 2.15 (the ladder's old reading) can never pass.
  'keras.engine': { dist: 'keras', removedIn: '2.13' },
  'keras.layers.core': { dist: 'keras', removedIn: '2.13' },
  'keras.layers.convolutional': { dist: 'keras', removedIn: '2.13' },
  'keras.layers.pooling': { dist: 'keras', removedIn: '2.13' },
  'keras.layers.normalization': { dist: 'keras', removedIn: '2.13' },
  'keras.layers.noise': { dist: 'keras', removedIn: '2.13' },
  'keras.wrappers': { dist: 'keras', removedIn: '2.13' },
};

function removedModule(name: string): { module: string; dist: string; removedIn: string } | null {
  const hit = Object.entries(REMOVED_MODULES).find(([m]) => name === m || name.startsWith(`${m}.`));
  return hit ? { module: hit[0], ...hit[1] } : null;
}

/** The clause below the release that removed `name` when it is known and `version` has it removed; else one minor down. */
function belowRemoval(dist: string, name: string, version: string): string {
  const removed = REMOVED[dist];
  if (!removed) return `<${minorOf(version)}`;
  const since = removed.removedIn?.find(([re]) => re.test(name))?.[1];
  return since && compareRelease(release(version), since) >= 0 ? `<${since.replace(/\.0$/, '')}` : removed.before(version);
}

/** Compares two dotted releases numerically (`1.26.4` vs `1.24`). */
function compareRelease(a: string, b: string): number {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return Number.isNaN(d) ? 0 : d;
  }
  return 0;
}

function minorOf(version: string): string {
  return version.split(/[+]/)[0]?.split('.').slice(0, 2).join('.') ?? version;
}

/** `84.2.1` → `84`; null when the version does not start with a number. */
function majorOf(version: string): string | null {
  return /^(\d+)/.exec(version)?.[1] ?? null;
}

function release(version: string): string {
  return version.split('+')[0] ?? version;
}

/** The version of a distribution in the failure's map, by its normalised name. */
function versionOf(f: ProofFailure, dist: string): string | null {
  const hit = Object.entries(f.versions).find(([d]) => normaliseName(d) === dist);
  return hit ? hit[1] : null;
}

/** Classifies one proof failure. `pins` are the env's (distribution → version); `distributionOf` maps import names. Pure. */
export function classifyProofFailure(
  f: ProofFailure,
  ctx: {
    pins: Record<string, string>;
    projectPackages: readonly string[];
    distributionOf?: (module: string) => string | null;
    /**
     * Distributions of the env that nothing bounds (no version asked: the resolver took the newest it could): one that
     * lacks a part the code uses cannot be too old, so a release removed it. @defaultValue []
     */
    free?: readonly string[];
  },
): ProofVerdict {
  const text = f.error;
  const first = text.split('\n')[0] ?? '';
  const pinOf = (dist: string): string | null => ctx.pins[dist] ?? versionOf(f, dist);
  const distOf = (module: string): string => {
    const top = module.split('.')[0] as string;
    const owned = Object.keys(f.versions).map(normaliseName);
    const own = [normaliseName(top), normaliseName(top.replace(/_/g, '-'))].find((d) => ctx.pins[d] !== undefined || owned.includes(d));
    return own ?? normaliseName(ctx.distributionOf?.(top) ?? top);
  };
  // A part missing from a framework is the framework too old, unless nothing bounded it (it is the newest): then too new.
  const lacks = (dist: string, v: string, what: string): ProofVerdict =>
    ctx.free?.includes(dist) && majorOf(v) !== null
      ? {
          kind: 'api-removed',
          package: dist,
          constraint: `<${majorOf(v)}`,
          why: `${dist} ${v} has no ${what}, and nothing asked for that release (the newest): the code is of an older major`,
        }
      : { kind: 'framework-too-old', package: dist, constraint: `>${release(v)}`, why: `${dist} ${v} has no ${what}` };
  // 1. NumPy's C-API: an extension built for one major of numpy beside the other.
  const capi = /compiled against NumPy C-API version 0x[0-9a-f]+ \(NumPy (\d+)\.(\d+)\)/i.exec(text);
  if (capi) {
    const need = `${capi[1]}.${capi[2]}`;
    return { kind: 'numpy-abi', package: 'numpy', constraint: `>=${need}`, why: `an extension was compiled against NumPy ${need}'s C-API` };
  }
  if (/compiled using NumPy 1\.x cannot be run in\s+NumPy 2|_ARRAY_API not found|numpy\.core\.multiarray failed to import/.test(text))
    return {
      kind: 'numpy-abi',
      package: 'numpy',
      constraint: '<2',
      why: 'an extension was compiled for NumPy 1.x and this env has NumPy 2',
    };
  if (/SystemError: <built-in function __import__> returned a result with an exception set/.test(text)) {
    const np = pinOf('numpy');
    if (np) {
      const two = Number(np.split('.')[0]) >= 2;
      return {
        kind: 'numpy-abi',
        package: 'numpy',
        constraint: two ? '<2' : '>=2',
        why:
          'an import failed inside the interpreter (SystemError in __import__), ' +
          `as an extension built for NumPy ${two ? '1.x' : '2'} does beside numpy ${np}`,
      };
    }
  }
  // 2. The project's own compiled extension.
  const cannot = /cannot import name '([^']+)' from '([\w.]+)'/.exec(text);
  const missing = /No module named '([\w.]+)'/.exec(text);
  const attr = /module '([\w.]+)' has no attribute '(\w+)'/.exec(text);
  const inProject = (m: string) => ctx.projectPackages.includes(m.split('.')[0] as string);
  const privateName =
    (cannot && inProject(cannot[2] as string) && cannot[1]?.startsWith('_')) ||
    (missing && inProject(missing[1] as string) && /\._\w+$/.test(missing[1] as string));
  if (privateName)
    return {
      kind: 'extension-unbuilt',
      package: null,
      constraint: null,
      why: `the project's compiled extension is not built (${first.slice(0, 160)})`,
    };
  // 3. A removed API: the env's release is newer than the code.
  if (attr) {
    const [mod, name] = [attr[1] as string, attr[2] as string];
    const dist = distOf(mod);
    const v = pinOf(dist);
    const removed = REMOVED[dist];
    const said = new RegExp(`was (?:removed|a deprecated alias)|${name}.{0,40}(?:removed|deprecated)`, 'i').test(text);
    if (v && ((removed && removed.names.test(name)) || said)) {
      const constraint = belowRemoval(dist, name, v);
      return { kind: 'api-removed', package: dist, constraint, why: `${mod}.${name} is gone from ${dist} ${v} (${first.slice(0, 120)})` };
    }
    // 4. A framework that lacks what the code uses is too old (torch.xpu, torch.float8_e4m3fn).
    if (v && !inProject(mod)) return lacks(dist, v, `${mod}.${name}`);
  }
  if (missing) {
    const name = missing[1] as string;
    // A module its distribution's release removed: below that release (the lock's setuptools 84 has no pkg_resources).
    const gone = removedModule(name);
    const goneV = gone ? pinOf(gone.dist) : null;
    if (gone && goneV && satisfies(goneV, `>=${gone.removedIn}`))
      return {
        kind: 'api-removed',
        package: gone.dist,
        constraint: `<${gone.removedIn}`,
        why: `${gone.module} is gone from ${gone.dist} ${goneV} (removed in ${gone.removedIn})`,
      };
    // Not installed at all (a venv of its own has no setuptools): added at a release that still has it.
    if (gone && !goneV && !name.includes('.'))
      return {
        kind: 'missing-module',
        package: gone.dist,
        constraint: `<${gone.removedIn}`,
        why: `${f.module} imports ${name}, which the env lacks (${gone.dist} before ${gone.removedIn} has it)`,
      };
    const dist = distOf(name);
    const v = pinOf(dist);
    if (/\._?six$/.test(name) && v)
      return { kind: 'api-removed', package: dist, constraint: `<${minorOf(v)}`, why: `${name} is gone from ${dist} ${v}` };
    // A top-level module of a distribution the env holds, which that release no longer ships: a release too new, and
    // a module leaves with a major release.
    const ownDist = distOf(f.module);
    if (!name.includes('.') && v && dist !== ownDist && !inProject(name) && majorOf(v) !== null)
      return {
        kind: 'api-removed',
        package: dist,
        constraint: `<${majorOf(v)}`,
        why: `${f.module} imports ${name}, which ${dist} ${v} no longer ships`,
      };
    // A submodule of an installed framework (torch._dynamo): the framework is too old.
    if (name.includes('.') && v && !inProject(name)) return lacks(dist, v, name);
    if (!name.includes('.') && !v && !inProject(name))
      return { kind: 'missing-module', package: dist, constraint: '', why: `${f.module} imports ${name}, which the env lacks` };
  }
  if (cannot && !inProject(cannot[2] as string)) {
    const dist = distOf(cannot[2] as string);
    const v = pinOf(dist);
    if (v) return lacks(dist, v, `${cannot[2]}.${cannot[1]}`);
  }
  return { kind: 'other', package: null, constraint: null, why: first.slice(0, 200) };
}
