import { resolve } from 'node:path';
import { stat } from 'node:fs/promises';
import type { StaticChecker } from '../agent/static-checker.js';
import type { CliIo, Command } from '../cli/io.js';
import { numberOption, parseCliArgs } from '../cli/parse-args.js';
import { terminalPublisher } from '../cli/terminal-publisher.js';
import { prepareOutDir } from '../cli/validate-input.js';
import { scriptPython } from '../config/env/exec-env.js';
import { CHECKOUT_CONFIG_PATH, readCheckoutRepoConfig } from '../config/read-checkout-repo-config.js';
import type { RepoConfig } from '../config/repo-config.js';
import { parseRequirement } from '../env/read/requirement-line.js';
import { readOperatorEnv, type OperatorEnv } from '../config/operator-env.js';
import { CancelledError, UsageError } from '../errors.js';
import type { ScriptExecutor } from '../exec/types.js';
import { checkPython } from '../host/check-python.js';
import { checkoutLocal, fileIssueSource } from '../intake/file-issue-source.js';
import { createLlmClient, type LlmProvider } from '../llm/index.js';
import type { LlmClient } from '../llm/types.js';
import { createLineLogger, type Logger } from '../log.js';
import type { ProjectCheckout, RunStages } from '../pipeline/ports.js';
import type { BuildContextFn } from '../pipeline/run-repro.js';
import { resolveRunSpec, type RunRequestInput, type RunSpec } from '../pipeline/run-spec.js';
import { fanOutPublisher } from '../publish/fan-out-publisher.js';
import { filesPublisher } from '../publish/files-publisher.js';
import { checkoutCacheDir } from '../workspace/checkout.js';
import { WorkspaceError } from '../workspace/errors.js';
import { SAFE_REF } from '../workspace/resolve-ref.js';
import { hostSecrets, readIssueFile } from './reproduce-files.js';

const HELP = `usage: repgen reproduce --issue ISSUE_MD [--repo DIR [--ref REF] [--verify-fix REF] [--bisect GOOD|--no-bisect]
                        [--no-suggest-fix]] [--out DIR] [--with REQ]... [--python 3.X] [--llm none|anthropic|openai] [--model M] [--max-attempts N] [--json]

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
  --bisect GOOD      after a confirmed reproduction, find the first bad commit between GOOD (where it worked)
                     and the issue's ref along first parents; without it, the version or commit the report says
                     worked, if the repository has it (REPGEN_BISECT_MAX_STEPS, REPGEN_BISECT_MAX_MINUTES)
  --no-bisect        never bisect
  --no-suggest-fix   no candidate fix: by default, after a reproduction against --repo, the model proposes a patch,
                     the reproduction runs against it in a scratch copy, and evidence.json's candidateFix says
                     whether it passes with it (fix-sensitive); with --verify-fix it is compared with the real fix
  --out DIR          where the files go (default ./repgen-out)
  --with REQ         a package of the env, PEP 508 ("torch==2.7.*"); repeatable. It beats every inferred version
                     (the report's, the project's, the commit's era, the base interpreter's) and repgen.yml's
  --python 3.X       the env's Python version (beats the report's and repgen.yml's environment.python)
                     With --repo, the checkout's .github/repgen.yml at the ref is read as the App reads it
  --llm PROVIDER     none | anthropic | openai (default: anthropic when ANTHROPIC_API_KEY is set,
                     openai when OPENAI_BASE_URL is set, else none)
  --model M          model name (default: the provider's; REPGEN_LLM_MODEL)
  --max-attempts N   tier-1 attempts in all (default REPGEN_MAX_ATTEMPTS, 15); here the operator's ceiling itself
  --json             print the outcome as one JSON object on stdout

Exit status: 0 reproduced (with --verify-fix: reproduced and fixed at REF); 1 any other outcome (not_reproduced, needs_info, exit_budget, exit_infra,
cancelled); 2 bad arguments or setup (unreadable issue, bad settings, missing API key).
`;

/** What the command needs from the world; tests inject fakes (executor, LLM over a local wire server). */
export interface ReproduceWiring {
  executor?: ScriptExecutor;
  llm?: LlmClient | null;
  buildContext?: BuildContextFn;
  checker?: StaticChecker;
  /** Stages 1-5 (tests that only check what reaches them). @defaultValue the pipeline's */
  stages?: RunStages;
  signal?: AbortSignal;
}

/**
 * The run spec of `repgen reproduce` and `repgen bench`: the same resolveRunSpec as the worker's and the Action's.
 * The person at the terminal is the operator, so `--max-attempts` sets the attempts' ceiling itself (as
 * REPGEN_MAX_ATTEMPTS would); `--llm` and `--model` are the request.
 */
export function cliRunSpec(
  operator: OperatorEnv,
  flags: { llm?: string; model?: string; maxAttempts?: number; with?: string[]; python?: string; suggestFix?: boolean },
  repoConfig: RepoConfig | null = null,
): RunSpec {
  if (flags.llm !== undefined && !['none', 'anthropic', 'openai'].includes(flags.llm))
    throw new UsageError(`--llm must be none, anthropic or openai, got '${flags.llm}'`);
  const request: RunRequestInput = {
    ...(flags.llm ? { provider: flags.llm as LlmProvider } : {}),
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.suggestFix === false ? { suggestFix: false } : {}),
  };
  const spec = resolveRunSpec(
    flags.maxAttempts !== undefined ? { ...operator, REPGEN_MAX_ATTEMPTS: flags.maxAttempts } : operator,
    repoConfig,
    request,
  );
  // An env failure's advice names what the person at the terminal can change: these flags, or the checkout's repgen.yml.
  const pins = flags.with ?? [];
  const userPins = pins.length || flags.python ? { packages: pins, python: flags.python ?? null, label: '--with' } : null;
  return { ...spec, env: { ...spec.env, userPins, advice: 'cli' } };
}

/** `--with` and `--python` as the env spec takes them: each a PEP 508 requirement, a Python like 3.11. */
function envFlags(withs: string[] | undefined, python: string | undefined): { with: string[]; python?: string } {
  for (const w of withs ?? [])
    if (!parseRequirement(w)) throw new UsageError(`--with must be a requirement such as "torch==2.7.*", got '${w.slice(0, 80)}'`);
  if (python !== undefined && !/^3\.\d{1,2}$/.test(python))
    throw new UsageError(`--python must be a Python version such as 3.11, got '${python.slice(0, 40)}'`);
  return { with: withs ?? [], ...(python ? { python } : {}) };
}

/** "anthropic claude-…", or "none (why); tier 0 only": what the run will use, said before it starts. */
export function llmLine(spec: RunSpec, llm: LlmClient | null): string {
  return llm ? `${llm.provider} ${llm.model}` : `none (${spec.llm.reason ?? 'no LLM: chosen with --llm none'}); tier 0 only`;
}

/** Progress already says what info lines would; keep stderr to one line per stage unless REPGEN_VERBOSE=1. */
export function quietInfo(log: Logger, env: NodeJS.ProcessEnv): Logger {
  return env.REPGEN_VERBOSE === '1' ? log : { ...log, info: () => undefined, debug: () => undefined };
}

export async function runReproduceCommand(argv: string[], io: CliIo, wiring: ReproduceWiring = {}): Promise<number> {
  const parsed = parseCliArgs(argv, {
    issue: { type: 'string' },
    repo: { type: 'string' },
    ref: { type: 'string' },
    'verify-fix': { type: 'string' },
    bisect: { type: 'string' },
    'no-bisect': { type: 'boolean' },
    'no-suggest-fix': { type: 'boolean' },
    out: { type: 'string' },
    llm: { type: 'string' },
    model: { type: 'string' },
    'max-attempts': { type: 'string' },
    with: { type: 'string', multiple: true },
    python: { type: 'string' },
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
  const refFlags = [
    ['--ref', v.ref],
    ['--verify-fix', v['verify-fix']],
    ['--bisect', v.bisect],
  ] as const;
  const withoutRepo = refFlags.find(([, value]) => value !== undefined);
  if (!repoDir && withoutRepo) throw new UsageError(`${withoutRepo[0]} needs --repo DIR (the repository to check out)`);
  if (v.bisect !== undefined && v['no-bisect']) throw new UsageError('--bisect and --no-bisect contradict each other');
  for (const [flag, value] of refFlags) {
    if (value !== undefined && !SAFE_REF.test(value))
      throw new UsageError(`${flag} must be a commit SHA, tag or branch name, got '${value.slice(0, 60)}'`);
  }
  const operator = readOperatorEnv(io.env);
  // Before any run (and before the checkout byte-compiles with it): a program that is not a Python 3 is a setup error.
  await checkPython(scriptPython(operator), { setting: 'REPGEN_PYTHON', path: io.env.PATH });
  const flags = {
    llm: v.llm,
    model: v.model,
    maxAttempts,
    ...envFlags(v.with, v.python),
    ...(v['no-suggest-fix'] ? { suggestFix: false } : {}),
  };
  // Checked before the checkout (a bad --llm fails in a second); made again below with the checkout's repgen.yml.
  let spec = cliRunSpec(operator, flags);
  // The refs first: a typo in --ref or --verify-fix fails in a second, not after the whole run.
  const checkout: ProjectCheckout | null = repoDir
    ? await usageOnWorkspaceError(() =>
        checkoutLocal(
          {
            repoDir: repoDir as string,
            ref: v.ref ?? null,
            verifyFix: v['verify-fix'] ?? null,
            bisect: v['no-bisect'] ? false : (v.bisect ?? null),
            cacheDir: checkoutCacheDir(io.env),
            python: scriptPython(operator),
          },
          issueText,
        ),
      )
    : null;
  if (checkout?.workspace?.project) io.stderr(`repgen reproduce: project ${checkout.workspace.project}\n`);
  // The checkout's .github/repgen.yml at the ref, as the App and the Action read the repository's.
  const config = checkout?.workspace ? readCheckoutRepoConfig(checkout.workspace.hostPath) : null;
  if (config && !config.ok)
    throw new UsageError(
      `${CHECKOUT_CONFIG_PATH} of the checkout is invalid: ${config.problems.map((p) => `${p.key} ${p.message}`).join('; ')}`,
    );
  if (config?.source === 'file') {
    spec = cliRunSpec(operator, flags, config.config);
    io.stderr(`repgen reproduce: settings from the checkout's ${CHECKOUT_CONFIG_PATH}\n`);
  }
  for (const note of spec.notes) io.stderr(`repgen reproduce: ${note}\n`);
  const log = quietInfo(
    createLineLogger((l) => io.stderr(l)),
    io.env,
  );
  // Made before the run: a missing API key is a one-line setup error, not a failure after the checkout.
  const llm = wiring.llm !== undefined ? wiring.llm : await createLlmClient(spec.llm, { log });
  io.stderr(`repgen reproduce: LLM: ${llmLine(spec, llm)}\n`);

  // Ctrl-C cancels the run cleanly (the executor kills the script's process tree).
  const controller = new AbortController();
  const onSigint = (): void => controller.abort();
  if (!wiring.signal) process.once('SIGINT', onSigint);
  wiring.signal?.addEventListener('abort', () => controller.abort(), { once: true });
  const files = filesPublisher(outDir, hostSecrets(io.env));
  const publisher = fanOutPublisher([terminalPublisher((line) => io.stderr(`${line}\n`), { name: 'repgen reproduce' }), files]);
  const source = fileIssueSource({ label: v.issue, text: issueText, project: checkout });
  let result;
  try {
    // The pipeline is most of this command's module graph: loaded here, after the first progress lines, which so come
    // before it has loaded rather than after (issue 42: the first line within 300 ms of the start).
    const { reproduceIssue } = await import('../pipeline/reproduce-issue.js');
    result = await reproduceIssue(
      spec,
      {
        source,
        publisher,
        log,
        ...(wiring.executor ? { executor: wiring.executor } : {}),
        llm,
        ...(wiring.buildContext ? { buildContext: wiring.buildContext } : {}),
        ...(wiring.checker ? { checker: wiring.checker } : {}),
        ...(wiring.stages ? { stages: wiring.stages } : {}),
      },
      controller.signal,
    );
  } catch (err) {
    if (err instanceof CancelledError) {
      await publisher.end({ kind: 'cancelled', by: wiring.signal ? 'the caller' : 'Ctrl-C' });
      return 1;
    }
    if (err instanceof WorkspaceError) throw new UsageError(err.message);
    throw err;
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
  const evidence = result.evidence;
  const written = files.written();
  const o = evidence.outcome;
  if (evidence.fixCheck) io.stderr(`repgen reproduce: fix check: ${evidence.fixCheck.verdict}: ${evidence.fixCheck.reason}\n`);
  if (v.json) {
    const line = {
      status: o.status,
      summary: o.summary,
      confirmation: o.confirmation,
      attempts: o.attempts.length,
      needsInfo: o.needsInfo,
    };
    io.stdout(`${JSON.stringify({ ...line, blockers: o.blockers ?? [], usage: o.usage, durationMs: o.durationMs, files: written })}\n`);
  } else {
    io.stdout(`${o.status}: ${o.summary}\n`);
    if (o.needsInfo.length) io.stdout(`the report lacks:\n${o.needsInfo.map((n) => `  - ${n}`).join('\n')}\n`);
    io.stdout(`wrote ${result.published.locations.join(', ')}\n`);
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
