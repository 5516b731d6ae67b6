// The range a project's own requirement files give a framework its metadata does not declare (issue 39, item 1).
// Keras 3 declares no framework in pyproject.toml (the user picks the backend), yet its requirements.txt, which its CI
// installs, says `torch>=2.1.0`: a report on the torch backend runs on a torch in that range, never on Debian's 1.13.
// Pure: file texts in, the first declaration with a version range out.
import type { RepoFiles } from './read-repo-deps.js';
import { readRequirementsFile, RequirementFilesError, type DeclaredRequirement } from './read-requirement-files.js';
import { markerHolds, normalizeName } from './requirement-line.js';

/** Requirement files at the checkout's root (or its requirements/ folder), `requirements.txt` first. */
const FILE = /^(?:requirements\/)?[^/]*requirements?[^/]*\.(?:txt|in)$/i;
/** A local version of an accelerator's build (`+cu121`, `+rocm6.0`): not what a CPU run installs. */
const ACCELERATOR_BUILD = /\+(?:cu\d|rocm|xpu|tpu)/i;

/**
 * The first declaration of `name` with a version range in the checkout's requirement files, whose marker holds on
 * `python`; null when none bounds it. An accelerator's build (`==2.3.1+cu121`) counts only on a GPU run. An exact pin
 * (`torch==2.6.0+cpu`, what the project's CI installs) is read as the floor of its series (`>=2.6`): the code needs
 * at least that, and a CPU wheel at hand of a newer series is not refused for it.
 */
export function frameworkRangeInRequirementFiles(
  files: RepoFiles,
  name: string,
  opts: { python: string; gpu: boolean },
): DeclaredRequirement | null {
  const wanted = normalizeName(name);
  const paths = [...files.texts.keys()].filter((p) => FILE.test(p)).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  for (const path of paths) {
    let declared: DeclaredRequirement[];
    try {
      declared = readRequirementsFile(path, files.texts);
    } catch (err) {
      if (err instanceof RequirementFilesError) continue;
      throw err;
    }
    for (const d of declared) {
      if (d.req.name !== wanted || !d.req.specifier || (!opts.gpu && ACCELERATOR_BUILD.test(d.req.specifier))) continue;
      if (!markerHolds(d.req.marker, { python: opts.python, extras: [] })) continue;
      const pinned = /^===?\s*(\d+)\.(\d+)[^,]*$/.exec(d.req.specifier.trim());
      return pinned ? { ...d, req: { ...d.req, specifier: `>=${pinned[1]}.${pinned[2]}` } } : d;
    }
  }
  return null;
}

function rank(path: string): number {
  if (path === 'requirements.txt') return 0;
  return path.includes('/') ? 2 : 1;
}
