/**
 * The candidate fix's prompt (issue 41), rebuilt for every recorded case from the cassette's own inputs (no model, no
 * sandbox, no checkout: the real pipeline replayed, its first candidate request captured), against the one recorded:
 *
 *   npx tsx scripts/bench/candidate-prompt-size.ts [--mirrors /tmp/mirrors] [--dump DIR] [cassette folders…]
 *
 * Tokens: "before" is the recorded request's input tokens (the model's count); "after" is estimated at the same
 * characters per token as that request. With --mirrors, the real fix's functions (the enclosing def or class of each
 * line the fixing commit changes, read at the buggy commit, as compare-fix.ts reads them) are looked up in both
 * prompts: "in" means the prompt shows that function's def line under its file's path.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cassette, replayCassette, replaySettings } from '../../src/cassettes/index.js';
import type { LlmClient } from '../../src/llm/types.js';
import { silentLogger } from '../../src/log.js';
import { runReproWithEvidence } from '../../src/pipeline/run-repro.js';
import { ReproSettings } from '../../src/pipeline/settings.js';
import { changedLines, enclosingFunction } from '../../src/pipeline/stages/candidate-fix/compare-fix.js';

const MARK = 'Propose the smallest change';
const args = process.argv.slice(2);
const mi = args.indexOf('--mirrors');
const mirrors = mi >= 0 ? args.splice(mi, 2)[1]! : null;
const di = args.indexOf('--dump');
const dump = di >= 0 ? args.splice(di, 2)[1]! : null;
const dirs = args.length ? args : ['fixtures/cassettes/repo-f2p-tier0', 'fixtures/cassettes/repo-env'];
const CASES = ['/work/shared/bench/repo-f2p', 'fixtures/bench/repo-env'];

async function rebuilt(c: Cassette): Promise<string | null> {
  const replay = replayCassette(c);
  let captured: string | null = null;
  const llm: LlmClient = {
    provider: replay.llm.provider,
    model: replay.llm.model,
    complete(req, signal) {
      const text = req.messages[0]?.content ?? '';
      if (captured === null && text.includes(MARK)) captured = text;
      return replay.llm.complete(req, signal);
    },
  };
  const p = c.project;
  await runReproWithEvidence(
    {
      issue: { title: '', body: c.issueText },
      settings: ReproSettings.parse(replaySettings(c)),
      ...(p ? { repoDir: p.repoDir, workspace: p.workspace } : {}),
    },
    {
      ...(p?.context ? { buildContext: async () => p.context as NonNullable<typeof p.context> } : {}),
      ...(p ? { projectExports: async () => p.exports } : {}),
      executor: replay.executor,
      llm,
      llmReason: 'cassette',
      checker: replay.checker,
      patchedCopies: replay.copies,
      progress: () => undefined,
      log: silentLogger,
    },
  );
  return captured;
}

/** `path:def` of the real fix's functions, from the mirror's buggy and fixing commits; null without a mirror. */
function realFix(caseName: string): { file: string; name: string; def: string }[] | null {
  if (!mirrors) return null;
  const dir = CASES.map((d) => join(d, caseName)).find((d) => existsSync(join(d, 'case.json')));
  if (!dir) return null;
  const meta = JSON.parse(readFileSync(join(dir, 'case.json'), 'utf8')) as { repo: string; buggy_commit: string; fix_commit: string };
  const git = join(mirrors, meta.repo.replace('/', '+'), 'repo');
  if (!existsSync(git)) return null;
  const run = (...a: string[]): string => execFileSync('git', ['-C', git, ...a], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const files = run('diff', '--name-only', meta.buggy_commit, meta.fix_commit, '--', '*.py')
    .split('\n')
    .filter((f) => f && !/(^|\/)tests?\//.test(f) && !/(^|\/)(test_[^/]*|[^/]*_test)\.py$/.test(f));
  const out = new Map<string, { file: string; name: string; def: string }>();
  for (const file of files) {
    const show = (ref: string): string | null => {
      try {
        return run('show', `${ref}:${file}`);
      } catch {
        return null;
      }
    };
    const [a, b] = [show(meta.buggy_commit), show(meta.fix_commit)];
    if (a === null || b === null) continue;
    const lines = a.split('\n');
    for (const l of changedLines(a, b)) {
      const fn = enclosingFunction(a, l);
      const last = fn.split('.').at(-1)!;
      const def = lines.find((x) => new RegExp(`^\\s*(async\\s+def|def|class)\\s+${last}\\b`).test(x))?.trim() ?? '';
      out.set(`${file}:${fn}`, { file, name: fn, def });
    }
  }
  return [...out.values()];
}

function shows(prompt: string, f: { file: string; def: string }): boolean {
  return !!f.def && prompt.includes(f.file) && prompt.includes(f.def);
}

const rows: string[] = [];
const ratios: number[] = [];
const addedBefore: number[] = [];
const addedAfter: number[] = [];
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const dir of dirs) {
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const c = Cassette.parse(JSON.parse(readFileSync(join(dir, file), 'utf8')));
    const call = c.calls.find((x) => x.request.messages[0]?.content.includes(MARK));
    if (!call) continue;
    const before = call.request.messages[0]!.content;
    const beforeTokens = call.response?.usage.inputTokens ?? 0;
    const after = (await rebuilt(c)) ?? '';
    if (dump) writeFileSync(join(dump, `${c.case.replace(/\//g, '_')}.md`), after);
    const afterTokens = Math.round((after.length * beforeTokens) / before.length);
    ratios.push(after.length / before.length);
    // The step's share of the case: its calls' tokens over the rest of the case's. Rebuilt: every candidate call's input
    // scaled by this first call's rebuilt/recorded characters (a second call is the first plus feedback), outputs as
    // recorded (the same replies: a new prompt's answers need a new recording).
    const cand = c.calls.filter((x) => x.request.messages[0]?.content.includes(MARK) && x.response);
    const stepIn = cand.reduce((n, x) => n + x.response!.usage.inputTokens, 0);
    const stepOut = cand.reduce((n, x) => n + x.response!.usage.outputTokens, 0);
    const rest = c.outcome.usage.inputTokens + c.outcome.usage.outputTokens - stepIn - stepOut;
    const added = (i: number): string => `+${Math.round((100 * (i + stepOut)) / rest)} %`;
    addedBefore.push((stepIn + stepOut) / rest);
    addedAfter.push((stepIn * (after.length / before.length) + stepOut) / rest);
    const fix = realFix(c.case.replace(/^.*\//, ''));
    const fns = fix?.filter((f) => f.def) ?? [];
    const inPrompt = (p: string): string => (fix === null ? '—' : `${fns.filter((f) => shows(p, f)).length}/${fns.length}`);
    rows.push(
      `| ${c.case} | ${before.length.toLocaleString('en')} / ${after.length.toLocaleString('en')} | ` +
        `${beforeTokens.toLocaleString('en')} / ~${afterTokens.toLocaleString('en')} | ${Math.round((100 * after.length) / before.length)} % | ` +
        `${added(stepIn)} / ${added(Math.round(stepIn * (after.length / before.length)))} | ` +
        `${inPrompt(before)} / ${inPrompt(after)} | ${fns.map((f) => `${f.file.split('/').at(-1)}:${f.name}`).join(', ') || '—'} |`,
    );
  }
}
ratios.sort((a, b) => a - b);
process.stdout.write(
  [
    '| case | prompt chars: recorded / rebuilt | input tokens: recorded / estimated | rebuilt / recorded | step tokens over the rest of the case: recorded / estimated | real fix functions shown: recorded / rebuilt | real fix functions |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `median rebuilt / recorded: ${Math.round(100 * median(ratios))} % over ${ratios.length} cases; ` +
      `tokens the step adds to a case, median: recorded +${Math.round(100 * median(addedBefore))} %, ` +
      `estimated +${Math.round(100 * median(addedAfter))} %; within +40 %: ${addedBefore.filter((x) => x <= 0.4).length} / ` +
      `${addedAfter.filter((x) => x <= 0.4).length} of ${ratios.length}`,
    '',
  ].join('\n'),
);
