import { spawn } from 'node:child_process';
import { access, mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import type { CliIo, Command } from '../cli/io.js';
import { numberOption, parseCliArgs } from '../cli/parse-args.js';
import { benchProgress } from '../cli/progress.js';
import { prepareOutDir } from '../cli/validate-input.js';
import { CancelledError, UsageError } from '../errors.js';
import { readBounded } from '../host/read-bounded.js';
import { scriptPython } from '../config/env/exec-env.js';
import { readOperatorEnv } from '../config/operator-env.js';
import { createExecutor } from '../exec/index.js';
import { checkPython } from '../host/check-python.js';
import { checkoutCacheDir } from '../workspace/checkout.js';
import { f2pByHand, prepareF2p } from '../workspace/bench-case.js';
import { createPyflakesChecker } from '../agent/pyflakes-checker.js';
import { recordSession, writeCassette } from '../cassettes/record.js';
import { terminalPublisher } from '../cli/terminal-publisher.js';
import { fileIssueSource } from '../intake/file-issue-source.js';
import { createLlmClient } from '../llm/index.js';
import { createLineLogger, silentLogger } from '../log.js';
import type { ProjectCheckout } from '../pipeline/ports.js';
import { reproduceIssue } from '../pipeline/reproduce-issue.js';
import { runReproWithEvidence } from '../pipeline/run-repro.js';
import { fanOutPublisher } from '../publish/fan-out-publisher.js';
import { filesPublisher } from '../publish/files-publisher.js';
import { benchMarkdown, benchTotals, f2pCell, type BenchCase } from './bench-report.js';
import { hostSecrets, readIssueFile } from './reproduce-files.js';
import { cliRunSpec, type ReproduceWiring } from './reproduce.js';

const HELP = `usage: repgen bench DIR [--llm none|anthropic|openai] [--model M] [--out FILE] [--concurrency N]
                   [--mirrors DIR]

Runs 'repgen reproduce' on every case folder of DIR (a folder with issue.md and, optionally, repo/ and
case.json) and writes a markdown table (FILE) and JSON (FILE with .json): per case the status, attempts,
time, tokens, cost; totals by symptom kind. When a case has case.json and a judge.py is found (DIR/judge.py,
DIR/../judge.py, or REPGEN_BENCH_JUDGE), the judge's verdict on the final run's own output is recorded, and
any 'reproduced' it does not confirm is listed as a false positive. Per-case files go to FILE's folder,
under bench-cases/<case>/. Progress on stderr: a line as each case starts and ends (N/M done, which are
running), and every 10 s without one, each running case's time, stage and what it is doing. Cases start
longest first, by their times in FILE's JSON from the last run over DIR (cases without one first).

Fail-to-pass cases: a case.json with repo (owner/name), buggy_commit and fix_commit is reproduced against
the repository at buggy_commit (from a clone under --mirrors); a reproduction is then re-run at fix_commit
(fixCheck in its evidence.json), and the written repro.py is run by hand, unsandboxed, with
PYTHONPATH=<checkout> at both commits (REPGEN_PYTHON, default /usr/bin/python3). The f2p column says
whether it fails before the fix and passes after; a 'reproduced' that the hand run at buggy_commit does
not fail, or a 'fixed' that the hand run at fix_commit does not pass, is a false claim.

options:
  --llm PROVIDER     as for reproduce (default: from the environment, else none)
  --model M          model name
  --out FILE         markdown table (default ./bench-results.md; JSON next to it)
  --concurrency N    cases at a time (default 2: one case's runs seldom keep the cores busy, and a case
                     waiting on a model uses none)
  --mirrors DIR      clones of the cases' repositories: DIR/<owner>+<name>[/repo], DIR/<owner>/<name> or
                     DIR/<name> (a bare mirror or a work tree)

REPGEN_RECORD_CASSETTES=DIR records each case's model calls, script runs and outcome as DIR/<case>.json
(docs/cassettes.md), for replay in the tests.

Exit status: 0 when every case ran and there is no false positive or false claim; 1 when the judge
or a hand run refuted a claim; 2 bad arguments.
`;

const CaseJson = z
  .object({ symptom: z.string().optional(), expected_last_line: z.string().optional(), offline_feasible: z.boolean().optional() })
  .loose();

async function exists(p: string): Promise<boolean> {
  return access(p).then(
    () => true,
    () => false,
  );
}

async function findJudge(dir: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  for (const p of [env.REPGEN_BENCH_JUDGE, join(dir, 'judge.py'), join(dirname(dir), 'judge.py')]) if (p && (await exists(p))) return p;
  return null;
}

/** Runs judge.py CASE_DIR RUN_OUTPUT SCRIPT; it exits 0 when the run shows the recorded bug. */
function runJudge(
  python: string,
  judge: string,
  caseDir: string,
  outputFile: string,
  scriptFile: string,
): Promise<{ reproduced: boolean; line: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn(python, [judge, caseDir, outputFile, scriptFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('error', (err) => resolvePromise({ reproduced: false, line: `judge failed to start: ${err.message}` }));
    child.on('close', (code) => resolvePromise({ reproduced: code === 0, line: out.trim().split('\n').pop() ?? '' }));
  });
}

/** Cases at a time when --concurrency is not given. */
const DEFAULT_CONCURRENCY = 2;

export async function runBenchCommand(argv: string[], io: CliIo, wiring: ReproduceWiring = {}): Promise<number> {
  const parsed = parseCliArgs(
    argv,
    {
      llm: { type: 'string' },
      model: { type: 'string' },
      out: { type: 'string' },
      concurrency: { type: 'string' },
      mirrors: { type: 'string' },
    },
    { positionals: 1 },
  );
  if (!parsed) {
    io.stdout(HELP);
    return 0;
  }
  const dirArg = parsed.positionals[0];
  if (!dirArg) throw new UsageError('DIR is required: a folder of case folders, each with an issue.md');
  const dir = resolve(io.cwd, dirArg);
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory()) throw new UsageError(`'${dirArg}' is not a directory`);
  const concurrency = numberOption('concurrency', parsed.values.concurrency) ?? DEFAULT_CONCURRENCY;
  const outFile = resolve(io.cwd, parsed.values.out ?? 'bench-results.md');
  // Before any case runs: the results' folder must be writable, and FILE not a folder.
  prepareOutDir(dirname(outFile), '--out');
  if ((await stat(outFile).catch(() => null))?.isDirectory())
    throw new UsageError(`--out '${parsed.values.out}' is a folder; name the results file (e.g. results/bench.md)`);
  const caseIds: string[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory() && (await exists(join(dir, entry.name, 'issue.md')))) caseIds.push(entry.name);
  }
  if (!caseIds.length) throw new UsageError(`no case folders in '${dirArg}' (a case folder holds an issue.md)`);

  const mirrors = parsed.values.mirrors !== undefined ? resolve(io.cwd, parsed.values.mirrors) : null;
  if (mirrors && !(await stat(mirrors).catch(() => null))?.isDirectory())
    throw new UsageError(`--mirrors '${parsed.values.mirrors}' is not a directory`);
  const operator = readOperatorEnv(io.env);
  await checkPython(scriptPython(operator), { setting: 'REPGEN_PYTHON', path: io.env.PATH });
  const spec = cliRunSpec(operator, { llm: parsed.values.llm, model: parsed.values.model });
  const settings = spec.settings;
  // One model client and one executor for every case: the recorder wraps them per case, the warm pool is shared.
  const llm = wiring.llm !== undefined ? wiring.llm : await createLlmClient(spec.llm, { log: createLineLogger((l) => io.stderr(l)) });
  const reason = llm ? `${llm.provider} ${llm.model}` : (spec.llm.reason ?? 'no LLM configured');
  const executor = wiring.executor ?? (await createExecutor(spec.executor));
  const judge = await findJudge(dir, io.env);
  const cassetteDir = io.env.REPGEN_RECORD_CASSETTES ? resolve(io.cwd, io.env.REPGEN_RECORD_CASSETTES) : null;
  const judgePython = scriptPython(operator);
  const secrets = hostSecrets(io.env);
  io.stderr(
    `repgen bench: ${caseIds.length} cases, LLM ${llm ? reason : `none (${reason})`}, judge ${judge ?? 'not found'}, concurrency ${concurrency}\n`,
  );

  const progress = benchProgress((line) => io.stderr(`${line}\n`), caseIds.length);
  const results: BenchCase[] = new Array(caseIds.length);
  const jsonFile = outFile.replace(/\.md$/, '') + '.json';
  // Longest first, by the last run's times in the results file: with several cases at a time, a long case started
  // last would run on alone at the end. Cases without a time go first, in name order.
  const order = longestFirst(caseIds, await previousDurations(jsonFile, dir));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < order.length) {
      const i = order[next++] ?? 0;
      const id = caseIds[i] ?? '';
      const caseProgress = progress.caseStarted(id);
      const caseDir = join(dir, id);
      const caseJson = (await exists(join(caseDir, 'case.json')))
        ? (CaseJson.safeParse(JSON.parse(await readSmall(join(caseDir, 'case.json'), '{}'))).data ?? null)
        : null;
      const repo = (await exists(join(caseDir, 'repo'))) ? join(caseDir, 'repo') : undefined;
      const issueText = await readIssueFile(join(caseDir, 'issue.md'));
      const f2p = await prepareF2p(caseDir, mirrors, { issueText, cacheDir: checkoutCacheDir(io.env), python: judgePython });
      // REPGEN_RECORD_CASSETTES=DIR: the case's model calls and script runs are recorded (docs/cassettes.md).
      const recorder =
        cassetteDir && llm
          ? recordSession(llm, executor, createPyflakesChecker({ python: settings.staticPython, pylint: settings.pylint }))
          : null;
      const caseOut = join(dirname(outFile), 'bench-cases', id);
      const files = filesPublisher(caseOut, secrets);
      const project: ProjectCheckout | null =
        f2p.buggy && f2p.fixed
          ? {
              repoDir: f2p.buggy.workspace.hostPath,
              workspace: f2p.buggy.workspace,
              ...(f2p.buggy.ref.sha ? { sha: f2p.buggy.ref.sha } : {}),
              ref: f2p.buggy.ref,
              fix: { ref: f2p.fixRef, sha: f2p.fixed.sha, workspace: f2p.fixed.workspace },
            }
          : repo
            ? { repoDir: repo }
            : null;
      const { evidence } = await reproduceIssue(
        spec,
        {
          source: fileIssueSource({ label: id, text: issueText, project }),
          publisher: fanOutPublisher([terminalPublisher(() => undefined, { quiet: true, sink: caseProgress }), files]),
          executor: recorder?.executor ?? executor,
          llm: recorder?.llm ?? llm,
          log: silentLogger,
          ...(wiring.buildContext ? { buildContext: wiring.buildContext } : {}),
          ...(recorder ? { checker: recorder.checker } : wiring.checker ? { checker: wiring.checker } : {}),
          ...(recorder
            ? { stages: recorder.stages(wiring.stages ?? runReproWithEvidence) }
            : wiring.stages
              ? { stages: wiring.stages }
              : {}),
        },
        wiring.signal ?? new AbortController().signal,
      );
      let f2pResult: BenchCase['f2p'] = null;
      if (f2p.buggy && f2p.fixed) {
        f2pResult = await f2pByHand(evidence, f2p.buggy.workspace.hostPath, f2p.fixed.workspace.hostPath, {
          python: judgePython,
          timeoutMs: settings.runTimeoutMs,
        });
      }
      const o = evidence.outcome;
      const written = files.written();
      let judgeLine: string | null = null;
      let judgeReproduced: boolean | null = null;
      // A fail-to-pass case is judged by running its repro by hand; judge.py needs the recorded last line.
      if (judge && caseJson && evidence.finalRun && written?.script && caseJson.expected_last_line !== undefined) {
        const outputFile = join(caseOut, 'final-run-output.txt');
        await writeFile(outputFile, evidence.finalRun.output);
        const verdict = await runJudge(judgePython, judge, caseDir, outputFile, written.script);
        judgeLine = verdict.line;
        judgeReproduced = verdict.reproduced;
      } else if (judge && caseJson && caseJson.expected_last_line !== undefined) judgeLine = 'no run to judge';
      if (recorder && cassetteDir) {
        const judged = judgeReproduced === null ? null : { reproduced: judgeReproduced, line: judgeLine ?? '' };
        const cassette = recorder.cassette({
          caseId: id,
          issueText,
          settings,
          outcome: o,
          judge: judged,
          modelNote: io.env.REPGEN_CASSETTE_NOTE,
        });
        io.stderr(`repgen bench: ${id}: cassette ${await writeCassette(cassetteDir, cassette)}\n`);
      }
      const kind = o.expected[0]?.kind ?? 'none';
      results[i] = {
        id,
        status: o.status,
        summary: o.summary,
        symptom: caseJson?.symptom ?? o.expected[0]?.category ?? 'unknown',
        kind,
        attempts: o.attempts.length,
        durationMs: o.durationMs,
        tokens: o.usage.inputTokens + o.usage.outputTokens,
        costUsd: o.usage.costUsd,
        confirmation: o.confirmation ? `${o.confirmation.reproducedRuns}/${o.confirmation.totalRuns}` : '—',
        offlineFeasible: caseJson?.offline_feasible ?? null,
        judge: judgeLine,
        judgeReproduced,
        blockers: o.blockers ?? [],
        f2p: f2pResult,
        candidate:
          evidence.candidateFix && evidence.candidateFix.answer !== 'not_tried'
            ? {
                result: evidence.candidateFix.result ?? 'not_tried',
                sameFiles: evidence.candidateFix.comparison ? evidence.candidateFix.comparison.sameFiles.length > 0 : null,
                sameFunctions: evidence.candidateFix.comparison ? evidence.candidateFix.comparison.sameFunctions.length > 0 : null,
                tokens: evidence.candidateFix.usage.inputTokens + evidence.candidateFix.usage.outputTokens,
                durationMs: evidence.candidateFix.durationMs,
              }
            : null,
      };
      progress.caseFinished(id, `${o.status}${judgeLine ? `; judge: ${judgeLine}` : ''}${f2pResult ? `; f2p: ${f2pCell(f2pResult)}` : ''}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, caseIds.length) }, () => worker()));
  } catch (err) {
    if (err instanceof CancelledError) {
      io.stderr('repgen bench: cancelled\n');
      return 1;
    }
    throw err;
  } finally {
    progress.stop();
    // Ours to close (the warm pool's sandboxes and their cgroups); a wired-in executor is the caller's.
    if (!wiring.executor) await executor.close?.().catch(() => undefined);
  }
  const md = benchMarkdown(results, { dir: dirArg, llm: llm ? reason : 'none' });
  await mkdir(dirname(outFile), { recursive: true });
  await writeFile(outFile, md);
  await writeFile(
    jsonFile,
    `${JSON.stringify({ dir, llm: llm ? reason : 'none', judge, concurrency, cases: results, totals: benchTotals(results) }, null, 2)}\n`,
  );
  io.stdout(md);
  io.stderr(`repgen bench: wrote ${outFile} and ${jsonFile}\n`);
  const totals = benchTotals(results);
  return totals.falsePositives.length || totals.falseClaims.length ? 1 : 0;
}

export const command: Command = {
  summary: 'run reproduce over a folder of cases; table + JSON, judge-checked',
  help: HELP,
  run: (args, io) => runBenchCommand(args, io),
};

/** A small file of a case folder as text, bounded (a FIFO or a device there never blocks or fills memory); `fallback` when unreadable. */
async function readSmall<T extends string | null>(path: string, fallback: T, maxBytes = 1_000_000): Promise<string | T> {
  return (await readBounded(path, { maxBytes, noFollow: true }).catch(() => null))?.toString('utf8') ?? fallback;
}

/** Each case's time in an earlier results file of the same folder; empty when there is none or it cannot be read. */
async function previousDurations(jsonFile: string, dir: string): Promise<Map<string, number>> {
  const Previous = z.object({
    dir: z.string(),
    cases: z.array(z.object({ id: z.string(), durationMs: z.number().min(0) }).loose()),
  });
  const raw = await readSmall(jsonFile, null, 50_000_000);
  if (raw === null) return new Map();
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return new Map();
  }
  const prev = Previous.safeParse(parsed);
  if (!prev.success || prev.data.dir !== dir) return new Map();
  return new Map(prev.data.cases.map((c) => [c.id, c.durationMs]));
}

/** Indexes into `ids`, the ones with no earlier time first (in order), then the rest from the longest earlier time down. */
export function longestFirst(ids: string[], durations: ReadonlyMap<string, number>): number[] {
  const index = ids.map((_, i) => i);
  const unknown = index.filter((i) => !durations.has(ids[i] ?? ''));
  const known = index.filter((i) => durations.has(ids[i] ?? ''));
  known.sort((a, b) => (durations.get(ids[b] ?? '') ?? 0) - (durations.get(ids[a] ?? '') ?? 0) || a - b);
  return [...unknown, ...known];
}
