import { z } from 'zod';
import type { Workspace } from '../exec/types.js';
import type { BisectCommit } from './plan-bisect.js';

/** One commit a bisection ran the reproduction at. */
export const BisectStep = z.object({
  sha: z.string(),
  subject: z.string(),
  verdict: z.enum(['good', 'bad', 'skip']),
  why: z.string(),
  runs: z.number().int().min(0),
  durationMs: z.number().int().min(0),
  /** The commit's own environment, when each step gets one ("lock 1a2b3c4d5e6f, reused"). Absent in older evidence. */
  env: z.string().optional(),
});
export type BisectStep = z.infer<typeof BisectStep>;

const CommitRef = z.object({ ref: z.string(), sha: z.string() });

/** What a bisection found, as evidence.json and the comment state it. */
export const BisectResult = z.object({
  /**
   * `found`: one first bad commit; `ambiguous`: skipped commits hide which of `candidates` it is;
   * `not_regression`: the reproduction fails at GOOD too; `good_unusable`: it could not run at GOOD;
   * `ceiling`: the step or time ceiling ended it with `candidates` still suspect; `no_commits`: GOOD is not
   * an ancestor of the ref along the first parents.
   */
  status: z.enum(['found', 'ambiguous', 'not_regression', 'good_unusable', 'ceiling', 'no_commits']),
  reason: z.string(),
  good: CommitRef.extend({ why: z.string() }),
  bad: CommitRef,
  firstBad: z
    .object({
      sha: z.string(),
      subject: z.string(),
      pr: z.number().int().nullable(),
      /** Files the commit changed (first-parent diff), at most 50. */
      changedFiles: z.array(z.string()),
      /** Those inside a package the reproduction imports: none makes the blame doubtful, and the comment says so. */
      touchesImported: z.array(z.string()),
      /** Those the failing run's traceback at it passes through (a crash raised in code it changed). Absent in older evidence. */
      inTraceback: z.array(z.string()).optional(),
    })
    .nullable(),
  candidates: z.array(z.object({ sha: z.string(), subject: z.string() })),
  steps: z.array(BisectStep),
  /** First-parent commits between GOOD and the ref, and log2 of that: the steps a clean bisection needs. */
  commitsInRange: z.number().int().min(0),
  expectedSteps: z.number().int().min(0),
  wallMs: z.number().int().min(0),
});
export type BisectResult = z.infer<typeof BisectResult>;

/**
 * The repository side of a bisection: the commits to search, the project at any of them, what a commit
 * changed. The local adapter reads a git repository (git-bisect-source.ts); the pipeline
 * knows no git.
 */
export interface BisectSource {
  /** The ref where the report says it worked (or `--bisect GOOD`), resolved; `why` says where it came from. */
  good: { ref: string; sha: string; why: string };
  /** The ref: the confirmed reproduction fails there. */
  bad: { ref: string; sha: string };
  /** First-parent commits after GOOD up to and including BAD, oldest first. */
  commits(signal?: AbortSignal): Promise<BisectCommit[]>;
  /** The project checked out at `sha` (cached per SHA), as every run sees it. Throws when it cannot be. */
  workspaceAt(sha: string, signal?: AbortSignal): Promise<Workspace>;
  /** Paths the commit changed against its first parent. */
  changedFiles(sha: string, signal?: AbortSignal): Promise<string[]>;
}
