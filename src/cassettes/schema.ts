import { z } from 'zod';
import { ContextResult } from '../context/types.js';
import { RunResult, Workspace } from '../exec/types.js';
import { LlmUsage } from '../llm/types.js';

/**
 * A cassette: one real-model session of `repgen reproduce` (one bench case), recorded at the two ports the
 * run talks through — every request and reply on the LLM port, and every script run on the executor port
 * with its result — plus what the run concluded. Replayed by test/cassettes/ through the real pipeline
 * (docs/cassettes.md). Our own file format, so strict.
 */

/** The request as the pipeline sent it (the LlmRequest fields), and its hash for drift checks. */
export const CassetteLlmRequest = z
  .object({
    system: z.string().optional(),
    messages: z.array(z.object({ role: z.enum(['user', 'assistant']), content: z.string() }).strict()),
    maxTokens: z.int().positive().optional(),
    temperature: z.number().optional(),
    stop: z.array(z.string()).optional(),
  })
  .strict();
export type CassetteLlmRequest = z.infer<typeof CassetteLlmRequest>;

/** One model call: the reply, or the typed error the adapter threw. */
export const CassetteLlmCall = z
  .object({
    /** sha256 of the canonical request (see hashLlmRequest). */
    requestHash: z.string().regex(/^[0-9a-f]{64}$/),
    request: CassetteLlmRequest,
    response: z
      .object({
        text: z.string(),
        model: z.string(),
        stopReason: z.string().nullable(),
        usage: LlmUsage,
        durationMs: z.number().min(0).optional(),
      })
      .strict()
      .nullable(),
    /** The error the call threw (its class name and message), when it did not answer. */
    error: z.object({ name: z.string(), message: z.string() }).strict().nullable(),
  })
  .strict()
  .refine((c) => (c.response === null) !== (c.error === null), 'a call has either a response or an error');
export type CassetteLlmCall = z.infer<typeof CassetteLlmCall>;

/** One script run: what was run (the files, entry, seed) and what happened. */
export const CassetteRun = z
  .object({
    /** sha256 of the run's files, entry, args and seed (see hashRunRequest). */
    requestHash: z.string().regex(/^[0-9a-f]{64}$/),
    entry: z.string(),
    seed: z.number().int().nullable(),
    files: z.array(z.object({ path: z.string(), content: z.string() }).strict()),
    result: RunResult,
  })
  .strict();
export type CassetteRun = z.infer<typeof CassetteRun>;

/** One static check (pyflakes, pylint -E) of a script: the script's hash and what the checker reported. */
export const CassetteCheck = z
  .object({
    scriptHash: z.string().regex(/^[0-9a-f]{64}$/),
    report: z
      .object({
        findings: z.array(
          z
            .object({
              line: z.number().int(),
              message: z.string(),
              severity: z.enum(['error', 'warning']),
              tool: z.enum(['pyflakes', 'pylint']),
            })
            .strict(),
        ),
        undefinedNames: z.array(z.string()),
        tools: z.array(z.string()),
      })
      .strict(),
  })
  .strict();
export type CassetteCheck = z.infer<typeof CassetteCheck>;

/** What the recorded run concluded (the fields of ReproOutcome a replay is compared on) and the judge's word. */
export const CassetteOutcome = z
  .object({
    status: z.string(),
    verdict: z.string().nullable(),
    summary: z.string(),
    tier: z.union([z.literal(0), z.literal(1)]).nullable(),
    attempts: z.array(z.object({ n: z.int(), tier: z.union([z.literal(0), z.literal(1)]), outcome: z.string() }).strict()),
    confirmation: z.string().nullable(),
    usage: LlmUsage,
    durationMs: z.number().min(0),
    /** judge.py's verdict on the final run's output (bench cases with a judge); null when not judged. */
    judge: z.object({ reproduced: z.boolean(), line: z.string() }).strict().nullable(),
  })
  .strict();
export type CassetteOutcome = z.infer<typeof CassetteOutcome>;

/**
 * A session run against a project's checkout (a fail-to-pass case): the workspace as the pipeline got it and what the
 * context builder returned, so a replay needs neither the checkout nor the index.
 */
export const CassetteProject = z
  .object({
    repoDir: z.string(),
    workspace: Workspace.extend({ project: z.string().optional(), packages: z.array(z.string()).optional() }).strict(),
    context: ContextResult.nullable(),
    /**
     * What tier 0 read as the checkout's exports (name → module), when it completed the report's code against the
     * project; absent in cassettes recorded before it was kept, or when tier 0 never asked.
     */
    exports: z.record(z.string(), z.string()).optional(),
  })
  .strict();
export type CassetteProject = z.infer<typeof CassetteProject>;

/** One call of the candidate fix's PatchedCopies port: the files it read, or a copy it made (applied or why not). */
export const CassetteCopyOp = z.discriminatedUnion('op', [
  z.object({ op: z.literal('read'), texts: z.record(z.string(), z.string().nullable()) }).strict(),
  z.object({ op: z.literal('make'), paths: z.array(z.string()), ok: z.boolean(), why: z.string().optional() }).strict(),
]);
export type CassetteCopyOp = z.infer<typeof CassetteCopyOp>;

export const Cassette = z
  .object({
    version: z.literal(1),
    /** The case's folder name (dl-bugs/so-039) and, for a second recording of a case, which one. */
    case: z.string().min(1),
    recordedAt: z.string(),
    /** Who answered: provider and model name as the client reported them, and a free-text note. */
    provider: z.enum(['anthropic', 'openai']),
    model: z.string(),
    modelNote: z.string().default(''),
    /** The executor's name (it appears in the prompts' environment section). */
    executor: z.string().min(1),
    /** The issue text the run was given. */
    issueText: z.string(),
    /** The reproduction settings the run used (ReproSettings), so a replay runs under the same budget. */
    settings: z.record(z.string(), z.unknown()),
    /**
     * Whether the candidate-fix step (issue 41) ran after the reproduction: its model call and runs are then in the
     * recording. Absent (every cassette recorded before the step): off, and a replay turns it off.
     */
    candidateFix: z.boolean().optional(),
    /**
     * What the candidate-fix step read from the checkout (the prompt's source files) and whether each patch applied to
     * its scratch copy, in order: a replay serves them without the checkout. Absent: the step did not run.
     */
    candidateCopies: z.array(CassetteCopyOp).optional(),
    calls: z.array(CassetteLlmCall),
    runs: z.array(CassetteRun),
    checks: z.array(CassetteCheck),
    outcome: CassetteOutcome,
    /** Only for a session against a project's checkout. */
    project: CassetteProject.optional(),
  })
  .strict();
export type Cassette = z.infer<typeof Cassette>;
