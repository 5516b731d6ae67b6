import { resolve } from 'node:path';
import { numberOption, parseCliArgs } from '../cli/parse-args.js';
import type { Command } from '../cli/io.js';
import { UsageError } from '../errors.js';
import { createLineLogger } from '../log.js';
import type { ContextResult } from '../context/types.js';
import { readIssueFile } from './reproduce-files.js';

const HELP = `usage: repgen context --repo DIR --issue ISSUE_MD [--top N] [--budget TOKENS] [--json] [--text]

Builds the ranked context bundles for a bug report over a repository checkout: the code most likely involved
in the bug, what it needs to run, and the training loops, each bundle within a token budget.

options:
  --repo DIR        the repository checkout (required)
  --issue FILE      the bug report, markdown; a first line "# Title" is the title (required)
  --top N           bundles to print (default 5)
  --budget TOKENS   tokens per bundle (default 6000)
  --json            one JSON object: bundles, trainingLoops, semantic, timings
  --text            also print each chunk's code (human output only)
  --verbose         log what the builder does to stderr

settings (environment): REPGEN_EMBED_MODEL, REPGEN_RERANK_MODEL, REPGEN_MODEL_DIR, REPGEN_LEXICAL,
REPGEN_CONTEXT_CACHE_DIR, REPGEN_CONTEXT_CACHE_ENTRIES, REPGEN_CONTEXT_MAX_FILE_BYTES,
REPGEN_CONTEXT_DEP_DEPTH, REPGEN_CONTEXT_WORKERS, REPGEN_EMBED_BATCH, REPGEN_EMBED_MAX_TOKENS (see the README).
`;

/** Splits a markdown issue into title and body: a leading "# …" line is the title. */
export function readIssueMarkdown(text: string): { title?: string; body: string } {
  const m = /^\s*#\s+(.+)\n/.exec(text);
  return m ? { title: m[1]!.trim(), body: text.slice(m[0].length) } : { body: text };
}

function human(result: ContextResult, withText: boolean): string {
  const lines: string[] = [];
  lines.push(`semantic: ${result.semantic}   index: ${result.cache ?? 'built'}   total ${result.timings.totalMs ?? 0} ms`);
  for (const bundle of result.bundles) {
    lines.push('', `bundle ${bundle.rank}  (${bundle.tokens} tokens)`);
    for (const c of bundle.chunks) {
      lines.push(`  ${c.path}:${c.startLine}-${c.endLine}  ${c.kind}${c.symbol ? ` ${c.symbol}` : ''}  score ${c.score}`);
      lines.push(`      ${c.reasons.join('; ')}`);
      if (withText) lines.push(...c.text.split('\n').map((l) => `      | ${l}`));
    }
  }
  lines.push('', result.trainingLoops.length ? 'training loops:' : 'training loops: none found');
  for (const l of result.trainingLoops.slice(0, 10)) {
    lines.push(`  ${l.path}:${l.startLine}-${l.endLine}  ${l.framework}${l.phase ? ` ${l.phase}` : ''}${l.symbol ? `  ${l.symbol}` : ''}`);
  }
  if (result.trainingLoops.length > 10) lines.push(`  … ${result.trainingLoops.length - 10} more (--json lists all)`);
  return `${lines.join('\n')}\n`;
}

export const command: Command = {
  summary: 'rank the code of a repository for a bug report (context bundles)',
  help: HELP,
  async run(args, io) {
    const parsed = parseCliArgs(args, {
      repo: { type: 'string' },
      issue: { type: 'string' },
      top: { type: 'string' },
      budget: { type: 'string' },
      json: { type: 'boolean' },
      text: { type: 'boolean' },
      verbose: { type: 'boolean' },
    });
    if (!parsed) {
      io.stdout(HELP);
      return 0;
    }
    const { values } = parsed;
    if (!values.repo) throw new UsageError('--repo DIR is required');
    if (!values.issue) throw new UsageError('--issue ISSUE_MD is required');
    const top = numberOption('top', values.top);
    const tokenBudget = numberOption('budget', values.budget, { min: 200 });
    const issuePath = resolve(io.cwd, values.issue);
    const report = readIssueMarkdown(await readIssueFile(issuePath, values.issue));
    if (!report.body.trim() && !report.title) throw new UsageError(`issue file ${values.issue} is empty`);
    const { buildContext } = await import('../context/index.js');
    const log = createLineLogger(io.stderr, { verbose: !!values.verbose });
    const result = await buildContext(
      { repoDir: resolve(io.cwd, values.repo), report, ...(top ? { top } : {}), ...(tokenBudget ? { tokenBudget } : {}) },
      { log: values.verbose ? log : undefined, env: io.env },
    );
    if (values.json) {
      const json = {
        bundles: result.bundles.map((b) => ({
          rank: b.rank,
          chunks: b.chunks.map(({ path, startLine, endLine, kind, symbol, score, reasons, text }) => ({
            path,
            startLine,
            endLine,
            kind,
            ...(symbol ? { symbol } : {}),
            score,
            reasons,
            text,
          })),
          tokens: b.tokens,
        })),
        trainingLoops: result.trainingLoops,
        semantic: result.semantic,
        timings: result.timings,
        cache: result.cache,
      };
      io.stdout(`${JSON.stringify(json, null, 2)}\n`);
    } else io.stdout(human(result, !!values.text));
    return 0;
  },
};
