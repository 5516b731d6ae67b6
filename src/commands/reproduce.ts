import { resolve } from 'node:path';
import { stat } from 'node:fs/promises';
import type { StaticChecker } from '../agent/static-checker.js';
import type { CliIo, Command } from '../cli/io.js';
import { numberOption, parseCliArgs } from '../cli/parse-args.js';
import { stagePrinter } from '../cli/progress.js';
import { prepareOutDir } from '../cli/validate-input.js';
import { CancelledError, UsageError } from '../errors.js';
import { createExecutor, readExecConfig } from '../exec/index.js';
import type { ScriptExecutor } from '../exec/types.js';
import { createLlmClient, llmSettingsFromEnv, type LlmProvider } from '../llm/index.js';
import type { LlmClient } from '../llm/types.js';
import { createLineLogger, type Logger } from '../log.js';
import { runReproWithEvidence, type BuildContextFn, type ReproEvidence, type ReproInput } from '../pipeline/run-repro.js';
import { reproSettingsFromEnv, type ReproSettings } from '../pipeline/settings.js';
import type { ProgressFn } from '../pipeline/types.js';
import { checkoutCacheDir } from '../workspace/checkout.js';
import { WorkspaceError } from '../workspace/errors.js';
import { checkFix, withRef } from '../pipeline/evidence.js';
import { checkoutRef, prepareWorkspace } from '../workspace/prepare-workspace.js';
import { SAFE_REF } from '../workspace/resolve-ref.js';
import { hostSecrets, readIssueFile, writeReproFiles } from './reproduce-files.js';

const HELP = `usage: repgen reproduce --issue ISSUE_MD [--repo DIR [--ref REF] [--verify-fix REF]] [--out DIR]
                        [--llm none|anthropic|openai] [--model M] [--max-attempts N] [--json]

Reproduces the deep-learning bug an issue reports: reads the report, plans, runs the report's own code
completed by recorded edits (tier 0, no model), then generates, checks, runs and refines scripts with a
model (tier 1), and confirms a reproduction with seeded re-runs. Writes OUT/repro.py, OUT/evidence.json
and OUT/comment.md. Progress goes to stderr: one line per stage with the time it took, an attempt's
line as it ends, and a 'still …' line when a stage has been quiet for 10 s.

options:
  --issue FILE       the issue as markdown (a first line '# title' is its title)
  --repo DIR         the repository the issue is about (a clone or a mirror): every script runs with it
                     read-only on PYTHONPATH, and the context stage indexes it
  --ref REF          the commit, tag or branch to reproduce at (default: a commit the report links, else
                     the tag of a version of the project it names, else the work tree as it is / the
                     default branch's head); checked out into REPGEN_CHECKOUT_CACHE_DIR
  --verify-fix REF   after a reproduction, re-run repro.py at REF (a fixing commit or branch) and write
                     fixCheck {ref, verdict: fixed | still_reproduces | inconclusive, runs} into evidence.json
  --out DIR          where the files go (default ./repgen-out)
  --llm PROVIDER     none | anthropic | openai (default: anthropic when ANTHROPIC_API_KEY is set,
                     openai when OPENAI_BASE_URL is set, else none)
  --model M          model name (default: the provider's; REPGEN_LLM_MODEL)
  --max-attempts N   tier-1 attempts in all (default 15; REPGEN_MAX_ATTEMPTS)
  --json             print the outcome as one JSON object on stdout

Exit status: 0 reproduced (with --verify-fix: reproduced and fixed at REF); 1 any other outcome (not_reproduced, needs_info, exit_budget, exit_infra,
cancelled); 2 bad arguments or setup (unreadable issue, bad settings, missing API key).
`;

/** What the command needs from the world; tests inject fakes (executor, LLM over a local wire server). */
export interface ReproduceWiring {
  executor?: ScriptExecutor;
  llm?: LlmClient | null;
  buildContext?: BuildContextFn;
  signal?: AbortSignal;
}

/** Builds the model client for `--llm`/`--model` and the environment; null with the reason when there is none. */
export async function wireLlm(
  io: CliIo,
  provider: string | undefined,
  model: string | undefined,
): Promise<{ llm: LlmClient | null; reason: string }> {
  if (provider !== undefined && !['none', 'anthropic', 'openai'].includes(provider))
    throw new UsageError(`--llm must be none, anthropic or openai, got '${provider}'`);
  const settings = llmSettingsFromEnv(io.env, { provider: provider as LlmProvider | undefined, model });
  const llm = await createLlmClient(settings, { log: createLineLogger((l) => io.stderr(l)) });
  return { llm, reason: llm ? `${llm.provider} ${llm.model}` : (settings.reason ?? 'no LLM configured') };
}

async function wireContext(io: CliIo): Promise<BuildContextFn> {
  const { buildContext } = await import('../context/index.js');
  const log = quietInfo(
    createLineLogger((l) => io.stderr(l)),
    io.env,
  );
  return (input) => buildContext(input, { env: io.env, log });
}

/** Progress already says what info lines would; keep stderr to one line per stage unless REPGEN_VERBOSE=1. */
function quietInfo(log: Logger, env: NodeJS.ProcessEnv): Logger {
  return env.REPGEN_VERBOSE === '1' ? log : { ...log, info: () => undefined, debug: () => undefined };
}

/** Runs one reproduction with everything wired; shared by `reproduce` and `bench`. */
export async function reproduceOnce(
  args: {
    issueText: string;
    repoDir?: string;
    workspace?: ReproInput['workspace'];
    settings: ReproSettings;
    llm: LlmClient | null;
    llmReason: string;
    executor: ScriptExecutor;
    buildContext?: BuildContextFn;
    quiet?: boolean;
    label?: string;
    checker?: StaticChecker;
    progress?: ProgressFn;
  },
  io: CliIo,
  signal?: AbortSignal,
): Promise<ReproEvidence> {
  const prefix = args.label ? `${args.label} ` : '';
  // Quiet (bench): the caller's sink sees the stages, nothing is printed per stage.
  const printer = args.quiet
    ? { progress: args.progress ?? (() => undefined), flush: () => undefined }
    : stagePrinter((line) => io.stderr(`${prefix}${line}\n`));
  try {
    return await runReproWithEvidence(
      { issue: { title: '', body: args.issueText }, repoDir: args.repoDir, workspace: args.workspace, settings: args.settings },
      {
        executor: args.executor,
        llm: args.llm,
        llmReason: args.llmReason,
        buildContext: args.buildContext,
        ...(args.checker ? { checker: args.checker } : {}),
        log: quietInfo(
          createLineLogger((l) => (args.quiet ? undefined : io.stderr(`${prefix}${l}`))),
          io.env,
        ),
        progress: printer.progress,
      },
      signal,
    );
  } finally {
    printer.flush();
  }
}

export async function runReproduceCommand(argv: string[], io: CliIo, wiring: ReproduceWiring = {}): Promise<number> {
  const parsed = parseCliArgs(argv, {
    issue: { type: 'string' },
    repo: { type: 'string' },
    ref: { type: 'string' },
    'verify-fix': { type: 'string' },
    out: { type: 'string' },
    llm: { type: 'string' },
    model: { type: 'string' },
    'max-attempts': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (!parsed) {
    io.stdout(HELP);
    return 0;
  }
  const v = parsed.values;
  if (!v.issue) throw new UsageError('--issue ISSUE_MD is required');
  const maxAttempts = numberOption('max-attempts', v['max-attempts']);
  const issueText = await readIssueFile(resolve(io.cwd, v.issue), v.issue);
  // Before any work: a results folder that cannot be written fails now, not after the pipeline.
  const outDir = prepareOutDir(resolve(io.cwd, v.out ?? 'repgen-out'));
  let repoDir: string | undefined;
  if (v.repo) {
    repoDir = resolve(io.cwd, v.repo);
    const st = await stat(repoDir).catch(() => null);
    if (!st?.isDirectory()) throw new UsageError(`--repo '${v.repo}' is not a directory`);
  }
  if (!repoDir && (v.ref !== undefined || v['verify-fix'] !== undefined))
    throw new UsageError(`${v.ref !== undefined ? '--ref' : '--verify-fix'} needs --repo DIR (the repository to check out)`);
  for (const [flag, value] of [
    ['--ref', v.ref],
    ['--verify-fix', v['verify-fix']],
  ] as const) {
    if (value !== undefined && !SAFE_REF.test(value))
      throw new UsageError(`${flag} must be a commit SHA, tag or branch name, got '${value.slice(0, 60)}'`);
  }
  const settings = reproSettingsFromEnv(io.env, { maxAttempts });
  const cacheDir = checkoutCacheDir(io.env);
  const python = io.env.REPGEN_PYTHON ?? '/usr/bin/python3';
  // The refs first: a typo in --ref or --verify-fix fails in a second, not after the whole run.
  const prepared = repoDir
    ? await usageOnWorkspaceError(() =>
        prepareWorkspace({ repoDir: repoDir as string, explicitRef: v.ref ?? null, issueText, cacheDir, python }),
      )
    : null;
  const fixAt =
    repoDir && v['verify-fix'] !== undefined
      ? await usageOnWorkspaceError(() =>
          checkoutRef({ repoDir: repoDir as string, repo: prepared?.ref.repo, ref: v['verify-fix'] as string, cacheDir, python }),
        )
      : null;
  if (prepared) io.stderr(`repgen reproduce: project ${prepared.workspace.project}\n`);
  const { llm, reason } =
    wiring.llm !== undefined
      ? { llm: wiring.llm, reason: wiring.llm ? `${wiring.llm.provider} ${wiring.llm.model}` : 'no LLM: chosen with --llm none' }
      : await wireLlm(io, v.llm, v.model);
  io.stderr(`repgen reproduce: LLM: ${llm ? `${llm.provider} ${llm.model}` : `none (${reason}); tier 0 only`}\n`);
  const executor = wiring.executor ?? (await createExecutor(readExecConfig(io.env)));
  const buildContext = repoDir ? (wiring.buildContext ?? (await wireContext(io))) : undefined;

  // Ctrl-C cancels the run cleanly (the executor kills the script's process tree).
  const controller = new AbortController();
  const onSigint = (): void => controller.abort();
  if (!wiring.signal) process.once('SIGINT', onSigint);
  wiring.signal?.addEventListener('abort', () => controller.abort(), { once: true });
  let evidence: ReproEvidence;
  try {
    evidence = await reproduceOnce(
      {
        issueText,
        repoDir: prepared?.workspace.hostPath ?? repoDir,
        workspace: prepared?.workspace,
        settings,
        llm,
        llmReason: reason,
        executor,
        buildContext,
      },
      io,
      controller.signal,
    );
    if (prepared) evidence = withRef(evidence, prepared.ref);
    if (fixAt && v['verify-fix'] !== undefined) {
      io.stderr(`repgen reproduce: checking the fix at ${v['verify-fix']} (${fixAt.sha.slice(0, 12)})\n`);
      evidence = await checkFix(evidence, { ref: v['verify-fix'], ...fixAt, settings, executor }, controller.signal);
      io.stderr(`repgen reproduce: fix check: ${evidence.fixCheck?.verdict}: ${evidence.fixCheck?.reason}\n`);
    }
  } catch (err) {
    if (err instanceof CancelledError) {
      io.stderr('repgen reproduce: cancelled; nothing written\n');
      return 1;
    }
    throw err;
  } finally {
    process.removeListener('SIGINT', onSigint);
    // Ours to close (the warm pool's sandboxes and their cgroups); a wired-in executor is the caller's.
    if (!wiring.executor) await executor.close?.().catch(() => undefined);
  }
  const files = await writeReproFiles(outDir, evidence, hostSecrets(io.env));
  const o = evidence.outcome;
  if (v.json) {
    const line = {
      status: o.status,
      summary: o.summary,
      confirmation: o.confirmation,
      attempts: o.attempts.length,
      needsInfo: o.needsInfo,
    };
    io.stdout(`${JSON.stringify({ ...line, blockers: o.blockers ?? [], usage: o.usage, durationMs: o.durationMs, files })}\n`);
  } else {
    io.stdout(`${o.status}: ${o.summary}\n`);
    if (o.needsInfo.length) io.stdout(`the report lacks:\n${o.needsInfo.map((n) => `  - ${n}`).join('\n')}\n`);
    io.stdout(`wrote ${[files.script, files.evidence, files.comment].filter(Boolean).join(', ')}\n`);
  }
  if (evidence.fixCheck) {
    io.stdout(`fix check at ${evidence.fixCheck.ref}: ${evidence.fixCheck.verdict} (${evidence.fixCheck.reason})\n`);
    return o.status === 'reproduced' && evidence.fixCheck.verdict === 'fixed' ? 0 : 1;
  }
  return o.status === 'reproduced' ? 0 : 1;
}

/** Checkout and ref failures are the user's to fix: one line, exit 2. */
async function usageOnWorkspaceError<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof WorkspaceError) throw new UsageError(err.message);
    throw err;
  }
}

export const command: Command = {
  summary: 'reproduce the bug an issue reports: repro.py, evidence.json, comment.md',
  help: HELP,
  run: (args, io) => runReproduceCommand(args, io),
};
