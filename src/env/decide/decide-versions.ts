// The version decision of an env, from the issue's world inward (issue 39, item 1): the user's explicit pin, then the
// report's stated versions, then the project's declared ranges at the commit, then the commit's era; the base
// interpreter is an optimisation, kept only when it satisfies every one of them. Debian's torch 1.13 satisfies
// diffusers' `torch>=1.4`, but the report ran torch 2.7 and the commit is of 2025: `import diffusers` then fails on
// `torch.xpu`. On a CPU run the operator's wheelhouse (REPGEN_ENV_FIND_LINKS) gives torch, so uv never takes a
// multi-GB CUDA build from the index. Pure: the adapter (src/pipeline/stages/env/default-env-ports.ts) reads the base,
// the wheel folders and the release dates.
import { compareVersions, nearestVersion, parseVersion, satisfies } from '../compare-versions.js';
import { needsExtensionBuild } from '../read/project-layout.js';
import { cpuWheelOverCap } from './cpu-wheel-over-cap.js';
import type { ReleaseInfo } from './era.js';
import type { DecisionSource, EnvSpec, Requirement, VersionDecision } from '../types.js';
import { ERA_FRAMEWORKS } from '../types.js';

/** What the base interpreter (REPGEN_PYTHON) is and holds. */
export interface BaseInterpreter {
  /** `3.11` */
  minor: string;
  /** Distributions installed in it, PEP 503-normalised, with their versions. */
  installed: ReadonlyMap<string, string>;
}

// ERA_FRAMEWORKS (types.ts): frameworks whose era (the newest release when the commit was made) sets a floor on the base's version.
export { ERA_FRAMEWORKS };

/** The PyTorch CPU wheel index: torch comes from it on a CPU run when the operator allows it (REPGEN_ENV_INDEXES). */
export const TORCH_CPU_INDEX = 'https://download.pytorch.org/whl/cpu';

export interface DecideVersionsInput {
  /** The spec as computeEnvSpec made it (each requirement says where it came from). */
  spec: EnvSpec;
  base: BaseInterpreter;
  /**
   * The newest release of each framework uploaded by the ref's commit date (`newestReleaseBefore`), with that date
   * for the evidence; absent: no era (no checkout, no dates).
   */
  era?: { commitDate: string; newest: Readonly<Record<string, string>> } | null;
  /** Versions of the CPU wheels in the operator's wheel folders that install here (name → versions). */
  wheelhouse: Readonly<Record<string, readonly string[]>>;
  /** The indexes the operator allows (REPGEN_ENV_INDEXES): the PyTorch CPU index is used only when it is one. */
  allowedIndexes: readonly string[];
  gpu: boolean;
  /** The job has a checkout of the repository. */
  checkout: boolean;
  /** repgen.yml `environment:` or the CLI's `--with`/`--python` asked for an env: it is always built. */
  configured: boolean;
}

export interface EnvDecision {
  /** Whether the job needs an env of its own; false: runs use the base interpreter as it is. */
  build: boolean;
  /** The spec to build: requirements with the wheelhouse's torch pinned, `baseProvides`, notes, and `decisions`. */
  spec: EnvSpec;
}

/** The newest final release uploaded by `commitDate`; null when none is known. Pure. */
export function newestReleaseBefore(releases: readonly ReleaseInfo[], commitDate: string): string | null {
  const date = Date.parse(commitDate);
  if (Number.isNaN(date)) return null;
  let best: string | null = null;
  for (const r of releases) {
    const v = parseVersion(r.version);
    if (!v || r.yanked || v.is_prerelease || Date.parse(r.uploaded) > date) continue;
    if (!best || compareVersions(v, parseVersion(best) as NonNullable<ReturnType<typeof parseVersion>>) > 0) best = r.version;
  }
  return best;
}

const FROM: Record<Requirement['source'], DecisionSource> = {
  config: 'user',
  report: 'report',
  repo: 'project',
  policy: 'project',
  era: 'era',
  script: 'import',
};

/** Key packages: the frameworks, numpy, and any package the user, the report or the era pinned. */
const KEY = new Set(['torch', 'tensorflow', 'jax', 'jaxlib', 'keras', 'numpy']);

export function decideVersions(input: DecideVersionsInput): EnvDecision {
  const { base } = input;
  const notes = [...input.spec.notes];
  let requirements = input.spec.requirements;
  let extraIndexUrls = [...input.spec.extraIndexUrls];

  // 1. What the base must satisfy for each requirement: its specifier, and for a framework the project does not cap,
  // the era's floor (code of 2025 may call what torch 2.7 added; code of 2019 runs on torch 1.13).
  const floors = new Map<string, { floor: string; why: string }>();
  for (const name of ERA_FRAMEWORKS) {
    const r = requirements.find((x) => x.name === name);
    const newest = input.era?.newest[name];
    // Only a framework the project declares: a bare import says nothing of the code's age.
    if (!r || !newest || r.source !== 'repo' || hasUpperBound(r.specifier)) continue;
    const floor = `>=${newest.split('.').slice(0, 2).join('.')}`;
    floors.set(name, {
      floor,
      why: `the ref's commit is of ${input.era?.commitDate.slice(0, 10)}, when ${name} ${newest} was the newest release`,
    });
  }
  const baseVersion = (r: Requirement): string | undefined => base.installed.get(r.name);
  // A CPU run whose report (or era) asks for a torch nothing here has: the base's is kept when it is the nearest to
  // what was asked (kornia-1563's "PyTorch 1.8.2": the base's 1.13 with its matching torchvision, not the wheel
  // folder's 2.13 beside PyPI's CUDA torchvision, which does not import).
  const nearestIsBase = (r: Requirement, have: string): boolean => {
    if (input.gpu || r.name !== 'torch' || !(r.source === 'report' || r.source === 'era' || r.source === 'script')) return false;
    const wanted = /^==\s*(\d+(?:\.\d+)*)/.exec(r.specifier.trim())?.[1];
    const wheels = input.wheelhouse['torch'] ?? [];
    // Only against the operator's CPU wheels: with none named, the index may well have the version asked.
    if (!wanted || wheels.length === 0 || wheels.some((v) => safeSatisfies(v, r.specifier))) return false;
    // Debian's torch is `1.13.0a0+gitunknown`, a pre-release by its spelling: its release is what is compared.
    const release = parseVersion(have)?.release.join('.');
    return release !== undefined && nearestVersion(wanted, [...wheels, release]) === release;
  };
  const baseFits = (r: Requirement): boolean => {
    const have = baseVersion(r);
    if (have === undefined) return false;
    if (nearestIsBase(r, have)) return true;
    // Without a checkout (a snippet) a version only the report names does not reject the base that has the package:
    // the comment's version flags say where they differ.
    if (!input.checkout && r.source === 'report') return true;
    // The era's floor alone does not reject the base: it is a guess at what the code calls, and a venv of its own
    // trades the base's matching torch/torchvision pair (and its setuptools, packaging…) for a guess; on a CPU machine
    // the index's torchvision beside a CPU torch does not import (timm at its 2023 commits went 4/4 → 2/4 that way).
    // The env is built on the base instead and proved by import: code that calls what the base's torch lacks
    // (`torch.xpu`) fails the proof as "framework too old", and the ladder (prove/next-candidate.ts) moves it up.
    return safeSatisfies(have, r.specifier);
  };
  const unmet = new Set(requirements.filter((r) => !baseFits(r)).map((r) => r.name));
  for (const r of requirements) {
    const have = baseVersion(r);
    if (have !== undefined && nearestIsBase(r, have))
      notes.push(
        `torch ${r.specifier} was asked (${clip(r.why, 160)}); none is at hand, and the base interpreter's ${have} is the nearest`,
      );
  }
  // Frameworks the base has in the project's range but older than the era's: an env is built (an overlay), so the
  // import proof runs on it.
  const belowEra = requirements.filter((r) => {
    const have = baseVersion(r);
    const floor = floors.get(r.name)?.floor;
    return have !== undefined && floor !== undefined && baseFits(r) && !safeSatisfies(have, floor);
  });

  // 2. Whether an env is built at all: asked for, a project to compile or to put on sys.path by a `.pth`, or a
  // requirement the base misses (absent, or outside any source's range).
  const project = input.spec.project;
  const build =
    input.configured ||
    (input.checkout && needsExtensionBuild(input.spec)) ||
    (input.checkout && project?.importRoots.some((r) => r !== project.root) === true) ||
    (input.checkout && belowEra.length > 0) ||
    unmet.size > 0;

  // 3. The overlay: what the base holds that no requirement needs in another version is taken from it. Its torchvision
  // and torchaudio are built for its torch and abort beside another: an env with its own torch is a venv of its own.
  let baseProvides: string[] | undefined;
  if (unmet.has('torch')) {
    const have = base.installed.get('torch');
    if (have !== undefined)
      notes.push(
        `the base interpreter's torch ${have} is outside what ${whoFor(requirements, base, 'torch')} asks, so the env is a venv of its own ` +
          "(the base's torchvision, built for that torch, aborts beside another)",
      );
  } else {
    baseProvides = [...base.installed.keys()].filter((n) => n !== '' && !unmet.has(n)).sort();
    const used = requirements.filter((r) => baseProvides?.includes(r.name)).map((r) => `${r.name} ${base.installed.get(r.name)}`);
    if (used.length) notes.push(`taken from the base interpreter: ${used.join(', ')}`);
  }

  // 4. A CPU run's torch: a version the operator's wheelhouse has, so uv never takes PyPI's CUDA build (several GB).
  const wheelPinned = new Map<string, string>();
  const torch = requirements.find((r) => r.name === 'torch');
  if (!input.gpu && torch && unmet.has('torch')) {
    const have = [...(input.wheelhouse['torch'] ?? [])];
    const fitting = have.filter((v) => safeSatisfies(v, torch.specifier) && safeSatisfies(v, floors.get('torch')?.floor ?? ''));
    // The user's word wins even over the wheelhouse; a project's range is kept; the report's and the era's version give
    // way to the CPU build at hand (the nearest to what they asked).
    const soft = torch.source === 'report' || torch.source === 'era' || torch.source === 'script';
    const wanted = /^==\s*(\d+(?:\.\d+)*)/.exec(torch.specifier.trim())?.[1] ?? null;
    // A project's cap below every CPU wheel, with no CPU index allowed: the nearest wheel above it, not a CUDA build.
    const overCap =
      !fitting.length && !soft && torch.source !== 'config' && !allowed(TORCH_CPU_INDEX, input.allowedIndexes)
        ? cpuWheelOverCap(torch.specifier, have)
        : null;
    const chosen = fitting.length
      ? newestOf(fitting)
      : soft && have.length
        ? ((wanted ? nearestVersion(wanted, have) : null) ?? newestOf(have))
        : overCap;
    if (chosen) {
      const pub = chosen.replace(/\+.*$/, '');
      wheelPinned.set('torch', chosen);
      if (overCap)
        notes.push(
          `torch ${torch.specifier} (${clip(torch.why, 160)}) has no CPU build here; the CPU build ${chosen} from the operator's ` +
            "wheel folder, the nearest above the project's cap, was used instead of the index's CUDA build (several GB), " +
            'and the import proof judges it',
        );
      else if (!fitting.length)
        notes.push(
          `torch ${torch.specifier || '(any)'} was asked (${clip(torch.why, 160)}); ` +
            `with no GPU here the CPU build ${chosen} from the operator's wheel folder was used`,
        );
      requirements = requirements.map((r) =>
        r === torch ? { ...r, specifier: `==${pub}`, why: clip(`${r.why}; the CPU build ${chosen} from the operator's wheel folder`) } : r,
      );
    } else if (allowed(TORCH_CPU_INDEX, input.allowedIndexes) && !extraIndexUrls.includes(TORCH_CPU_INDEX)) {
      extraIndexUrls = [...extraIndexUrls, TORCH_CPU_INDEX];
      notes.push(`torch comes from PyTorch's CPU index (${TORCH_CPU_INDEX}): this run has no GPU`);
    } else
      notes.push(
        'torch comes from the package index, which may give a CUDA build of several GB: no CPU wheel here fits ' +
          `${torch.specifier || 'the request'} (REPGEN_ENV_FIND_LINKS names CPU wheel folders; ` +
          `allowing ${TORCH_CPU_INDEX} in REPGEN_ENV_INDEXES makes it the source)`,
      );
  }

  // 5. The decision of each key package, and the source that made it.
  const decisions: VersionDecision[] = [];
  for (const r of requirements) {
    if (!KEY.has(r.name) && r.source !== 'config' && r.source !== 'report' && r.source !== 'era') continue;
    const floor = floors.get(r.name);
    const have = base.installed.get(r.name);
    if (baseProvides?.includes(r.name) && have !== undefined) {
      const bounds = [r.specifier && `${r.specifier} (${FROM[r.source]})`, floor && `${floor.floor} (era: ${floor.why})`].filter(Boolean);
      decisions.push({
        name: r.name,
        specifier: r.specifier,
        version: have,
        source: 'base',
        why: clip(
          floor && !safeSatisfies(have, floor.floor)
            ? `the base interpreter's ${have} satisfies ${r.specifier ? `${r.specifier} (${FROM[r.source]})` : 'the request'}; ` +
                `older than the era's ${floor.floor} (${floor.why}): kept while the import proof passes`
            : safeSatisfies(have, r.specifier)
              ? `the base interpreter's ${have} satisfies ${bounds.length ? bounds.join(' and ') : 'the request'}`
              : nearestIsBase(r, have)
                ? `${r.specifier} (${FROM[r.source]}) has no CPU build here; the base interpreter's ${have} is the nearest to it`
                : `the base interpreter's ${have}: with no checkout, the report's ${r.specifier} alone does not replace it`,
        ),
      });
      continue;
    }
    const wheel = wheelPinned.get(r.name);
    if (wheel) {
      decisions.push({ name: r.name, specifier: r.specifier, version: wheel, source: 'wheelhouse', why: clip(r.why) });
      continue;
    }
    const against =
      have !== undefined && !baseFits(r)
        ? `; not the base interpreter's ${have}${floor && safeSatisfies(have, r.specifier) ? ` (${floor.why})` : ''}`
        : '';
    const source: DecisionSource = floor && have !== undefined && safeSatisfies(have, r.specifier) ? 'era' : FROM[r.source];
    decisions.push({ name: r.name, specifier: r.specifier, version: null, source, why: clip(`${r.why}${against}`) });
  }
  return {
    build,
    spec: {
      ...input.spec,
      requirements,
      extraIndexUrls,
      notes: notes.map((n) => clip(n)),
      ...(baseProvides ? { baseProvides } : {}),
      decisions,
      ...(input.gpu ? {} : { cpuTorchWheels: [...(input.wheelhouse['torch'] ?? [])].slice(0, 500) }),
      ...(!input.gpu && allowed(TORCH_CPU_INDEX, input.allowedIndexes) ? { cpuTorchIndex: TORCH_CPU_INDEX } : {}),
    },
  };
}

const WHO: Record<DecisionSource, string> = {
  user: 'the user',
  report: 'the report',
  project: 'the project',
  era: "the commit's era",
  base: 'the base interpreter',
  wheelhouse: "the operator's wheel folder",
  import: 'the env',
};

/** "the project", "the report", "the commit's era": who asked for a version the base misses. */
function whoFor(reqs: readonly Requirement[], base: BaseInterpreter, name: string): string {
  const r = reqs.find((x) => x.name === name);
  const have = base.installed.get(name);
  if (!r || have === undefined) return 'the env';
  // The base satisfies the requirement's own range: only the era's floor rejected it.
  return safeSatisfies(have, r.specifier) ? WHO.era : WHO[FROM[r.source]];
}

function hasUpperBound(specifier: string): boolean {
  return /(?:^|,)\s*(?:<|<=|==|~=|===)/.test(specifier);
}

function safeSatisfies(version: string, specifier: string): boolean {
  if (!specifier.trim()) return true;
  try {
    return satisfies(version, specifier);
  } catch {
    return false;
  }
}

function newestOf(versions: readonly string[]): string | null {
  let best: string | null = null;
  for (const v of versions) {
    const p = parseVersion(v);
    if (p && (!best || compareVersions(p, parseVersion(best) as NonNullable<typeof p>) > 0)) best = v;
  }
  return best;
}

function allowed(url: string, allowlist: readonly string[]): boolean {
  const u = url.replace(/\/+$/, '');
  return allowlist.some((a) => u === a.replace(/\/+$/, '') || u.startsWith(`${a.replace(/\/+$/, '')}/`));
}

const clip = (s: string, n = 480): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
