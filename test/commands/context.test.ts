import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import type { CliIo } from '../../src/cli/io.js';
import { command, readIssueMarkdown } from '../../src/commands/context.js';
import { UsageError } from '../../src/errors.js';
import { makeHostileFiles } from '../helpers/hostile-files.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const BIN = fileURLToPath(new URL('../../bin/repgen.js', import.meta.url));

/**
 * Runs the command as the dispatcher does: a UsageError is exit 2 with its message on one line (src/cli.ts).
 * (vitest cannot follow src/cli.ts's variable dynamic import, so one test below runs the real binary.)
 */
async function main(args: string[], io: CliIo): Promise<number> {
  try {
    return await command.run(args.slice(1), io);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr(`repgen context: ${err.message}\n`);
    return 2;
  }
}

const REPO = fileURLToPath(new URL('../../fixtures/repos/vision-classifier', import.meta.url));

function captureIo(): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env: { REPGEN_CONTEXT_CACHE_DIR: 'off' },
    cwd: process.cwd(),
  };
}

function issueFile(text: string): string {
  const dir = makeTempDir('repgen-issue-');
  writeFileSync(join(dir, 'issue.md'), text);
  return join(dir, 'issue.md');
}

const ISSUE = issueFile(
  '# Validation crashes with two classes\n\n```\n  File "vision/utils/metrics.py", line 26, in accuracy\nRuntimeError: selected index k out of range\n```\n',
);

describe('repgen context', () => {
  it('prints one JSON object with bundles, training loops, semantic and timings', async () => {
    const io = captureIo();
    expect(await main(['context', '--repo', REPO, '--issue', ISSUE, '--top', '2', '--json'], io)).toBe(0);
    const out = JSON.parse(io.out.join('')) as Record<string, unknown> & { bundles: Array<Record<string, unknown>> };
    expect(Object.keys(out)).toEqual(expect.arrayContaining(['bundles', 'trainingLoops', 'semantic', 'timings']));
    expect(out.bundles).toHaveLength(2);
    expect(out.bundles[0]).toMatchObject({ rank: 1, tokens: expect.any(Number) });
    expect((out.bundles[0]!.chunks as Array<Record<string, unknown>>)[0]).toMatchObject({
      path: 'vision/utils/metrics.py',
      startLine: 23,
      endLine: 30,
      kind: 'function',
      score: expect.any(Number),
      reasons: expect.any(Array),
    });
    expect(out.semantic).toMatch(/^off: /);
    expect(out.trainingLoops).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'train.py', framework: 'pytorch' })]));
  });

  it('prints ranked bundles for people', async () => {
    const io = captureIo();
    expect(await main(['context', '--repo', REPO, '--issue', ISSUE, '--top', '1'], io)).toBe(0);
    expect(io.out.join('')).toMatch(/bundle 1 .*\n {2}vision\/utils\/metrics\.py:23-30 {2}function accuracy/);
  });

  it.each([
    ['a folder that does not exist', () => join(tmpdir(), 'no-such-repgen-dir'), /repository folder .* does not exist/],
    ['a file instead of a folder', () => ISSUE, /is not a folder/],
    ['an empty folder', () => makeTempDir('repgen-empty-'), /is empty/],
    [
      'a folder without Python',
      () => {
        const dir = makeTempDir('repgen-nopy-');
        mkdirSync(join(dir, 'conf'));
        writeFileSync(join(dir, 'conf', 'a.yaml'), 'a: 1\n');
        return dir;
      },
      /has no Python files/,
    ],
  ])('exits 2 with one clear line for %s', async (_case, repo, message) => {
    const io = captureIo();
    expect(await main(['context', '--repo', repo(), '--issue', ISSUE], io)).toBe(2);
    const err = io.err.join('');
    expect(err).toMatch(message);
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(err).not.toMatch(/\s+at /);
  });

  it('exits 2 for missing options and a missing issue file', async () => {
    const io = captureIo();
    expect(await main(['context', '--issue', ISSUE], io)).toBe(2);
    expect(await main(['context', '--repo', REPO], io)).toBe(2);
    expect(await main(['context', '--repo', REPO, '--issue', '/no/such/issue.md'], io)).toBe(2);
    expect(await main(['context', '--repo', REPO, '--issue', ISSUE, '--top', 'zero'], io)).toBe(2);
    expect(io.err.join('')).toMatch(/--repo DIR is required[\s\S]*--issue ISSUE_MD is required[\s\S]*does not exist[\s\S]*--top must be/);
  });

  it('--issue naming a device, a FIFO or a huge sparse file: exit 2 with one line saying what it is', async () => {
    const h = makeHostileFiles();
    for (const [path, msg] of [
      [h.fifo, /^repgen context: --issue '.*issue\.fifo' is a named pipe \(FIFO\), not a regular file$/],
      ['/dev/zero', /^repgen context: --issue '\/dev\/zero' is a character device, not a regular file$/],
      [h.sparse, /^repgen context: --issue '.*sparse\.md' is 68719\.5 MB; the limit is 52\.4 MB$/],
    ] as const) {
      const io = captureIo();
      expect(await main(['context', '--repo', REPO, '--issue', path], io)).toBe(2);
      expect(io.err.join('').trim()).toMatch(msg);
    }
  });

  it('the real binary exits 2 with one line and no stack trace for a folder that is not a repository', () => {
    const run = spawnSync(process.execPath, [BIN, 'context', '--repo', join(tmpdir(), 'no-such-repgen-dir'), '--issue', ISSUE], {
      encoding: 'utf8',
      env: { ...process.env, REPGEN_CONTEXT_CACHE_DIR: 'off' },
    });
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toMatch(/^repgen context: repository folder .*no-such-repgen-dir does not exist$/m);
    expect(run.stderr).not.toMatch(/\s+at /);
  });

  it('reads the title from a leading markdown heading', () => {
    expect(readIssueMarkdown('# Title here\nbody\n')).toEqual({ title: 'Title here', body: 'body\n' });
    expect(readIssueMarkdown('no heading')).toEqual({ body: 'no heading' });
  });
});
