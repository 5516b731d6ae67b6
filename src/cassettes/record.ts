import { mkdir, writeFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import type { StaticChecker } from '../agent/static-checker.js';
import type { RunRequestInput, ScriptExecutor } from '../exec/types.js';
import type { LlmClient } from '../llm/types.js';
import type { BuildContextFn, ProjectExportsFn, RunStages } from '../pipeline/ports.js';
import { readProjectExports } from '../workspace/project-exports.js';
import type { ReproOutcome } from '../pipeline/types.js';
import { createPatchedCopies, type PatchedCopies } from '../pipeline/stages/candidate-fix/scratch-copy.js';
import { cassetteLlmRequest, hashLlmRequest, hashRunRequest, hashText } from './hash.js';
import {
  Cassette,
  type CassetteCheck,
  type CassetteCopyOp,
  type CassetteLlmCall,
  type CassetteOutcome,
  type CassetteProject,
  type CassetteRun,
} from './schema.js';

/**
 * Records one session: wrap the run's model client and executor with {@link recordSession}'s `llm` and
 * `executor` (and `checker`, the static check), run the pipeline with them, then call `cassette(...)` with the outcome. Calls and runs are
 * kept in the order they finished (the pipeline makes one model call at a time and runs one script at a time).
 */
export interface SessionRecorder {
  llm: LlmClient;
  executor: ScriptExecutor;
  checker: StaticChecker;
  /**
   * Wraps the pipeline's stages to keep the project's workspace, the context builder's answer and the exports tier 0
   * read, when there is a checkout.
   */
  stages(inner: RunStages): RunStages;
  cassette(args: {
    caseId: string;
    issueText: string;
    settings: Record<string, unknown>;
    outcome: ReproOutcome;
    judge: CassetteOutcome['judge'];
    modelNote?: string;
    now?: Date;
  }): Cassette;
}

export function recordSession(llm: LlmClient, executor: ScriptExecutor, checker: StaticChecker): SessionRecorder {
  const calls: CassetteLlmCall[] = [];
  const runs: CassetteRun[] = [];
  const checks: CassetteCheck[] = [];
  let project: CassetteProject | undefined;
  const copyOps: CassetteCopyOp[] = [];
  const stages =
    (inner: RunStages): RunStages =>
    async (input, given, signal) => {
      // The candidate fix's reads of the checkout and its copies' outcomes, so a replay needs no checkout.
      const copies = given.patchedCopies ?? createPatchedCopies();
      const deps = {
        ...given,
        patchedCopies: {
          async read(workspace, paths) {
            const texts = await copies.read(workspace, paths);
            copyOps.push({ op: 'read', texts: Object.fromEntries(texts) });
            return texts;
          },
          async make(workspace, paths, patch) {
            const made = await copies.make(workspace, paths, patch);
            copyOps.push({ op: 'make', paths: [...paths], ok: made.ok, ...(made.ok ? {} : { why: made.why }) });
            return made;
          },
        } satisfies PatchedCopies,
      };
      if (!input.workspace || !input.repoDir) return inner(input, deps, signal);
      const seen: CassetteProject = { repoDir: input.repoDir, workspace: input.workspace, context: null };
      project = seen;
      const build: BuildContextFn | undefined = deps.buildContext
        ? async (req, sig) => {
            const ctx = await (deps.buildContext as BuildContextFn)(req, sig);
            seen.context = ctx;
            return ctx;
          }
        : undefined;
      const readExports = deps.projectExports ?? readProjectExports;
      const projectExports: ProjectExportsFn = async (workspace) => {
        const exports = await readExports(workspace);
        if (exports) seen.exports = exports;
        return exports;
      };
      return inner(input, { ...deps, ...(build ? { buildContext: build } : {}), projectExports }, signal);
    };
  const recordingChecker: StaticChecker = {
    async check(script, signal) {
      const report = await checker.check(script, signal);
      checks.push({ scriptHash: hashText(script), report });
      return report;
    },
  };
  const recordingLlm: LlmClient = {
    provider: llm.provider,
    model: llm.model,
    async complete(request, signal) {
      const entry = { requestHash: hashLlmRequest(request), request: cassetteLlmRequest(request) };
      try {
        const r = await llm.complete(request, signal);
        calls.push({
          ...entry,
          response: {
            text: r.text,
            model: r.model,
            stopReason: r.stopReason,
            usage: r.usage,
            ...(r.durationMs !== undefined ? { durationMs: r.durationMs } : {}),
          },
          error: null,
        });
        return r;
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        // A cancelled run is not a model answer: nothing to replay.
        if (e.name !== 'CancelledError' && e.name !== 'AbortError')
          calls.push({ ...entry, response: null, error: { name: e.name, message: e.message } });
        throw err;
      }
    },
  };
  const recordingExecutor: ScriptExecutor = {
    name: executor.name,
    async run(request: RunRequestInput, signal) {
      const result = await executor.run(request, signal);
      runs.push({
        requestHash: hashRunRequest(request),
        entry: request.entry,
        seed: request.seed ?? null,
        files: request.files.map((f) => ({ path: f.path, content: f.content })),
        result,
      });
      return result;
    },
    ...(executor.close ? { close: () => executor.close!() } : {}),
  };
  return {
    llm: recordingLlm,
    executor: recordingExecutor,
    checker: recordingChecker,
    stages,
    cassette: ({ caseId, issueText, settings, outcome, judge, modelNote, now }) =>
      Cassette.parse({
        version: 1,
        case: caseId,
        recordedAt: (now ?? new Date()).toISOString(),
        provider: llm.provider,
        model: llm.model,
        modelNote: modelNote ?? '',
        executor: executor.name,
        issueText,
        settings,
        candidateFix: settings.suggestFix === true,
        ...(copyOps.length ? { candidateCopies: copyOps } : {}),
        calls,
        runs,
        checks,
        outcome: cassetteOutcome(outcome, judge),
        ...(project ? { project } : {}),
      }),
  };
}

/** The parts of an outcome a replay is compared on. Pure. */
export function cassetteOutcome(o: ReproOutcome, judge: CassetteOutcome['judge']): CassetteOutcome {
  const last = o.attempts.at(-1);
  return {
    status: o.status,
    verdict: o.verdict ?? null,
    summary: o.summary,
    tier: o.status === 'reproduced' && last ? last.tier : null,
    attempts: o.attempts.map((a) => ({ n: a.n, tier: a.tier, outcome: a.outcome })),
    confirmation: o.confirmation ? `${o.confirmation.reproducedRuns}/${o.confirmation.totalRuns}` : null,
    usage: o.usage,
    durationMs: o.durationMs,
    judge,
  };
}

/** Writes `cassette` as DIR/<case>.json, or <case>.r2.json, .r3… when that case was recorded before. Returns the path. */
export async function writeCassette(dir: string, cassette: Cassette): Promise<string> {
  await mkdir(dir, { recursive: true });
  const base = cassette.case.replace(/[^A-Za-z0-9._-]/g, '_');
  for (let k = 1; ; k++) {
    const file = join(dir, k === 1 ? `${base}.json` : `${base}.r${k}.json`);
    const taken = await access(file).then(
      () => true,
      () => false,
    );
    if (!taken) {
      await writeFile(file, `${JSON.stringify(cassette, null, 1)}\n`, { flag: 'wx' });
      return file;
    }
  }
}
