import { satisfies } from '@renovatebot/pep440';
import type { EnvironmentConfig } from '../../config/repo-config.js';
import { ERA_SENSITIVE, eraCap, type ReleaseInfo } from './era.js';
import { FRAMEWORK_DISTRIBUTIONS, frameworkOfExtras } from './framework-extra.js';
import { distributionsForImports, type ImportNameTables } from '../read/import-names.js';
import { indexUrlAllowed } from './match-index-url.js';
import { projectLayout } from '../read/project-layout.js';
import type { DeclaredRequirement } from '../read/read-requirement-files.js';
import { readRequirementsFile } from '../read/read-requirement-files.js';
import { readRepoDeps, type RepoDeps, type RepoFiles } from '../read/read-repo-deps.js';
import { frameworkRangeInRequirementFiles } from '../read/framework-range.js';
import { reportKerasBackend } from '../read/keras-backend.js';
import { readReportVersions, type ReportedVersion } from '../read/read-report-versions.js';
import { markerHolds, normalizeName, parseRequirement } from '../read/requirement-line.js';
import { EnvSpec, type Requirement } from '../types.js';

/**
 * The environment spec, from everything that says what a run needs: the report (the versions it names),
 * the repository at the ref (its declared dependencies, layout, extensions), the script's imports,
 * `.github/repgen.yml`'s `environment:`, the era of the ref's commit, and the operator's policy. Who wins:
 * repgen.yml's packages, then the report's versions, then the repository's ranges, then a bare import;
 * the era caps a package only when nothing above named its version. Every requirement says where it came
 * from. Pure.
 */
export interface EnvSpecInput {
  /** The report's title and body. */
  report: string;
  /** The checkout at the ref; null when there is none (a snippet with no repository). */
  repoFiles: RepoFiles | null;
  /** Modules the script (or the report's code) imports, top-level or dotted. */
  scriptImports: readonly string[];
  repoConfig: { environment?: EnvironmentConfig | undefined; python?: string | undefined } | null;
  /**
   * The user's explicit pins from where they run RepGen (`repgen reproduce --with "torch==2.7.*" --python 3.11`): they
   * beat every inferred source and repgen.yml's, and `label` (`--with`) is what the evidence cites.
   */
  userPins?: { packages: readonly string[]; python?: string | null | undefined; label: string } | null | undefined;
  /** The ref's commit date and the releases of the era-sensitive packages (see `eraPackages`); null: no era caps. */
  era: { commitDate: string; releases: Readonly<Record<string, readonly ReleaseInfo[]>> } | null;
  tables: ImportNameTables;
  policy: EnvPolicy;
}

/** What the operator decides. */
export interface EnvPolicy {
  /** Index URLs a repository may name (REPGEN_ENV_INDEXES); a URL under one of them is allowed. */
  allowedIndexes: readonly string[];
  /** Local wheel folders (the machine's torch CPU wheel). */
  findLinks: readonly string[];
  /** The base interpreter's `3.11`: markers are evaluated for it when the spec names no other. */
  defaultPython: string;
  /** Whether runs get a GPU; without one a CUDA build the report names is noted as replaced by the CPU build. */
  gpu: boolean;
}

/** Extras that are the project's own tooling: only the requirement an import needs is taken from them. */
const TOOLING_EXTRAS = /^(?:dev|develop|test|tests|testing|docs?|quality|lint|style|all|full|benchmarks?|ci)$/;

const clip = (s: string, n = 480): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function computeEnvSpec(input: EnvSpecInput): EnvSpec {
  const notes: string[] = [];
  const reported = readReportVersions(input.report);
  const repo = input.repoFiles ? readRepoDeps(input.repoFiles) : null;
  const layout = input.repoFiles && repo ? projectLayout(input.repoFiles.paths, repo) : { install: null, packages: [] };
  const envCfg = input.repoConfig?.environment;
  const own = new Set([repo?.distribution, ...layout.packages].filter((n): n is string => !!n).map(normalizeName));

  const { python, pythonWhy } = choosePython(input, reported, repo, notes);
  const target = python ?? input.policy.defaultPython;
  const reqs = new Map<string, Requirement>();
  const put = (r: Requirement) => {
    if (!own.has(r.name)) reqs.set(r.name, r);
  };
  const fromDeclared = (d: DeclaredRequirement, source: Requirement['source'], extras: readonly string[] = []) => {
    if (!markerHolds(d.req.marker, { python: target, extras })) return;
    const prev = reqs.get(d.req.name);
    // The same line reached twice (two files `-r` a shared one) adds nothing; clauses already there are not repeated.
    if (prev?.why.includes(`${d.where}:`)) return;
    const clauses = [...(prev?.specifier.split(',') ?? []), ...d.req.specifier.split(',')].filter(Boolean);
    const specifier = [...new Set(clauses)].join(',');
    const why = prev ? `${prev.why}; ${d.where}: ${d.text}` : `${d.where}: ${d.text}`;
    put({
      name: d.req.name,
      specifier,
      extras: [...new Set([...(prev?.extras ?? []), ...d.req.extras])],
      source: prev?.source ?? source,
      why: clip(why),
    });
  };

  // 1. The repository's declared dependencies, and the extras the report or the script needs; what compiling its
  // extensions needs when it has some (they are built in place with the env's interpreter, no build isolation).
  for (const d of repo?.dependencies ?? []) fromDeclared(d, 'repo');
  if (layout.install?.mode === 'build' && layout.install.extensions.length)
    for (const d of repo?.buildRequires ?? []) fromDeclared(d, 'repo');
  const scriptDists = distributionsForImports(input.scriptImports, input.tables, layout.packages);
  for (const [extra, list] of Object.entries(repo?.extras ?? {})) {
    const asked = envCfg?.extras.some((e) => normalizeName(e) === extra) === true;
    const named = repo?.distribution ? reportNamesExtra(input.report, repo.distribution, extra) : false;
    const needed = list.filter((d) => scriptDists.some((s) => s.distribution === d.req.name) && !reqs.has(d.req.name));
    if (asked || named || (!TOOLING_EXTRAS.test(extra) && needed.length)) {
      for (const d of list)
        fromDeclared(
          {
            ...d,
            where: `${d.where} (${asked ? 'repgen.yml environment.extras' : named ? 'the report installs it' : 'the script imports from it'})`,
          },
          'repo',
          [extra],
        );
    } else for (const d of needed) fromDeclared(d, 'repo', [extra]);
  }
  // 1b. A framework the project declares only as an extra named after it (diffusers[torch]), when nothing names one.
  const namedFrameworks = FRAMEWORK_DISTRIBUTIONS.filter(
    (fw) => reqs.has(fw) || scriptDists.some((s) => s.distribution === fw) || reported.versions.some((v) => v.name === fw),
  );
  const extraFramework = frameworkOfExtras(repo?.extras ?? {}, namedFrameworks);
  if (extraFramework) {
    const { extra, declared } = extraFramework;
    fromDeclared({ ...declared, where: `${declared.where} (the project's framework, an extra named after it)` }, 'repo', [extra]);
  }
  // 2. repgen.yml's requirement files, then the script's own imports.
  for (const f of envCfg?.requirements ?? []) {
    const text = input.repoFiles?.texts.get(f);
    if (text === undefined) notes.push(`repgen.yml environment.requirements names ${f}, which the checkout does not have`);
    else for (const d of readRequirementsFile(f, input.repoFiles?.texts ?? new Map())) fromDeclared(d, 'config');
  }
  for (const s of scriptDists) {
    if (reqs.has(s.distribution) || own.has(s.distribution)) continue;
    const why =
      s.via === 'mapping' ? `the script imports ${s.module} (pipreqs' mapping: ${s.distribution})` : `the script imports ${s.module}`;
    put({ name: s.distribution, specifier: '', extras: [], source: 'script', why });
  }
  // 3. The report's versions beat the repository's ranges.
  applyReportedVersions(reported.versions, reqs, own, notes, input.policy.gpu);
  // 3b. Keras runs on a backend it does not declare: the one the report sets, else TensorFlow (Keras 2 has no other).
  kerasBackend(input.report, reqs, notes, own.has('keras'));
  // 3c. A framework the report brings in with no version, that the project's metadata does not declare, takes the
  // range the project's own requirement files give it (Keras 3's requirements.txt: torch>=2.1.0).
  if (input.repoFiles) rangeFromRequirementFiles(input.repoFiles, reqs, { python: target, gpu: input.policy.gpu });
  // 4. repgen.yml's packages beat everything but 4b, the user's pins where they run RepGen (the later set wins).
  const pinned = [
    { label: 'repgen.yml environment.packages:', packages: envCfg?.packages ?? [] },
    { label: input.userPins?.label ?? '', packages: input.userPins?.packages ?? [] },
  ];
  for (const { label, packages } of pinned)
    for (const p of packages) {
      const r = parseRequirement(p);
      if (!r) notes.push(`${label} ${clip(p, 100)} is not a requirement (PEP 508), left out`);
      else reqs.set(r.name, { name: r.name, specifier: r.specifier, extras: r.extras, source: 'config', why: `${label} ${clip(p, 200)}` });
    }
  // 5. The era: what nothing above pinned is capped at the series current at the ref's commit. Its wheels are looked for
  // on the base interpreter's Python, the one every venv is made from (the builder says when it is not the Python asked):
  // a report of Python 3.7 on a 3.11 machine gets the oldest numpy with 3.11 wheels, not 2019's (cp37 only).
  if (input.era) applyEra(reqs, input.era, input.policy.defaultPython);

  if (reported.gpu === true && !input.policy.gpu) notes.push('the reporter ran on a GPU; this env runs on the CPU');
  // `since version 1.0.7` names the project's own version: the checkout at the ref stands for it.
  const unnamed = reported.unnamed[0];
  if (unnamed && layout.install)
    notes.push(`the report names version ${unnamed.version} (“${unnamed.why}”); the checkout at the ref is used`);
  const indexes = chooseIndexes(envCfg, input.policy, notes);
  return EnvSpec.parse({
    python,
    pythonWhy,
    requirements: [...reqs.values()],
    project: layout.install,
    indexUrl: indexes.index,
    extraIndexUrls: indexes.extra,
    findLinks: [...input.policy.findLinks],
    // Per-package era caps instead of resolving everything as of the commit date: torch of 2019 has no wheel
    // for today's Python, and most packages did not break their API.
    excludeNewer: null,
    ...(input.era ? { eraDate: input.era.commitDate } : {}),
    buildCommands: envCfg?.build ?? [],
    notes: notes.map((n) => clip(n)),
  });
}

/** The era-sensitive packages `computeEnvSpec` would cap for this input: the ones whose releases to look up. */
export function eraPackages(input: Omit<EnvSpecInput, 'era'>): string[] {
  const spec = computeEnvSpec({ ...input, era: null });
  const names = new Set(
    spec.requirements.filter((r) => r.source !== 'report' && r.source !== 'config' && !hasUpperBound(r.specifier)).map((r) => r.name),
  );
  if (spec.requirements.length) names.add('numpy');
  return ERA_SENSITIVE.filter(
    (n) => names.has(n) && !spec.requirements.some((r) => r.name === n && (r.source === 'report' || r.source === 'config')),
  );
}

function hasUpperBound(specifier: string): boolean {
  return /(?:^|,)(?:<|<=|==|~=|===)/.test(specifier);
}

function applyEra(reqs: Map<string, Requirement>, era: NonNullable<EnvSpecInput['era']>, python: string): void {
  const any = reqs.size > 0;
  for (const name of ERA_SENSITIVE) {
    const prev = reqs.get(name);
    // numpy is in every deep-learning env (torch needs it) even when nothing declares it.
    if (!prev && !(name === 'numpy' && any)) continue;
    if (prev && (prev.source === 'report' || prev.source === 'config' || hasUpperBound(prev.specifier))) continue;
    const releases = era.releases[name];
    const cap = releases ? eraCap(name, releases, era.commitDate, python) : null;
    if (!cap) continue;
    const specifier = [prev?.specifier, cap.specifier].filter(Boolean).join(',');
    const why = prev ? `${prev.why}; capped ${cap.specifier}: ${cap.why}` : `capped ${cap.specifier}: ${cap.why}`;
    reqs.set(name, { name, specifier, extras: prev?.extras ?? [], source: 'era', why: clip(why) });
  }
}

/**
 * Frameworks a report states it ran: they come in even when nothing else requires them (Keras on the torch
 * backend imports no torch in the script, but the reporter's torch is what the bug ran on).
 */
const FRAMEWORKS = new Set(['torch', 'tensorflow', 'jax']);

/** Desktop builds and the server build of the same project and releases (no GUI libraries): a run has no display. */
const HEADLESS_TWIN: Readonly<Record<string, string>> = {
  'opencv-python': 'opencv-python-headless',
  'opencv-contrib-python': 'opencv-contrib-python-headless',
};

function frameworkStated(v: ReportedVersion): Requirement {
  return { name: v.name, specifier: '', extras: [], source: 'report', why: '' };
}

function applyReportedVersions(
  versions: ReportedVersion[],
  reqs: Map<string, Requirement>,
  own: Set<string>,
  notes: string[],
  gpu: boolean,
): void {
  for (const stated of versions) {
    if (own.has(stated.name)) {
      notes.push(`the report names ${stated.name} ${stated.version} (“${stated.why}”); the checkout at the ref is used instead`);
      continue;
    }
    // The reporter's desktop build names the release of the server build the env takes (opencv-python 4.8.0.76).
    const twin = HEADLESS_TWIN[stated.name];
    const v = !reqs.has(stated.name) && twin && reqs.has(twin) ? { ...stated, name: twin } : stated;
    const prev = reqs.get(v.name) ?? (v.form === 'stated' && FRAMEWORKS.has(v.name) ? frameworkStated(v) : undefined);
    if (!prev) continue;
    if (prev.specifier && !safeSatisfies(v.version, prev.specifier)) {
      notes.push(`the report's ${v.name} ${v.version} is outside ${prev.specifier} (${clip(prev.why, 120)}); the report's version is used`);
    }
    if (v.local && /^cu\d+|^rocm/.test(v.local) && !gpu)
      notes.push(`the report's ${v.name} ${v.version}+${v.local} is a ${v.local} build; this env takes the CPU build of ${v.version}`);
    reqs.set(v.name, {
      name: v.name,
      // `torch 2.7` names a series, not the release 2.7.0.
      specifier: /^\d+\.\d+$/.test(v.version) ? `==${v.version}.*` : `==${v.version}`,
      extras: prev.extras,
      source: 'report',
      why: clip(`the report: “${v.why}”`),
    });
  }
}

function safeSatisfies(version: string, specifier: string): boolean {
  try {
    return satisfies(version, specifier);
  } catch {
    return true;
  }
}

/** `pip install "diffusers[torch]"`, `diffusers[torch]==0.30`: the report installs the project with that extra. */
function reportNamesExtra(report: string, distribution: string, extra: string): boolean {
  const dist = distribution.replace(/[-_.]+/g, '[-_.]');
  const re = new RegExp(`(?<![\\w.-])${dist}\\[([^\\]]{1,200})\\]`, 'gi');
  return [...report.matchAll(re)].some((m) => (m[1] ?? '').split(',').some((e) => normalizeName(e) === extra));
}

const PYTHON_MINORS = ['3.13', '3.12', '3.11', '3.10', '3.9', '3.8'];

function choosePython(
  input: EnvSpecInput,
  reported: ReturnType<typeof readReportVersions>,
  repo: RepoDeps | null,
  notes: string[],
): { python: string | null; pythonWhy: string | null } {
  const cfg = input.repoConfig;
  const flag = input.userPins?.python;
  if (flag) return { python: flag, pythonWhy: `--python ${flag}` };
  if (cfg?.environment?.python)
    return { python: cfg.environment.python, pythonWhy: `repgen.yml environment.python: ${cfg.environment.python}` };
  if (cfg?.python) return { python: cfg.python, pythonWhy: `repgen.yml python: ${cfg.python}` };
  const minor = reported.python ? /^3\.\d+/.exec(reported.python)?.[0] : undefined;
  const requires = repo?.requiresPython;
  // A Python the project no longer supports (a report of 3.6 against requires-python >=3.8) is not what the ref runs on.
  if (minor && requires && !safeSatisfies(`${minor}.99`, requires)) {
    notes.push(`the report's Python ${reported.python} is outside ${requires} (${repo?.requiresPythonWhere ?? 'the project'}); not used`);
  } else if (minor) return { python: minor, pythonWhy: clip(`the report: “${reported.pythonWhy ?? ''}”`) };
  if (requires && !safeSatisfies(`${input.policy.defaultPython}.0`, requires)) {
    const fit = PYTHON_MINORS.find((m) => safeSatisfies(`${m}.0`, requires));
    if (fit)
      return {
        python: fit,
        pythonWhy: `${repo?.requiresPythonWhere ?? 'the project'}: ${requires} excludes ${input.policy.defaultPython}`,
      };
  }
  if (repo?.condaPython) return { python: repo.condaPython, pythonWhy: `environment.yml: python=${repo.condaPython}` };
  return { python: null, pythonWhy: null };
}

function chooseIndexes(cfg: EnvironmentConfig | undefined, policy: EnvPolicy, notes: string[]): { index: string | null; extra: string[] } {
  const allowed = (url: string) => indexUrlAllowed(url, policy.allowedIndexes);
  const check = (url: string, key: string): boolean => {
    if (allowed(url)) return true;
    notes.push(`repgen.yml ${key} ${url} is not on the operator's REPGEN_ENV_INDEXES; left out`);
    return false;
  };
  const index = cfg?.index && check(cfg.index, 'environment.index') ? cfg.index : null;
  const extra = (cfg?.extraIndexes ?? []).filter((u) => check(u, 'environment.extraIndexes'));
  return { index, extra };
}

/**
 * Keras declares no backend: Keras 2 (`keras==2.15.0`) runs only on the TensorFlow of its own minor series, Keras 3
 * on the backend the report names (its `KERAS_BACKEND`, else its words: src/env/read/keras-backend.ts; TensorFlow
 * when it names none). The backend is added when nothing else brought one, and said; also when the project itself is
 * Keras (its checkout declares no framework either).
 */
function kerasBackend(report: string, reqs: Map<string, Requirement>, notes: string[], projectIsKeras: boolean): void {
  const keras =
    reqs.get('keras') ?? (projectIsKeras ? { name: 'keras', specifier: '', extras: [], source: 'repo' as const, why: '' } : null);
  if (!keras) return;
  const pinned = /^==\s*(\d+)\.(\d+)/.exec(keras.specifier.trim());
  const major = pinned ? Number(pinned[1]) : null;
  const newline = report.indexOf('\n');
  const named = reportKerasBackend(newline < 0 ? report : report.slice(0, newline), newline < 0 ? '' : report.slice(newline + 1));
  const backend = major !== null && major < 3 ? 'tensorflow' : (named ?? 'tensorflow');
  const specifier = major !== null && major < 3 && pinned ? `==${pinned[1]}.${pinned[2]}.*` : '';
  const have = reqs.get(backend);
  if (have) {
    // The script imports TensorFlow with no version: Keras 2's pin decides its series.
    if (!have.specifier && specifier) {
      reqs.set(backend, {
        ...have,
        specifier,
        why: `${have.why}; keras ${keras.specifier.replace(/^==/, '')} runs on TensorFlow ${specifier}`,
      });
      notes.push(`tensorflow ${specifier}: keras ${keras.specifier.replace(/^==/, '')} runs on the TensorFlow of its series`);
    }
    return;
  }
  const why =
    major !== null && major < 3
      ? `keras ${keras.specifier.replace(/^==/, '')} runs on the TensorFlow of its series`
      : named
        ? `the report's Keras runs on ${named} (KERAS_BACKEND=${named})`
        : 'Keras runs on TensorFlow when KERAS_BACKEND is not set';
  reqs.set(backend, { name: backend, specifier, extras: [], source: 'report', why });
  notes.push(`${backend}${specifier ? ` ${specifier}` : ''} added as Keras's backend: ${why}`);
}

function rangeFromRequirementFiles(files: RepoFiles, reqs: Map<string, Requirement>, opts: { python: string; gpu: boolean }): void {
  for (const name of FRAMEWORKS) {
    const r = reqs.get(name);
    if (!r || r.source !== 'report' || r.specifier) continue;
    const d = frameworkRangeInRequirementFiles(files, name, opts);
    if (!d) continue;
    reqs.set(name, { ...r, specifier: d.req.specifier, source: 'repo', why: clip(`${r.why || 'the report'}; ${d.where}: ${d.text}`) });
  }
}
