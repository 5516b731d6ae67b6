import { RefNotFoundError } from './errors.js';

/**
 * Which commit of the project a report is about. Intake resolves it once; the evidence and the comment
 * say which ref was used and why. Order: an explicit ref (`/repgen --ref X`, `--ref X`); else a commit
 * or blob link into this repository that the report contains; else a released version of the project
 * the report names (`timm==0.9.2` → its tag); else the default branch's head.
 */

/** Where the resolved ref came from. */
export type RefSource = 'explicit' | 'link' | 'version' | 'default';

export interface RefCandidate {
  source: Exclude<RefSource, 'default'>;
  /** A commit SHA (full or abbreviated), or a tag / branch name to look up. */
  ref: string;
  /** Why this candidate: the text of the report it came from. */
  why: string;
  /** For a version: the alternative tag spellings tried after `ref` (`0.9.2`, `timm-v0.9.2`). */
  alternatives?: string[];
}

export interface ResolvedRef {
  /** The commit the run uses. */
  sha: string;
  /** The ref as requested or found (`v0.9.2`, `main`, a SHA). */
  ref: string;
  source: RefSource;
  /** One line for the evidence and the comment. */
  why: string;
  /** Candidates that did not exist in the repository (a released version without a tag), said in the comment. */
  notes: string[];
}

/** Looks refs up in the repository (a git directory locally, the API for the App). */
export interface RefLookup {
  /** The full SHA of a commit, tag or branch, or null when it does not exist. */
  commit(ref: string): Promise<string | null>;
  /** The default branch's name and head. */
  defaultHead(): Promise<{ name: string; sha: string }>;
}

const SHA = /^[0-9a-f]{7,40}$/i;
/** Names we accept as a ref: no options, no `..`, no shell characters. Same rule as `/repgen --ref`. */
export const SAFE_REF = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)[A-Za-z0-9._/-]{1,200}$/;

/** A repository as `owner/name`, compared case-insensitively. */
export interface RepoName {
  owner: string;
  name: string;
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Links into `repo` at a commit: `/blob/<sha>/…`, `/tree/<sha>`, `/commit/<sha>`, `/blame/<sha>/…`.
 * Branch links (`/blob/main/…`) name no commit and are skipped. Pure.
 */
export function linkedCommits(text: string, repo: RepoName): RefCandidate[] {
  const re = new RegExp(
    `github\\.com/${escapeRe(repo.owner)}/${escapeRe(repo.name)}/(blob|tree|commit|blame)/([0-9a-f]{7,40})(?![0-9a-z])`,
    'gi',
  );
  const seen = new Set<string>();
  const out: RefCandidate[] = [];
  for (const m of text.matchAll(re)) {
    const sha = (m[2] ?? '').toLowerCase();
    if (seen.has(sha)) continue;
    seen.add(sha);
    out.push({ source: 'link', ref: sha, why: `the report links ${m[1]}/${sha.slice(0, 12)}` });
  }
  return out;
}

/**
 * Versions of the project the report names: `timm==0.9.2`, `pip install timm==0.6.12`, `timm 0.9.2`,
 * `timm version: 0.9.2`, `timm: 0.9.2`, `timm.__version__ … 0.9.2`. `packages` are the project's
 * distribution and import names (lower-case compared). Local and dev suffixes (`0.9.2+cu118`, `.dev0`)
 * are cut: the tag is the release's. Pure.
 */
export function namedVersions(text: string, packages: readonly string[]): RefCandidate[] {
  const names = [...new Set(packages.map((p) => p.toLowerCase()).filter((p) => /^[a-z0-9][a-z0-9._-]*$/.test(p)))];
  if (!names.length) return [];
  const alt = names.map(escapeRe).join('|');
  // The name, then a separator (`==`, `:`, ` version `, `v`), then the version; one piece a line.
  const re = new RegExp(
    [
      `(?<![\\w.-])(${alt})(?:\\.__version__)?`,
      '(?:\\s*(?:==|=|:|version:?|v(?=\\d))\\s*|\\s+(?:version\\s+)?v?)',
      '(\\d+\\.\\d+(?:\\.\\d+)*(?:(?:a|b|rc)\\d+)?)(?!\\d)',
    ].join(''),
    'gi',
  );
  const seen = new Set<string>();
  const out: RefCandidate[] = [];
  for (const m of text.matchAll(re)) {
    const pkg = (m[1] ?? '').toLowerCase();
    const version = m[2] ?? '';
    if (seen.has(version)) continue;
    seen.add(version);
    out.push({
      source: 'version',
      ref: `v${version}`,
      why: `the report names ${pkg} ${version}`,
      alternatives: [version, `${pkg}-v${version}`, `${pkg}-${version}`],
    });
  }
  return out;
}

/** The candidates in the order they are tried. Pure. */
export function refCandidates(input: {
  explicit?: string | null;
  text: string;
  repo?: RepoName | null;
  packages?: readonly string[];
}): RefCandidate[] {
  if (input.explicit) return [{ source: 'explicit', ref: input.explicit, why: `asked for ${input.explicit}` }];
  // A version the report says worked is where the bug is absent: never the ref to reproduce it at.
  const worked = new Set(workedVersions(input.text, input.packages ?? []).map((c) => c.ref));
  const named = namedVersions(input.text, input.packages ?? []).filter((c) => !worked.has(c.ref));
  return [...(input.repo ? linkedCommits(input.text, input.repo) : []), ...named];
}

/**
 * Picks the first candidate that exists in the repository, else the default branch's head. An explicit
 * ref that does not exist is an error (the user asked for it); a linked commit or a version that does
 * not exist is a note, since reports link forks and name unreleased versions.
 */
export async function resolveRef(candidates: readonly RefCandidate[], lookup: RefLookup): Promise<ResolvedRef> {
  const notes: string[] = [];
  for (const c of candidates) {
    if (!SAFE_REF.test(c.ref)) {
      if (c.source === 'explicit') throw new RefNotFoundError(`the ref '${c.ref.slice(0, 60)}' is not a commit SHA, tag or branch name`);
      continue;
    }
    for (const ref of [c.ref, ...(c.alternatives ?? [])]) {
      const sha = await lookup.commit(ref);
      if (sha) return { sha, ref, source: c.source, why: c.source === 'version' ? `${c.why} (tag ${ref})` : c.why, notes };
    }
    if (c.source === 'explicit') throw new RefNotFoundError(`the ref '${c.ref}' does not exist in the repository`);
    if (c.source === 'version')
      notes.push(
        `${c.why}, but the repository has no tag for it (tried ${[c.ref, ...(c.alternatives ?? [])].join(', ')}); used the default branch instead`,
      );
    else notes.push(`${c.why}, but that commit is not in the repository`);
  }
  const head = await lookup.defaultHead();
  return {
    sha: head.sha,
    ref: head.name,
    source: 'default',
    why: `the default branch (${head.name}) head: the report names no commit or released version`,
    notes,
  };
}

/** Whether `ref` looks like a commit SHA (abbreviated or full). */
export function isSha(ref: string): boolean {
  return SHA.test(ref);
}

const VERSION = String.raw`v?(\d+\.\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?)(?![\d.]*\d)`;

/**
 * Versions (or commits) of the project the report says worked: "worked in 0.9.2", "works fine with v1.2",
 * "was working on timm 0.6.12", "no issue with 0.5.4", "after upgrading from 0.6.12 (to 0.9.2)", "downgrading
 * to 0.6.12 fixes it", "last working version: 1.0.6", "worked at commit 1a2b3c4". The good end of a
 * bisection, and never the ref the bug is reproduced at. `packages` (the project's names) may stand between the
 * words and the version. Pure.
 */
export function workedVersions(text: string, packages: readonly string[]): RefCandidate[] {
  const names = [...new Set(packages.map((p) => p.toLowerCase()).filter((p) => /^[a-z0-9][a-z0-9._-]*$/.test(p)))];
  const pkg = names.length ? String.raw`(?:(?:${names.map(escapeRe).join('|')})(?:\s*(?:==|=|:)\s*|\s+(?:version\s+)?))?` : '';
  // Only the project's own name may stand between "upgrading"/"downgrading" and "from"/"to": "upgrading torch
  // from 1.13" names torch's version, not the project's.
  const own = names.length ? String.raw`(?:(?:${names.map(escapeRe).join('|')})\s+)?` : '';
  const lead = [
    String.raw`(?:worked|works|working|was\s+fine|is\s+fine|ran\s+fine|no\s+(?:issues?|problems?|errors?))` +
      String.raw`(?:\s+(?:fine|well|correctly|as\s+expected))?\s+(?:in|on|with|using|under|at)\s+(?:version\s+|release\s+)?`,
    String.raw`(?:upgrad|updat)(?:ing|ed|e)\s+${own}from\s+(?:version\s+)?`,
    String.raw`(?:downgrad|revert|roll(?:ing|ed)?\s+back)\w*\s+${own}to\s+(?:version\s+)?`,
    String.raw`last\s+(?:known\s+)?(?:good|working)\s+(?:version|release|commit)\s*(?:is|was|:)?\s*`,
  ].join('|');
  const re = new RegExp(String.raw`\b(?:${lead})${pkg}(?:commit\s+([0-9a-f]{7,40})\b|${VERSION})`, 'gi');
  const seen = new Set<string>();
  const out: RefCandidate[] = [];
  for (const m of text.slice(0, 200_000).matchAll(re)) {
    const said = m[0].replace(/\s+/g, ' ').trim();
    if (m[1]) {
      const sha = m[1].toLowerCase();
      if (!seen.has(sha)) out.push({ source: 'version', ref: sha, why: `the report says "${said}"` });
      seen.add(sha);
      continue;
    }
    const version = m[2] ?? '';
    if (!version || seen.has(version)) continue;
    seen.add(version);
    const alternatives = [version, ...names.flatMap((n) => [`${n}-v${version}`, `${n}-${version}`])];
    out.push({ source: 'version', ref: `v${version}`, why: `the report says "${said}"`, alternatives });
  }
  return out;
}
