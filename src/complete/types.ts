// What tier 0's completion returns: the candidates to run, the edits made, and what cannot be known.

export interface CompletionInput {
  /** The report's Python blocks, in order. */
  blocks: string[];
  /** Module-level statements of the report's traceback (`<module>` frames), in order. */
  tracebackModuleLines?: string[];
  /** The report's prose and output: image sizes it states, whether it is about training. */
  reportText?: string;
  /** The project's own top-level packages (from the checkout): a name used as one of them is imported. */
  packages?: string[];
  /** Names the project's packages export, and the module to import each from (src/workspace/project-exports.ts). */
  exports?: Record<string, string>;
}

/** One runnable completion. */
export interface Candidate {
  script: string;
  /** What distinguishes it from the others ("harness: ResUnet, 300×300 input"). */
  label: string;
  /** The lines tier 0 synthesised (without the mark), for the comment. */
  added: string[];
}

/** A name tier 0 could not complete, and why: what the reporter would have to supply. */
export interface Missing {
  name: string;
  why: string;
  /** Used where it runs at import time (module level): the script cannot run without it. */
  blocking: boolean;
}

export interface Completion {
  /** The reporter's code after extraction and repair, before any synthesis. */
  code: string;
  /** Candidates in the order to try them; the first is the most faithful. Empty when nothing can run. */
  candidates: Candidate[];
  /** One sentence per change, in order (repairs, definitions, harness). */
  edits: string[];
  missing: Missing[];
  /** Time the analysis took (parse, inference, rendering), in milliseconds; the parser's one-time load per process is not counted. */
  analysisMs: number;
}

/** At most this many candidates: each one is a run. @defaultValue 8 */
export const MAX_CANDIDATES = 8;
