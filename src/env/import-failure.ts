import type { EnvironmentConfigKey } from '../config/repo-config.js';
import { normaliseName } from './uv-lock.js';

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
