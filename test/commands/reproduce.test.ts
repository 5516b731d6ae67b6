import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SetupError, UsageError } from '../../src/errors.js';
import type { CliIo } from '../../src/cli/io.js';
import { cliRunSpec, command, runReproduceCommand } from '../../src/commands/reproduce.js';
import { readOperatorEnv } from '../../src/config/operator-env.js';
import { createLlmClient } from '../../src/llm/index.js';
import { startScriptedAnthropicServer, type ScriptedServer } from '../helpers/anthropic-wire-server.js';
import { startScriptedOpenAiServer } from '../helpers/openai-wire-server.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import { makeHostileFiles } from '../helpers/hostile-files.js';
import { answer, CRASH_ISSUE, GOOD_SCRIPT, simulate } from '../fakes/repro-fixtures.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function io(cwd: string, env: NodeJS.ProcessEnv = {}): CliIo & { out: string; err: string } {
  const o: CliIo & { out: string; err: string } = {
    out: '',
    err: '',
    cwd,
    env: { REPGEN_PYLINT: '0', ...env },
    stdout: (t) => void (o.out += t),
    stderr: (t) => void (o.err += t),
  };
  return o;
}

async function tempIssue(body: string): Promise<string> {
  const dir = makeTempDir('repgen-reproduce-');
  await writeFile(join(dir, 'issue.md'), body);
  return dir;
}

describe('repgen reproduce', () => {
  it('writes repro.py, evidence.json and comment.md; progress one line per stage on stderr; exit 0 when reproduced', async () => {
    const dir = await tempIssue(CRASH_ISSUE);
    server = await startScriptedAnthropicServer(['```json\n{}\n```', answer(GOOD_SCRIPT)]);
    const llm = await createLlmClient({
      provider: 'anthropic',
      apiKey: 'sk-test-key',
      baseURL: server.url,
      maxRetries: 0,
      initialBackoffMs: 1,
    });
    const t = io(dir, { GITHUB_TOKEN: 'ghs_secretsecretsecret123' });
    const code = await runReproduceCommand(['--issue', 'issue.md', '--out', 'out', '--json'], t, {
      executor: new FakeExecutor(simulate),
      llm,
    });
    expect(code).toBe(0);
    const result = JSON.parse(t.out);
    expect(result).toMatchObject({ status: 'reproduced', confirmation: { reproducedRuns: 3, totalRuns: 3 }, attempts: 1 });
    expect(await readFile(join(dir, 'out', 'repro.py'), 'utf8')).toBe(GOOD_SCRIPT);
    const evidence = JSON.parse(await readFile(join(dir, 'out', 'evidence.json'), 'utf8'));
    expect(Object.keys(evidence)).toEqual(['outcome', 'report', 'plan', 'probe', 'context', 'tier0', 'finalRun', 'confirm', 'spec']);
    expect(evidence.confirm.runs).toHaveLength(3);
    expect(await readFile(join(dir, 'out', 'comment.md'), 'utf8')).toMatch(/✅ Reproduced \(3 of 3 seeded runs\)/);
    // Each stage line carries the time the stage took: `[plan 0.2 s] …`.
    const stageLines = t.err.split('\n').filter((l) => /^\[(intake|context|report|plan|agent|confirm|publish) \d+(?:\.\d)? s\]/.test(l));
    expect(stageLines.map((l) => l.slice(1, l.indexOf(' ')))).toEqual([
      'intake',
      'context',
      'report',
      'plan',
      'agent',
      'confirm',
      'publish',
    ]);
    const withoutTimes = stageLines.map((l) => l.replace(/^\[(\w+) [^\]]*\]/, '[$1]'));
    expect(withoutTimes).toContain('[agent] attempt 1 (tier 1): reproduced');
    expect(withoutTimes).toContain('[confirm] reproduced 3/3 runs');
    expect(t.err).not.toMatch(/^info /m);
  });

  it('exit 1 with the status and what the report lacks when it needs info (--llm none)', async () => {
    const dir = await tempIssue('# Loss goes weird\n\nMy loss does strange things. Help?\n');
    const t = io(dir);
    const code = await runReproduceCommand(['--issue', 'issue.md', '--out', 'o', '--llm', 'none'], t, {
      executor: new FakeExecutor(simulate),
    });
    expect(code).toBe(1);
    expect(t.out).toMatch(/^needs_info: /);
    expect(t.out).toMatch(/the report lacks:\n {2}- /);
    expect(t.err).toMatch(/LLM: none \(no LLM: chosen with --llm none\); tier 0 only/);
    expect(await readFile(join(dir, 'o', 'comment.md'), 'utf8')).toMatch(/Needs more information/);
  });

  it('defaults --llm to openai when OPENAI_BASE_URL is set, and refines over that wire format (vLLM/Ollama)', async () => {
    const dir = await tempIssue(CRASH_ISSUE);
    server = await startScriptedOpenAiServer([
      '```json\n{}\n```',
      answer(GOOD_SCRIPT.replace('nn.Linear(5, 2)', 'nn.Linear(5, 2)  # WRONG')),
      answer(GOOD_SCRIPT),
    ]);
    const t = io(dir, { OPENAI_BASE_URL: `${server.url}/v1`, REPGEN_LLM_MAX_RETRIES: '0' });
    const code = await runReproduceCommand(['--issue', 'issue.md', '--out', 'o', '--model', 'qwen2.5-coder:7b'], t, {
      executor: new FakeExecutor(simulate),
    });
    expect(t.err).toMatch(/LLM: openai qwen2.5-coder:7b/);
    expect(code).toBe(0);
    expect(server.requests).toHaveLength(3);
    expect((server.requests[2]?.body as { model: string }).model).toBe('qwen2.5-coder:7b');
    expect(JSON.stringify(server.requests[2]?.body)).toContain('failed at the symptom match check');
  });

  it('defaults --llm to none without keys, saying so', async () => {
    const dir = await tempIssue(CRASH_ISSUE);
    const t = io(dir);
    await runReproduceCommand(['--issue', 'issue.md', '--out', 'o'], t, { executor: new FakeExecutor(simulate) });
    expect(t.err).toMatch(/LLM: none \(.+\); tier 0 only/);
  });

  // src/cli.ts turns UsageError and SetupError into one stderr line and exit 2 (test/cli covers that mapping).
  async function exitOf(args: string[], t: CliIo & { err: string }): Promise<number> {
    try {
      return await command.run(args, t);
    } catch (err) {
      if (err instanceof UsageError || err instanceof SetupError) {
        t.err += `repgen reproduce: ${err.message}\n`;
        return 2;
      }
      throw err;
    }
  }

  it('usage and setup errors exit 2 with one line', async () => {
    const dir = await tempIssue(CRASH_ISSUE);
    for (const [args, msg] of [
      [[], /--issue ISSUE_MD is required/],
      [['--issue', 'missing.md'], /--issue 'missing.md' does not exist/],
      [['--issue', 'issue.md', '--llm', 'gpt'], /--llm must be none, anthropic or openai/],
      [['--issue', 'issue.md', '--max-attempts', '0'], /--max-attempts must be a number ≥ 1/],
      [['--issue', 'issue.md', '--repo', 'nope'], /--repo 'nope' is not a directory/],
      [['--issue', 'issue.md', '--llm', 'anthropic'], /needs an API key: set ANTHROPIC_API_KEY/],
      [['--issue', 'issue.md', '--bogus'], /Unknown option '--bogus'/],
      [['--issue', 'issue.md', '--ref', '--output=x'], /^repgen reproduce: --ref needs a value; got the option --output=x\n$/],
      [['--issue', 'issue.md', '--ref'], /^repgen reproduce: --ref needs a value\n$/],
    ] as const) {
      const t = io(dir);
      expect(await exitOf([...args], t)).toBe(2);
      expect(t.err).toMatch(msg);
      expect(t.err.trim().split('\n')).toHaveLength(1);
    }
    const bad = io(dir, { REPGEN_MAX_TOKENS: 'lots' });
    expect(await exitOf(['--issue', 'issue.md'], bad)).toBe(2);
    expect(bad.err).toMatch(/invalid REPGEN_MAX_TOKENS/);
  });

  it('--issue naming a device, a FIFO, a link to /dev/zero or a huge sparse file: exit 2 at once, nothing read whole', async () => {
    const h = makeHostileFiles();
    for (const [path, msg] of [
      [h.fifo, /^repgen reproduce: --issue '.*issue\.fifo' is a named pipe \(FIFO\), not a regular file$/],
      ['/dev/zero', /^repgen reproduce: --issue '\/dev\/zero' is a character device, not a regular file$/],
      [h.zeroLink, /^repgen reproduce: --issue '.*zero\.md' is a symbolic link \(name the file itself\), not a regular file$/],
      [h.sparse, /^repgen reproduce: --issue '.*sparse\.md' is 68719\.5 MB; the limit is 52\.4 MB$/],
      [h.folder, /^repgen reproduce: --issue '.*folder\.md' is a directory, not a regular file$/],
    ] as const) {
      const t = io(h.dir);
      expect(await exitOf(['--issue', path, '--llm', 'none'], t)).toBe(2);
      expect(t.err.trim()).toMatch(msg);
    }
  });

  it('REPGEN_PYTHON that is not a Python is a one-line setup error before any run', async () => {
    const dir = await tempIssue(CRASH_ISSUE);
    const t = io(dir, { REPGEN_PYTHON: '/bin/true' });
    const executor = new FakeExecutor(simulate);
    await expect(runReproduceCommand(['--issue', 'issue.md', '--llm', 'none', '--out', 'o'], t, { executor })).rejects.toThrow(
      /^REPGEN_PYTHON '\/bin\/true' is not a Python interpreter: asked for its version, it printed nothing$/,
    );
    expect(executor.requests).toEqual([]);
  });

  it('an unwritable --out is a one-line usage error, not a stack trace', async () => {
    const dir = await tempIssue(CRASH_ISSUE);
    const t = io(dir);
    await expect(
      runReproduceCommand(['--issue', 'issue.md', '--llm', 'none', '--out', 'issue.md/sub'], t, { executor: new FakeExecutor(simulate) }),
    ).rejects.toThrow(/^--out '.*issue\.md\/sub': '.*issue\.md' is a file, not a folder$/);
  });

  it('resolves its spec like the worker: --max-attempts is the terminal operator ceiling, --llm the request', () => {
    const spec = cliRunSpec(readOperatorEnv({ REPGEN_MAX_ATTEMPTS: '4', REPGEN_MAX_COST_USD: '0.5' }), { maxAttempts: 30, llm: 'none' });
    expect(spec.caps.attempts).toEqual({ value: 30, ceiling: 30, from: 'operator' });
    expect(spec.settings.maxAttempts).toBe(30);
    expect(spec.caps.costUsd.value).toBe(0.5);
    expect(spec.llm.provider).toBe('none');
    expect(cliRunSpec(readOperatorEnv({ REPGEN_MAX_ATTEMPTS: '4' }), {}).settings.maxAttempts).toBe(4);
    expect(() => cliRunSpec(readOperatorEnv({}), { llm: 'gpt' })).toThrow(UsageError);
  });

  it('prints its help', async () => {
    const t = io(tmpdir());
    expect(await command.run(['--help'], t)).toBe(0);
    expect(t.out).toMatch(/usage: repgen reproduce --issue ISSUE_MD/);
  });
});
