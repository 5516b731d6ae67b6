/**
 * Retrieval on real bugs: for each case of /work/shared/bench/repo-bugs, extract the buggy commit of the
 * fetched repository into a scratch folder (never committed), run buildContext with the reporter's issue.md,
 * and say where the fixed file and the fixed function rank among the bundles' primary chunks.
 *
 *   npx tsx scripts/bench/context-repo-bugs.ts [--scratch /tmp/ctx] [--top 10] [--embed-model DIR]
 *
 * Needs the mirrors that the `fetch` tool brings: /work/.mirror/<owner>+<name>/repo.
 */
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildContext } from '../../src/context/index.js';
import { readIssueMarkdown } from '../../src/commands/context.js';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '/work/shared/bench/repo-bugs' },
    scratch: { type: 'string', default: '/tmp/ctx' },
    top: { type: 'string', default: '10' },
    'embed-model': { type: 'string' },
  },
});

interface Case {
  repo: string;
  issue: number;
  buggy_commit: string;
  fixed_files: string[];
  fixed_functions: string[];
  report_kind: string;
}

const rows: string[] = [];
let fileTop5 = 0;
let funcTop10 = 0;
let total = 0;
for (const name of readdirSync(values.cases!)
  .filter((n) => existsSync(join(values.cases!, n, 'case.json')))
  .sort()) {
  const c = JSON.parse(readFileSync(join(values.cases!, name, 'case.json'), 'utf8')) as Case;
  const dir = join(values.scratch!, name);
  if (!existsSync(dir)) {
    const mirror = `/work/.mirror/${c.repo.replace('/', '+')}/repo`;
    mkdirSync(dir, { recursive: true });
    // Notebooks and large binaries may be absent from the mirror; the code is what matters here.
    execSync(`git --git-dir=${mirror} archive ${c.buggy_commit} -- . ':(exclude)*.ipynb' | tar -x -C ${dir}`);
  }
  const report = readIssueMarkdown(readFileSync(join(values.cases!, name, 'issue.md'), 'utf8'));
  const env = { ...process.env, ...(values['embed-model'] ? { REPGEN_EMBED_MODEL: values['embed-model'] } : {}) };
  const result = await buildContext({ repoDir: dir, report, top: Number(values.top) }, { cacheDir: 'off', env });
  const primaries = result.bundles.map((b) => b.chunks[0]!);
  const files = [...new Set(primaries.map((p) => p.path))];
  const fileRank = files.findIndex((f) => c.fixed_files.includes(f)) + 1;
  const matches = (symbol?: string): boolean =>
    !!symbol && c.fixed_functions.some((f) => symbol === f || symbol.endsWith(`.${f}`) || f.endsWith(`.${symbol}`));
  const funcRank = primaries.findIndex((p) => matches(p.symbol)) + 1;
  const anywhere = result.bundles.findIndex((b) => b.chunks.some((ch) => matches(ch.symbol))) + 1;
  total += 1;
  if (fileRank && fileRank <= 5) fileTop5 += 1;
  if (funcRank) funcTop10 += 1;
  rows.push(
    `| ${name} | ${c.report_kind} | ${fileRank || '-'} | ${funcRank || '-'} | ${anywhere || '-'} | ${primaries
      .slice(0, 3)
      .map((p) => `${p.path}::${p.symbol ?? p.kind}`)
      .join('<br>')} | ${Math.round(result.timings.totalMs ?? 0)} |`,
  );
}
console.log(
  '| case | report | fixed file: rank among top files | fixed function: rank among top chunks | in a bundle (rank) | top 3 chunks | ms |',
);
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
console.log(
  `\nfixed file among the top 5 files: ${fileTop5}/${total}; fixed function among the top ${values.top} chunks: ${funcTop10}/${total}`,
);
