import { describe, expect, it } from 'vitest';
import { createPyflakesChecker } from '../../src/agent/pyflakes-checker.js';
import { runTier0 } from '../../src/agent/run-tier0.js';
import { completeSnippet, mapCudaToCpu, standInMissingModules } from '../../src/agent/tier0.js';
import { silentLogger as log } from '../../src/log.js';
import type { ReproPlan } from '../../src/plan/types.js';
import { runReport } from '../../src/report/index.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import { SIZES_ISSUE, SIZES_CRASH } from '../fakes/repro-fixtures.js';

const checker = createPyflakesChecker({ pylint: false });

describe('completeSnippet (tier 0) with real pyflakes', () => {
  it('completes the code so that pyflakes finds no undefined name, each edit recorded', async () => {
    const r = await completeSnippet(
      {
        blocks: [
          'class LR(nn.Module):\n    def forward(self, x):\n        return F.relu(x)\n\nmodel = LR()\nopt = optim.SGD(model.parameters(), lr=learn_rate)\n',
        ],
      },
      { checker },
    );
    expect(r.unresolved).toEqual([]);
    expect(r.script).toMatch(
      /^import torch\.nn as nn {2}# added by RepGen\nimport torch\.nn\.functional as F {2}# added by RepGen\nimport torch\.optim as optim {2}# added by RepGen\n/,
    );
    expect(r.script).toContain('learn_rate = 0.01  # added by RepGen');
    expect(r.edits.map((e) => e.action)).toEqual(['add_import', 'add_import', 'add_import', 'define']);
    expect(r.static.undefinedNames).toEqual([]);
  });

  it('joins blocks, strips REPL prompts, and keeps names it cannot know as unresolved with why', async () => {
    const r = await completeSnippet(
      { blocks: ['>>> import torch\n>>> t = torch.tensor([1, 0, 1])\n', '>>> t.mean() + offset_from_my_config()\n'] },
      { checker },
    );
    expect(r.edits.map((e) => e.action).slice(0, 2)).toEqual(['join_blocks', 'repair']);
    expect(r.unresolved).toEqual(['offset_from_my_config']);
    expect(r.candidates).toEqual([]);
    expect(r.missing[0]?.why).toMatch(/cannot be inferred/);
  });

  it('maps CUDA devices to the CPU in every candidate, and leaves CUDA-free code alone', async () => {
    const r = await completeSnippet(
      { blocks: ["import torch\nm = torch.nn.Linear(2, 2).to('cuda')\nx = torch.ones(1, 2).cuda()\n"] },
      { checker },
    );
    const cpu = mapCudaToCpu(r);
    expect(cpu?.script).toContain("m = torch.nn.Linear(2, 2).to('cpu')");
    expect(cpu?.candidates[0]?.script).toContain("x = torch.ones(1, 2).to('cpu')");
    expect(cpu?.edits.at(-1)?.action).toBe('cpu_fallback');
    expect(mapCudaToCpu({ ...r, script: 'import torch\n', candidates: [{ script: 'import torch\n', label: '', added: [] }] })).toBeNull();
  });

  it('stands in for tqdm and train_test_split only when this runner lacks them', async () => {
    const r = await completeSnippet(
      {
        blocks: [
          'import torch\nfrom tqdm import tqdm\nfrom sklearn.model_selection import train_test_split\nfor i in tqdm(range(2)):\n    print(train_test_split([1, 2, 3, 4], test_size=0.5))\n',
        ],
      },
      { checker },
    );
    expect(standInMissingModules(r, []).snippet).toBe(r);
    const s = standInMissingModules(r, ['tqdm', 'sklearn']);
    expect(s.substituted).toEqual(['tqdm', 'sklearn']);
    expect(s.snippet.script).toContain('    from tqdm import tqdm  # added by RepGen\nexcept ImportError:  # added by RepGen');
    expect(s.snippet.script).toContain('    def train_test_split(*arrays, test_size=0.25');
    expect(s.snippet.edits.filter((e) => e.action === 'substitute')).toHaveLength(2);
    // An import tier 0 itself added is stood in for too.
    const added = await completeSnippet({ blocks: ['for i in tqdm(range(2)):\n    print(i)\n'] }, { checker });
    expect(standInMissingModules(added, ['tqdm']).substituted).toEqual(['tqdm']);
    // A second pass does not wrap the guarded imports again.
    expect(standInMissingModules(s.snippet, ['tqdm', 'sklearn']).snippet.script).toBe(s.snippet.script);
  });

  it('the stand-ins run under the real interpreter', async () => {
    const { execFileSync } = await import('node:child_process');
    const r = await completeSnippet(
      {
        blocks: [
          'from tqdm import tqdm\nfrom sklearn.model_selection import train_test_split\nfor i in tqdm(range(1)):\n    a, b = train_test_split(list(range(8)), test_size=0.25, random_state=0)\n    print(len(a), len(b))\n',
        ],
      },
      { checker },
    );
    const script = standInMissingModules(r, ['tqdm', 'sklearn']).snippet.script;
    expect(execFileSync('/usr/bin/python3', ['-c', script], { encoding: 'utf8' }).trim()).toMatch(/^6 2$/);
  });
});

const PLAN: ReproPlan = { steps: [], dataStrategy: 'report_code', assertion: '', blockers: [], imports: ['torch'], missingModules: [] };

describe('runTier0: search over candidates', () => {
  it('runs the candidates in pairs and keeps the first the matcher accepts', async () => {
    const report = await runReport(
      { issue: { title: '', body: SIZES_ISSUE }, settings: { maxIssueChars: 100_000, maxLlmIssueChars: 10_000 } },
      { llm: null, log },
    );
    const snippet = await completeSnippet({ blocks: report.facts.pythonBlocks, reportText: SIZES_ISSUE }, { checker });
    expect(snippet.candidates.length).toBeGreaterThan(3);
    const executor = new FakeExecutor((_req, script) =>
      /size=256\)/.test(script)
        ? {
            stderr: SIZES_CRASH,
            exitCode: 1,
          }
        : { stdout: '', exitCode: 0 },
    );
    const activity: string[] = [];
    const r = await runTier0(
      { snippet, report, plan: PLAN, budget: { runTimeoutMs: 1000, runMemoryMb: 512, deadline: Date.now() + 60_000 } },
      { executor, log, onActivity: (w) => void activity.push(w) },
    );
    expect(r.reproduced).toBe(true);
    expect(r.final?.script).toContain('size=256)');
    const n = snippet.candidates.findIndex((c) => /size=256\)/.test(c.script)) + 1;
    expect(r.attempts[n - 1]?.outcome).toBe('reproduced');
    expect(r.attempts.slice(0, n - 1).every((a) => a.outcome === 'run_mismatch')).toBe(true);
    expect(r.attempts.filter((a) => a.outcome === 'reproduced')).toHaveLength(1);
    // Pairs: never more runs than the pair holding the reproducing candidate.
    expect(executor.requests.length).toBe(Math.min(snippet.candidates.length, Math.ceil(n / 2) * 2));
    // Progress names each pair before it runs: "running tier 0 candidates 1–2 of 8".
    const N = snippet.candidates.length;
    expect(activity).toEqual(
      Array.from(
        { length: Math.ceil(n / 2) },
        (_, k) => `running tier 0 candidate${2 * k + 2 <= N ? `s ${2 * k + 1}–${2 * k + 2}` : ` ${2 * k + 1}`} of ${N}`,
      ),
    );
  });

  it('runs nothing and says what is missing when the completion cannot run', async () => {
    const report = await runReport(
      { issue: { title: '', body: SIZES_ISSUE }, settings: { maxIssueChars: 100_000, maxLlmIssueChars: 10_000 } },
      { llm: null, log },
    );
    const snippet = await completeSnippet({ blocks: ['import torch\nx = my_loader()\nprint(x)\n'] }, { checker });
    const executor = new FakeExecutor(() => ({ stdout: '' }));
    const r = await runTier0(
      { snippet, report, plan: PLAN, budget: { runTimeoutMs: 1000, runMemoryMb: 512, deadline: Date.now() + 60_000 } },
      { executor, log },
    );
    expect(executor.requests).toHaveLength(0);
    expect(r.attempts).toHaveLength(1);
    expect(r.attempts[0]?.outcome).toBe('incomplete_code');
    expect(r.attempts[0]?.feedback).toMatch(/`my_loader` \(it is called but never defined/);
  });
});
