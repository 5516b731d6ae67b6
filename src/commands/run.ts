import { basename, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import type { CliIo, Command } from '../cli/io.js';
import { parseCliArgs } from '../cli/parse-args.js';
import { checkInterpreter, decodeUtf8, timeoutSeconds } from '../cli/validate-input.js';
import { readLocalExecConfig } from '../exec/config.js';
import { checkPython } from '../host/check-python.js';
import { ReadBoundedError, readBounded } from '../host/read-bounded.js';
import { Isolation, InfraFailure } from '../exec/types.js';
import { ExceptionInfo, MatchResult, SymptomKind, matchRun, readReport, readRun, type ReportReading } from '../symptoms/index.js';

/** Settings of `repgen run`, read from the environment (the executor reads its own: REPGEN_PYTHON, REPGEN_SANDBOX…). */
export const RunCommandSettings = z.object({
  /** Largest issue file read with `--issue` (`REPGEN_MAX_ISSUE_BYTES`); GitHub itself caps bodies at 65 536 characters. @defaultValue 1000000 */
  maxIssueBytes: z.coerce.number().int().positive().default(1_000_000),
  /** Largest script file run (`REPGEN_MAX_SCRIPT_BYTES`). @defaultValue 1000000 */
  maxScriptBytes: z.coerce.number().int().positive().default(1_000_000),
  /**
   * Wall-clock limit when `--timeout` is not given, in milliseconds: the pipeline's own `REPGEN_RUN_TIMEOUT_MS`, so one
   * variable sets both. @defaultValue 120000
   */
  timeoutMs: z.coerce.number().int().positive().default(120_000),
});
export type RunCommandSettings = z.infer<typeof RunCommandSettings>;

/** Reads the command's settings; a bad value is a usage error naming the variable. */
export function readRunCommandSettings(env: NodeJS.ProcessEnv = process.env): RunCommandSettings {
  const parsed = RunCommandSettings.safeParse({
    maxIssueBytes: env.REPGEN_MAX_ISSUE_BYTES,
    maxScriptBytes: env.REPGEN_MAX_SCRIPT_BYTES,
    timeoutMs: env.REPGEN_RUN_TIMEOUT_MS,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = { maxIssueBytes: 'REPGEN_MAX_ISSUE_BYTES', maxScriptBytes: 'REPGEN_MAX_SCRIPT_BYTES', timeoutMs: 'REPGEN_RUN_TIMEOUT_MS' }[
      String(issue?.path[0]) as keyof RunCommandSettings
    ];
    throw new UsageError(`invalid ${name ?? 'setting'}: ${issue?.message ?? 'bad value'}`);
  }
  return parsed.data;
}

/** The one JSON object `repgen run --json` prints. */
export const RunCommandOutput = z.object({
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  timedOut: z.boolean(),
  oomKilled: z.boolean(),
  durationMs: z.number().min(0),
  exception: ExceptionInfo.pick({ type: true, message: true }).nullable(),
  symptoms: z.array(z.object({ kind: SymptomKind, evidence: z.string() })),
  warnings: z.array(z.string()),
  /** True when stdout or stderr passed the executor's cap (the rest was counted, not kept). */
  outputTruncated: z.boolean(),
  isolation: Isolation,
  /** What stopped or changed the run beyond its exit (a limit that fired: wall clock, CPU time, the work folder's disk). */
  notes: z.array(z.string()),
  infra: InfraFailure.nullable(),
  match: MatchResult.optional(),
});
export type RunCommandOutput = z.infer<typeof RunCommandOutput>;

const HELP = `usage: repgen run SCRIPT [--issue ISSUE_MD] [--timeout SEC] [--python PATH] [--network] [--json]

Runs a Python script in the local sandbox and reads its deep-learning symptoms (crash kind, NaN loss,
flat or diverging loss, stuck accuracy, timeout…). With --issue, judges the run against the bug report:
reproduced, partial or not_reproduced, with the reasons.

options:
  --issue FILE     markdown bug report to match the run against
  --timeout SEC    wall-clock limit; the whole process tree is killed after it (default 120, or REPGEN_RUN_TIMEOUT_MS / 1000)
  --python PATH    interpreter (default REPGEN_PYTHON, else /usr/bin/python3)
  --network        let the script reach the network (default: none, in a fresh network namespace)
  --json           print one JSON object instead of a summary

Exit status: 0 when the run was carried out, whatever the script did; 1 when the sandbox could not run
it; 2 on bad arguments, unreadable input or a missing interpreter.
`;

/** Reads a user-named text file, turning every way it can be wrong (a device, a FIFO, too big, binary) into a one-line UsageError. */
async function readTextFile(path: string, what: string, maxBytes: number, limitName: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readBounded(path, { maxBytes, what: `${what} '${path}'`, limitName, noFollow: true });
  } catch (err) {
    throw err instanceof ReadBoundedError ? new UsageError(err.message) : err;
  }
  return decodeUtf8(bytes, `${what} '${path}'`);
}

async function readIssue(path: string, maxBytes: number): Promise<ReportReading> {
  const text = await readTextFile(path, 'issue', maxBytes, 'REPGEN_MAX_ISSUE_BYTES');
  if (text.trim() === '') throw new UsageError(`issue '${path}' is empty: nothing to match the run against`);
  const report = readReport(text);
  if (report.codeBlocks.length === 0 && report.outputText.trim() === '' && report.tracebacks.length === 0) {
    throw new UsageError(`issue '${path}' has no code block and no error or output: nothing to match the run against`);
  }
  return report;
}

function summary(script: string, out: RunCommandOutput): string {
  const lines: string[] = [];
  const ended = out.timedOut ? 'timed out' : out.signal ? `killed by ${out.signal}` : `exit ${out.exitCode ?? '?'}`;
  lines.push(
    `ran ${script} in ${(out.durationMs / 1000).toFixed(1)} s (${ended}); network: ${out.isolation.network} (${out.isolation.sandbox})`,
  );
  for (const note of [...out.notes, ...out.isolation.notes]) lines.push(`  note: ${note}`);
  if (out.infra) lines.push(`the sandbox could not run the script (${out.infra.kind}): ${out.infra.message}`);
  if (out.outputTruncated) lines.push('  note: the output passed the cap; its beginning and end were kept, the middle left out');
  lines.push(out.exception ? `exception: ${out.exception.type}: ${out.exception.message.split('\n')[0] ?? ''}` : 'exception: none');
  if (out.symptoms.length === 0) lines.push('symptoms: none');
  else {
    lines.push('symptoms:');
    for (const s of out.symptoms) lines.push(`  - ${s.kind}: ${s.evidence.split('\n').at(-1) ?? ''}`);
  }
  if (out.match) {
    lines.push(`match: ${out.match.verdict} (score ${out.match.score.toFixed(2)})`);
    for (const r of out.match.reasons) lines.push(`  - ${r}`);
  }
  return `${lines.join('\n')}\n`;
}

async function run(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCliArgs(
    args,
    {
      issue: { type: 'string' },
      timeout: { type: 'string' },
      python: { type: 'string' },
      network: { type: 'boolean' },
      json: { type: 'boolean' },
    },
    { positionals: 1 },
  );
  if (!parsed) {
    io.stdout(HELP);
    return 0;
  }
  const { values, positionals } = parsed;
  const scriptArg = positionals[0];
  if (!scriptArg)
    throw new UsageError(
      'missing SCRIPT (usage: repgen run SCRIPT [--issue ISSUE_MD] [--timeout SEC] [--python PATH] [--network] [--json])',
    );
  const settings = readRunCommandSettings(io.env);
  const timeoutSec = timeoutSeconds(values.timeout) ?? settings.timeoutMs / 1000;
  const scriptPath = resolve(io.cwd, scriptArg);
  const script = await readTextFile(scriptPath, 'script', settings.maxScriptBytes, 'REPGEN_MAX_SCRIPT_BYTES');
  if (script.trim() === '') throw new UsageError(`script '${scriptPath}' is empty: nothing to run`);
  const report = values.issue !== undefined ? await readIssue(resolve(io.cwd, values.issue), settings.maxIssueBytes) : null;

  // One run: a fork server would only add its own imports (torch, numpy) to a script that may need neither.
  const config = { ...readLocalExecConfig(io.env), warmPool: 'off' as const };
  const { createLocalExecutor } = await import('../exec/local/executor.js');
  const executor = createLocalExecutor(config, { hostEnv: io.env });
  const python =
    values.python === undefined
      ? undefined
      : isAbsolute(values.python) || !values.python.includes('/')
        ? values.python
        : resolve(io.cwd, values.python);
  checkInterpreter(python);
  // Before the run: a program that is not a Python 3 (/bin/true) would "run" every script with exit 0.
  await checkPython(python ?? config.python, { setting: python === undefined ? 'REPGEN_PYTHON' : '--python', path: io.env.PATH });
  const entry = basename(scriptPath).endsWith('.py') ? basename(scriptPath) : 'main.py';

  // Ctrl-C stops the script's whole process tree through the executor, not just this process.
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once('SIGINT', onSigint);
  let result;
  try {
    result = await executor.run(
      {
        files: [{ path: entry, content: script }],
        entry,
        interpreter: python,
        network: values.network === true,
        limits: { timeoutMs: Math.round(timeoutSec * 1000) },
      },
      abort.signal,
    );
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
  const reading = readRun(result.output, result);
  const out: RunCommandOutput = {
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    oomKilled: result.oomKilled,
    durationMs: Math.round(result.durationMs),
    exception: reading.exception ? { type: reading.exception.type, message: reading.exception.message } : null,
    symptoms: reading.symptoms.map(({ kind, evidence }) => ({ kind, evidence })),
    warnings: reading.warnings,
    outputTruncated: result.stdoutTruncated || result.stderrTruncated,
    isolation: result.isolation,
    notes: result.notes ?? [],
    infra: result.infra,
  };
  if (report) out.match = matchRun(report, reading, { script, output: result.output });
  if (values.json) io.stdout(`${JSON.stringify(RunCommandOutput.parse(out))}\n`);
  else io.stdout(summary(scriptArg, out));
  return result.infra && result.infra.kind !== 'aborted' ? 1 : 0;
}

export const command: Command = {
  summary: 'run a script in the sandbox and read its DL symptoms (optionally against an issue)',
  help: HELP,
  run,
};
