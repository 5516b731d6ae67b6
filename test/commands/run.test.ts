import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { command, readRunCommandSettings, RunCommandOutput } from '../../src/commands/run.js';
import { SetupError, UsageError } from '../../src/errors.js';
import { makeHostileFiles } from '../helpers/hostile-files.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const ROOT = join(import.meta.dirname, '../..');
const ENV = { REPGEN_PYTHON: '/usr/bin/python3', PATH: process.env.PATH ?? '' };
const SO046 = 'fixtures/bench/dl-bugs/so-046/issue.md';

function io(env: NodeJS.ProcessEnv = ENV): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env, cwd: ROOT };
}

/** `repgen run …` in-process (src/commands/run.ts is called directly: vite cannot follow cli.ts's variable import). */
async function runJson(args: string[]): Promise<RunCommandOutput> {
  const cli = io();
  expect(await command.run([...args, '--json'], cli)).toBe(0);
  expect(cli.out).toHaveLength(1);
  return RunCommandOutput.parse(JSON.parse(cli.out.join('')));
}

let tmp = '';
beforeAll(async () => {
  tmp = makeTempDir('repgen-run-test-');
});

describe('repgen run: matching a run against an issue', { timeout: 200_000 }, () => {
  it('the so-046 reproduction reproduces so-046', async () => {
    const r = await runJson(['fixtures/repros/so-046.py', '--issue', SO046]);
    expect(r.exception).toEqual({ type: 'RuntimeError', message: 'mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)' });
    expect(r.symptoms.map((s) => s.kind)).toEqual(['shape_mismatch']);
    expect(r.isolation.network).toBe('none');
    expect(r.match).toMatchObject({
      verdict: 'reproduced',
      score: 1,
      reasons: ['same exception RuntimeError (shape_mismatch), message overlap 1.00'],
    });
    expect(r.match?.compared).toEqual([
      expect.objectContaining({ what: 'the exception', agree: true, note: 'same class; message word overlap 1.00 (0.6 needed)' }),
    ]);
  });

  it('an unrelated script does not', async () => {
    const r = await runJson(['fixtures/scripts/dl-unrelated.py', '--issue', SO046]);
    expect(r.exitCode).toBe(0);
    expect(r.match?.verdict).toBe('not_reproduced');
    expect(r.match?.reasons).toEqual(['no exception in the run; the report shows RuntimeError']);
  });

  it.each([
    ['dl-fake-print-so-046.py', SO046, /contains the report's output literally/],
    ['dl-fake-raise-so-046.py', SO046, /raises RuntimeError itself/],
    ['dl-fake-print-so-091.py', 'fixtures/bench/dl-bugs/so-091/issue.md', /contains the report's output literally/],
  ])('a script that fakes the report (%s) is not reproduced', async (script, issue, why) => {
    const r = await runJson([`fixtures/scripts/${script}`, '--issue', issue]);
    expect(r.match?.verdict).toBe('not_reproduced');
    expect(r.match?.score).toBe(0);
    expect(r.match?.reasons.join('\n')).toMatch(why);
  });

  it('a hanging script is killed at --timeout and read as a timeout; the run still counts as carried out', async () => {
    const r = await runJson(['fixtures/scripts/dl-hang.py', '--timeout', '2']);
    expect(r.timedOut).toBe(true);
    expect(r.symptoms.map((s) => s.kind)).toEqual(['timeout']);
    expect(r.symptoms[0]?.evidence).toContain('epoch 1: waiting for the data loader');
  });

  it('a native crash (SIGSEGV, no traceback) is read as a crash', async () => {
    const r = await runJson(['fixtures/scripts/dl-native-crash.py']);
    expect(r).toMatchObject({ exitCode: null, signal: 'SIGSEGV', exception: null });
    expect(r.symptoms).toEqual([{ kind: 'other_crash', evidence: 'killed by SIGSEGV; last output:\nloading the extension' }]);
  });

  it('without --json: a readable summary', async () => {
    const cli = io();
    expect(await command.run(['fixtures/scripts/dl-unrelated.py', '--issue', SO046], cli)).toBe(0);
    const text = cli.out.join('');
    expect(text).toMatch(/^ran fixtures\/scripts\/dl-unrelated.py in [\d.]+ s \(exit 0\); network: none \(\w+\)\n/);
    expect(text).toContain(
      'exception: none\nsymptoms: none\nmatch: not_reproduced (score 0.00)\n  - no exception in the run; the report shows RuntimeError\n',
    );
  });
});

describe('repgen run: bad input gets one clear message', () => {
  async function rejects(
    args: string[],
    error: typeof UsageError | typeof SetupError,
    message: RegExp,
    env?: NodeJS.ProcessEnv,
  ): Promise<void> {
    const cli = io(env);
    const err = await command.run(args, cli).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(error);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain('\n');
    expect(cli.out).toEqual([]);
  }

  it('no script, a missing script, a directory', async () => {
    await rejects([], UsageError, /^missing SCRIPT \(usage: repgen run SCRIPT/);
    await rejects(['nope.py'], UsageError, /^script '.*nope\.py' does not exist$/);
    await rejects(['fixtures'], UsageError, /^script '.*fixtures' is a directory, not a regular file$/);
  });

  it('a binary script and a binary issue', async () => {
    const bin = join(tmp, 'model.pt');
    await writeFile(bin, Buffer.from([0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, 0x00, 0x00]));
    await rejects([bin], UsageError, /^script '.*model\.pt' is a binary file, not text$/);
    await rejects(['fixtures/scripts/dl-unrelated.py', '--issue', bin], UsageError, /^issue '.*model\.pt' is a binary file, not text$/);
    const latin1 = join(tmp, 'latin1.md');
    await writeFile(latin1, Buffer.from('caf\xe9 RuntimeError', 'latin1'));
    await rejects(['fixtures/scripts/dl-unrelated.py', '--issue', latin1], UsageError, /is not valid UTF-8 text$/);
  });

  it('an empty issue, an issue with no code and no error, a missing issue', async () => {
    const empty = join(tmp, 'empty.md');
    await writeFile(empty, '  \n\n');
    await rejects(
      ['fixtures/scripts/dl-unrelated.py', '--issue', empty],
      UsageError,
      /^issue '.*empty\.md' is empty: nothing to match the run against$/,
    );
    const prose = join(tmp, 'prose.md');
    await writeFile(prose, '# Help\n\nHow do I make my model train faster? Thanks!\n');
    await rejects(
      ['fixtures/scripts/dl-unrelated.py', '--issue', prose],
      UsageError,
      /^issue '.*prose\.md' has no code block and no error or output: nothing to match the run against$/,
    );
    await rejects(['fixtures/scripts/dl-unrelated.py', '--issue', 'missing.md'], UsageError, /^issue '.*missing\.md' does not exist$/);
  });

  it('a device, a FIFO, a link to /dev/zero, a huge sparse file: refused at once, as script and as issue, nothing read whole', async () => {
    const h = makeHostileFiles();
    const script = 'fixtures/scripts/dl-unrelated.py';
    await rejects([h.fifo], UsageError, /^script '.*issue\.fifo' is a named pipe \(FIFO\), not a regular file$/);
    await rejects(['/dev/zero'], UsageError, /^script '\/dev\/zero' is a character device, not a regular file$/);
    await rejects([h.zeroLink], UsageError, /^script '.*zero\.md' is a symbolic link \(name the file itself\), not a regular file$/);
    await rejects([h.sparse], UsageError, /^script '.*sparse\.md' is 68719\.5 MB; the limit is 1\.0 MB \(REPGEN_MAX_SCRIPT_BYTES\)$/);
    await rejects([script, '--issue', '/dev/zero'], UsageError, /^issue '\/dev\/zero' is a character device, not a regular file$/);
    await rejects([script, '--issue', h.fifo], UsageError, /^issue '.*issue\.fifo' is a named pipe \(FIFO\), not a regular file$/);
    await rejects([script, '--issue', h.folder], UsageError, /^issue '.*folder\.md' is a directory, not a regular file$/);
  });

  it('a 5 MB issue', async () => {
    const big = join(tmp, 'big.md');
    await writeFile(big, `# Big\n\n\`\`\`\n${'Epoch 1/10 - loss: 0.5\n'.repeat(230_000)}\`\`\`\n`);
    await rejects(
      ['fixtures/scripts/dl-unrelated.py', '--issue', big],
      UsageError,
      /^issue '.*big\.md' is 5\.\d MB; the limit is 1\.0 MB \(REPGEN_MAX_ISSUE_BYTES\)$/,
    );
  });

  it('bad options and settings', async () => {
    await rejects(
      ['fixtures/scripts/dl-unrelated.py', '--timeout', 'soon'],
      UsageError,
      /^--timeout must be a number of seconds above 0 and at most 86400, got 'soon'$/,
    );
    await rejects(['fixtures/scripts/dl-unrelated.py', '--gpu'], UsageError, /Unknown option '--gpu'/);
    await rejects(['fixtures/scripts/dl-unrelated.py'], UsageError, /^invalid REPGEN_MAX_ISSUE_BYTES: /, {
      ...ENV,
      REPGEN_MAX_ISSUE_BYTES: 'lots',
    });
    expect(readRunCommandSettings({})).toEqual({ maxIssueBytes: 1_000_000, maxScriptBytes: 1_000_000, timeoutMs: 120_000 });
  });

  it('an interpreter that is not a Python (--python /bin/true, REPGEN_PYTHON=/bin/false) is a setup error before any run', async () => {
    await rejects(
      ['fixtures/scripts/dl-unrelated.py', '--python', '/bin/true'],
      SetupError,
      /^--python '\/bin\/true' is not a Python interpreter: asked for its version, it printed nothing$/,
    );
    await rejects(
      ['fixtures/scripts/dl-unrelated.py'],
      SetupError,
      /^REPGEN_PYTHON '\/bin\/false' is not a Python interpreter: asked for its version, exit 1$/,
      {
        ...ENV,
        REPGEN_PYTHON: '/bin/false',
      },
    );
  });

  it('a missing interpreter is a setup error', async () => {
    await rejects(
      ['fixtures/scripts/dl-unrelated.py', '--python', '/nonexistent/python3'],
      SetupError,
      /^--python '\/nonexistent\/python3' does not exist$/,
    );
  });
});

describe('repgen run through bin/repgen.js: exit codes and one-line messages', { timeout: 120_000 }, () => {
  const exec = promisify(execFile);
  async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await exec(process.execPath, [join(ROOT, 'bin/repgen.js'), 'run', ...args], { cwd: ROOT, env: ENV });
      return { code: 0, stdout, stderr };
    } catch (e) {
      const err = e as { code: number; stdout: string; stderr: string };
      return { code: err.code, stdout: err.stdout, stderr: err.stderr };
    }
  }

  it('exit 0 with one JSON object; exit 2 with one line for a missing file and for a missing interpreter', async () => {
    const ok = await cli(['fixtures/scripts/dl-unrelated.py', '--json']);
    expect(ok.code).toBe(0);
    expect(RunCommandOutput.parse(JSON.parse(ok.stdout)).exitCode).toBe(0);
    const missing = await cli(['missing.py']);
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(
      missing.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('npm warn')),
    ).toEqual([`repgen run: script '${join(ROOT, 'missing.py')}' does not exist`]);
    const nopy = await cli(['fixtures/scripts/dl-unrelated.py', '--python', '/nonexistent/python3']);
    expect(nopy.code).toBe(2);
    expect(nopy.stderr).toMatch(/^repgen run: --python '\/nonexistent\/python3' does not exist$/m);
    expect(nopy.stderr).not.toMatch(/\n\s+at /);
  });
});
