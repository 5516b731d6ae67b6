/**
 * Bisect: the first bad commit RepGen finds on fail-to-pass cases (a real issue whose fix commit is known), checked
 * the way a maintainer checks it, with steps and wall time against log2 of the range (issue 30).
 *
 *   npx tsx scripts/bench/bisect-f2p.ts DIR --mirrors /work/.mirror [--good CASE=REF]… [--repro CASE=FILE]… [--json FILE]
 *
 * DIR is a folder of case folders (../shared/bench/repo-f2p) or one case folder: issue.md and a case.json with
 * repo, buggy_commit, fix_commit. A case is bisected when GOOD is known: `--good CASE=REF`, else case.json's
 * `bisect_good`, else a version the report says worked (then no --bisect is passed: the pipeline finds it itself).
 * Each case runs `node bin/repgen.js reproduce --issue ISSUE --repo MIRROR --ref BUGGY [--bisect GOOD] --llm none`
 * (the exact command is printed); with `--repro CASE=FILE` that script is bisected directly instead (for a report
 * RepGen does not reproduce without a model): it must show the reported bug at BUGGY first.
 * The check by hand, from first-parent diffs: does the first bad commit change a file the fix changed, and does it
 * add a line the fix removes (src/bisect/fix-overlap.ts)? Prints a Markdown table; --json writes the rows.
 * Ceilings: REPGEN_BISECT_MAX_STEPS / REPGEN_BISECT_MAX_MINUTES as in the pipeline.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { commitFixOverlap } from '../../src/bisect/fix-overlap.js';
import { localBisectSource } from '../../src/bisect/local-bisect-source.js';
import { runBisect } from '../../src/bisect/run-bisect.js';
import type { BisectResult } from '../../src/bisect/types.js';
import { createExecutor, readLocalExecConfig } from '../../src/exec/index.js';
import { importedModules } from '../../src/plan/index.js';
import { readReport } from '../../src/symptoms/read-report.js';
import { readF2pCase } from '../../src/workspace/bench-f2p.js';
import { checkoutCacheDir, findMirror, gitRefLookup } from '../../src/workspace/checkout.js';
import { workedVersions } from '../../src/workspace/resolve-ref.js';
import { verifyFix } from '../../src/workspace/verify-fix.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    mirrors: { type: 'string', default: '/work/.mirror' },
    good: { type: 'string', multiple: true, default: [] },
    repro: { type: 'string', multiple: true, default: [] },
    json: { type: 'string' },
  },
});
const pairs = (list: string[]): Map<string, string> => new Map(list.map((s) => [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)]));
const goods = pairs(values.good);
const repros = pairs(values.repro);
const dir = resolve(positionals[0] ?? '../shared/bench/repo-f2p');
const caseDirs = existsSync(join(dir, 'case.json'))
  ? [dir]
  : readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'case.json')))
      .map((d) => join(dir, d.name))
      .sort();
const repoRoot = resolve(import.meta.dirname, '../..');
const env = process.env;
const maxSteps = Number(env.REPGEN_BISECT_MAX_STEPS ?? 20);
const maxMs = Number(env.REPGEN_BISECT_MAX_MINUTES ?? 30) * 60_000;
const settings = { runTimeoutMs: Number(env.REPGEN_RUN_TIMEOUT_MS ?? 120_000), runMemoryMb: 4096 };

interface Row {
  case: string;
  good: string;
  command: string;
  status: string;
  range: number;
  log2: number;
  runs: number;
  skipped: string[];
  bisectS: number;
  wallS: number;
  firstBad: string;
  sameFiles: string[];
  fixedLinesAdded: string[];
  /** Every run of the bisection, GOOD first: what a maintainer checks the verdicts against. */
  steps: Array<{ sha: string; subject: string; verdict: string; why: string; seconds: number }>;
}

const rows: Row[] = [];
for (const caseDir of caseDirs) {
  const name = basename(caseDir);
  const c = readF2pCase(JSON.parse(readFileSync(join(caseDir, 'case.json'), 'utf8')));
  if (!c) continue;
  const mirror = await findMirror(resolve(values.mirrors), c.repo);
  if (!mirror) throw new Error(`no clone of ${c.repo} under ${values.mirrors}`);
  const issuePath = join(caseDir, 'issue.md');
  const issueText = readFileSync(issuePath, 'utf8');
  const named = workedVersions(issueText, [c.repo.split('/')[1]!, ...(typeof c.package === 'string' ? [c.package] : [])]);
  const good = goods.get(name) ?? (typeof c.bisect_good === 'string' ? c.bisect_good : null);
  if (!good && !named.length) {
    console.error(`${name}: no GOOD (the report names no working version; pass --good ${name}=REF)`);
    continue;
  }
  const repro = repros.get(name);
  const t0 = Date.now();
  let bisect: BisectResult | null;
  let status: string;
  let command: string;
  if (repro) {
    command = `npx tsx scripts/bench/bisect-f2p.ts ${caseDir} --good ${name}=${good} --repro ${name}=${repro}`;
    ({ bisect, status } = await bisectScript(readFileSync(repro, 'utf8'), issueText, mirror, c.repo, c.buggy_commit, good ?? ''));
  } else {
    const out = mkdtempSync(join(tmpdir(), `repgen-bisect-${name}-`));
    const args = ['bin/repgen.js', 'reproduce', '--issue', issuePath, '--repo', mirror, '--ref', c.buggy_commit];
    if (good) args.push('--bisect', good);
    args.push('--llm', 'none', '--out', out);
    command = `node ${args.join(' ')}`;
    console.error(`${name}: ${command}`);
    const r = spawnSync('node', args, { cwd: repoRoot, stdio: ['ignore', 'ignore', 'inherit'], env });
    const evidencePath = join(out, 'evidence.json');
    const evidence = existsSync(evidencePath) ? JSON.parse(readFileSync(evidencePath, 'utf8')) : null;
    bisect = evidence?.outcome?.bisect ?? null;
    status = bisect ? bisect.status : `no bisection (${evidence?.outcome?.status ?? `exit ${r.status}`})`;
  }
  const fb = bisect?.firstBad ?? null;
  const overlap = fb ? await commitFixOverlap(mirror, fb.sha, c.fix_commit) : { sameFiles: [], fixedLinesAdded: [] };
  rows.push({
    case: name,
    good: bisect ? `${bisect.good.ref} (${bisect.good.sha.slice(0, 12)})` : (good ?? named[0]!.ref),
    command,
    status,
    range: bisect?.commitsInRange ?? 0,
    log2: bisect?.expectedSteps ?? 0,
    runs: bisect?.steps.length ?? 0,
    skipped: (bisect?.steps ?? []).filter((s) => s.verdict === 'skip').map((s) => `${s.sha.slice(0, 12)}: ${s.why}`),
    bisectS: Math.round((bisect?.wallMs ?? 0) / 100) / 10,
    wallS: Math.round((Date.now() - t0) / 100) / 10,
    firstBad: fb ? `${fb.sha.slice(0, 12)} ${fb.subject}${fb.pr !== null ? ` (#${fb.pr})` : ''}` : (bisect?.reason ?? status),
    sameFiles: overlap.sameFiles,
    fixedLinesAdded: overlap.fixedLinesAdded,
    steps: (bisect?.steps ?? []).map((s) => ({
      sha: s.sha,
      subject: s.subject,
      verdict: s.verdict,
      why: s.why,
      seconds: s.durationMs / 1000,
    })),
  });
}

const yes = (r: Row): string =>
  r.firstBad && r.status === 'found'
    ? `${r.sameFiles.length ? `yes (${r.sameFiles.join(', ')})` : 'no'}; adds a line the fix removes: ${r.fixedLinesAdded.length ? `yes (\`${r.fixedLinesAdded[0]}\`)` : 'no'}`
    : '—';
console.log(`load average ${loadavg()[0]!.toFixed(1)}; REPGEN_BISECT_MAX_STEPS=${maxSteps}\n`);
console.log(
  '| case | GOOD | status | range | log2 | runs (GOOD incl.) | skipped | bisect wall | whole run | first bad commit | touches the fix |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const skipped = r.skipped.length ? `${r.skipped.length}: ${r.skipped.join('; ')}` : '0';
  console.log(
    `| ${r.case} | ${r.good} | ${r.status} | ${r.range} | ${r.log2} | ${r.runs} | ${skipped} | ${r.bisectS} s | ${r.wallS} s | ${r.firstBad} | ${yes(r)} |`,
  );
}
for (const r of rows) console.log(`\n${r.case}: \`${r.command}\``);
if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2));

/** A given reproduction bisected directly: it must show the reported bug at BUGGY, then runBisect as the pipeline runs it. */
async function bisectScript(
  script: string,
  issueText: string,
  mirror: string,
  repo: string,
  buggy: string,
  good: string,
): Promise<{ bisect: BisectResult | null; status: string }> {
  const sha = (await gitRefLookup(mirror).commit(buggy)) ?? buggy;
  const cacheDir = checkoutCacheDir(env);
  const python = env.REPGEN_PYTHON ?? '/usr/bin/python3';
  const { source } = await localBisectSource({
    repoDir: mirror,
    repo,
    good,
    issueText,
    packages: [],
    bad: { ref: buggy, sha },
    cacheDir,
    python,
  });
  if (!source) return { bisect: null, status: 'no GOOD' };
  const executor = await createExecutor(readLocalExecConfig(env));
  try {
    const report = readReport(issueText);
    const atBad = await verifyFix(
      { script, report, ref: buggy, sha, workspace: await source.workspaceAt(sha), runs: 1, settings },
      { executor },
    );
    if (atBad.runs[0]?.outcome !== 'reproduces')
      return { bisect: null, status: `the script does not show the bug at ${buggy}: ${atBad.reason}` };
    const bisect = await runBisect(
      { script, report, imports: importedModules(script), runsPerStep: 1, maxSteps, maxMs, settings },
      { executor, source, progress: (m) => console.error(m) },
    );
    return { bisect, status: bisect.status };
  } finally {
    await executor.close?.();
  }
}
