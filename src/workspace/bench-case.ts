import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { readBounded } from '../host/read-bounded.js';
import type { FixCheck } from './fix-verdict.js';
import { findMirror } from './checkout.js';
import { WorkspaceError } from './errors.js';
import { handF2p, readF2pCase, runByHand } from './bench-f2p.js';
import { checkoutRef, prepareWorkspace, type PreparedWorkspace } from './prepare-workspace.js';
import type { Workspace } from '../exec/types.js';

/** What a fail-to-pass case adds to a bench row. */
export interface F2pRow {
  /** fixCheck.verdict at fix_commit; null when nothing was reproduced to check. */
  fixCheck: string | null;
  /** Exit codes of the written repro.py run by hand at buggy_commit and at fix_commit. */
  buggyExit: number | null;
  fixedExit: number | null;
  /** Non-zero before, 0 after, by hand; null when there was no script. */
  byHand: boolean | null;
  /** The tool claimed something (reproduced, fixed) that the hand runs contradict. */
  falseClaim: boolean;
  note: string;
  /** A behavioural reproduction's oracle at both commits (the fix check's record), in a few words; absent otherwise. */
  oracle?: string;
}

/** A case's two checkouts, or nothing for an ordinary case. Missing clones are usage errors: one line, exit 2. */
export async function prepareF2p(
  caseDir: string,
  mirrors: string | null,
  opts: { issueText: string; cacheDir: string; python: string },
): Promise<{ buggy: PreparedWorkspace | null; fixed: { workspace: Workspace; sha: string } | null; fixRef: string }> {
  const raw =
    (await readBounded(join(caseDir, 'case.json'), { maxBytes: 1_000_000, noFollow: true }).catch(() => null))?.toString('utf8') ?? null;
  let parsed: unknown;
  try {
    parsed = raw === null ? null : JSON.parse(raw);
  } catch {
    return { buggy: null, fixed: null, fixRef: '' };
  }
  let c;
  try {
    c = readF2pCase(parsed);
  } catch (err) {
    throw new UsageError(`${caseDir}: ${(err as Error).message}`);
  }
  if (!c) return { buggy: null, fixed: null, fixRef: '' };
  if (!mirrors) throw new UsageError(`case ${caseDir} is a fail-to-pass case of ${c.repo}: pass --mirrors DIR with a clone of it`);
  const source = await findMirror(mirrors, c.repo);
  if (!source)
    throw new UsageError(
      `no clone of ${c.repo} under --mirrors ${mirrors} (looked for ${c.repo.replace('/', '+')}/repo, ` +
        `${c.repo.replace('/', '+')}, ${c.repo}, ${c.repo.split('/')[1]})`,
    );
  try {
    const buggy = await prepareWorkspace({
      repoDir: source,
      repo: c.repo,
      explicitRef: c.buggy_commit,
      issueText: opts.issueText,
      cacheDir: opts.cacheDir,
      python: opts.python,
    });
    const fixed = await checkoutRef({ repoDir: source, repo: c.repo, ref: c.fix_commit, cacheDir: opts.cacheDir, python: opts.python });
    return { buggy, fixed, fixRef: c.fix_commit };
  } catch (err) {
    if (err instanceof WorkspaceError) throw new UsageError(`${caseDir}: ${err.message}`);
    throw err;
  }
}

/** What a run claimed, as far as the by-hand check reads it (the pipeline's evidence has this shape). */
export interface RunClaims {
  outcome: { status: string; script: string | null; env?: { python: string | null } | undefined };
  fixCheck?: Pick<FixCheck, 'verdict' | 'oracle'>;
}

/** The posted repro.py by hand at both commits, and whether the tool's claims hold against it. */
export async function f2pByHand(
  evidence: RunClaims,
  buggyDir: string,
  fixedDir: string,
  opts: { python: string; timeoutMs: number },
): Promise<F2pRow> {
  const o = evidence.outcome;
  const fixCheck = o.status === 'reproduced' ? (evidence.fixCheck?.verdict ?? null) : null;
  const oc = o.status === 'reproduced' ? evidence.fixCheck?.oracle : undefined;
  const oracle = oc
    ? `expected ${oc.expected}: buggy ${oc.atBuggy ?? 'fails'}; fix ${oc.heldAtFix ? 'holds' : 'fails'}${oc.atFix ? ` (${oc.atFix})` : ''}`.slice(
        0,
        300,
      )
    : undefined;
  if (!o.script) return { fixCheck, buggyExit: null, fixedExit: null, byHand: null, falseClaim: false, note: 'no script' };
  // The maintainer's run uses the environment RepGen built (its venv's interpreter) when the run had one.
  const hand = { ...opts, python: o.env?.python ?? opts.python };
  const before = await runByHand(o.script, buggyDir, hand);
  const after = await runByHand(o.script, fixedDir, hand);
  // A hand run stopped at the project's compiled extension (`from detectron2 import _C`) ran none of the script: a hand
  // run has no build of it, RepGen's runs do. It can neither confirm a claim nor contradict one.
  const unbuilt = [before, after].find((h) => /^(?:ImportError|ModuleNotFoundError): .*\b_C\b/.test(h.lastLine));
  if (unbuilt)
    return {
      ...(oracle ? { oracle } : {}),
      fixCheck,
      buggyExit: before.exitCode,
      fixedExit: after.exitCode,
      byHand: null,
      falseClaim: false,
      note: `by hand: cannot run here, the project's compiled extension is not built for a hand run (${unbuilt.lastLine.slice(0, 120)})`,
    };
  const byHand = handF2p(before, after);
  const claims: string[] = [];
  if (o.status === 'reproduced' && (before.exitCode === 0 || before.timedOut))
    claims.push('claimed reproduced, but by hand it exits 0 at buggy_commit');
  if (fixCheck === 'fixed' && after.exitCode !== 0)
    claims.push(`claimed fixed, but by hand it exits ${after.exitCode ?? 'by a signal'} at fix_commit`);
  return {
    ...(oracle ? { oracle } : {}),
    fixCheck,
    buggyExit: before.exitCode,
    fixedExit: after.exitCode,
    byHand,
    falseClaim: claims.length > 0,
    note:
      claims.join('; ') ||
      `by hand: exit ${before.exitCode ?? 'signal'} before, ${after.exitCode ?? 'signal'} after (${before.lastLine.slice(0, 120)})`,
  };
}
