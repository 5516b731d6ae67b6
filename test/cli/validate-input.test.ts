import { spawnSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareOutDir, timeoutSeconds } from '../../src/cli/validate-input.js';
import { UsageError } from '../../src/errors.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * Issue 12, item 8: every bad CLI input gets one line on stderr and exit 2 before any pipeline work. Run as real
 * processes, so what a user sees is what is tested: no stage line ("[intake]…") may be printed.
 */
const ROOT = join(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/repgen.js');
const ISSUE = join(ROOT, 'fixtures/bench/dl-bugs/so-046/issue.md');
const SCRIPT = join(ROOT, 'fixtures/repros/so-046.py');
const dir = makeTempDir('repgen-cli-bad-');
const aFile = join(dir, 'a-file');
writeFileSync(aFile, 'x');
const empty = join(dir, 'empty.py');
writeFileSync(empty, '  \n');
// An issue file that is a link to a file only RepGen's uid can read (issue 38: /etc/shadow's lines reached evidence.json).
const shadow = join(dir, 'shadow');
writeFileSync(shadow, 'root:$6$hash:19000:0:99999:7:::\n', { mode: 0o600 });
const linked = join(dir, 'linked-issue.md');
symlinkSync(shadow, linked);
const latin1 = join(dir, 'latin1.md');
writeFileSync(latin1, Buffer.from('# caf\xe9\n```python\nimport torch\n```\nRuntimeError: x\n', 'latin1'));

const CASES: Array<[string, string[], RegExp]> = [
  [
    'reproduce --out under /proc',
    ['reproduce', '--issue', ISSUE, '--llm', 'none', '--out', '/proc/x'],
    /^repgen reproduce: --out '\/proc\/x' is inside \/proc: choose a normal folder for the results$/,
  ],
  [
    'reproduce --out at a file',
    ['reproduce', '--issue', ISSUE, '--llm', 'none', '--out', aFile],
    /^repgen reproduce: --out '.*a-file' is a file, not a folder$/,
  ],
  [
    'reproduce --out below a file',
    ['reproduce', '--issue', ISSUE, '--llm', 'none', '--out', join(aFile, 'sub')],
    /is a file, not a folder$/,
  ],
  [
    'bench --out under /proc',
    ['bench', join(ROOT, 'fixtures/bench/dl-bugs'), '--llm', 'none', '--out', '/proc/x/results.md'],
    /^repgen bench: --out '\/proc\/x' is inside \/proc/,
  ],
  [
    'run --timeout 1e9',
    ['run', SCRIPT, '--timeout', '1e9'],
    /^repgen run: --timeout must be a number of seconds above 0 and at most 86400, got '1e9'$/,
  ],
  [
    'run --timeout -1',
    ['run', SCRIPT, '--timeout', '-1'],
    /^repgen run: --timeout must be a number of seconds above 0 and at most 86400, got '-1'$/,
  ],
  ['run --timeout 0', ['run', SCRIPT, '--timeout', '0'], /^repgen run: --timeout must be/],
  ['run an empty script', ['run', empty], /^repgen run: script '.*empty\.py' is empty: nothing to run$/],
  [
    'run --python /etc/hostname',
    ['run', SCRIPT, '--python', '/etc/hostname'],
    /^repgen run: --python '\/etc\/hostname' is not executable: name a Python interpreter$/,
  ],
  ['run --python missing', ['run', SCRIPT, '--python', '/no/such/python'], /^repgen run: --python '\/no\/such\/python' does not exist$/],
  [
    'reproduce a non-UTF-8 issue',
    ['reproduce', '--issue', latin1, '--llm', 'none', '--out', join(dir, 'o')],
    /^repgen reproduce: --issue '.*latin1\.md' is not valid UTF-8 text$/,
  ],
  [
    'context a non-UTF-8 issue',
    ['context', '--repo', join(ROOT, 'fixtures/repos/tiny-classifier'), '--issue', latin1],
    /^repgen context: --issue '.*latin1\.md' is not valid UTF-8 text$/,
  ],
  ['run a non-UTF-8 issue', ['run', SCRIPT, '--issue', latin1], /is not valid UTF-8 text$/],
  [
    'reproduce --issue a symbolic link',
    ['reproduce', '--issue', linked, '--llm', 'none', '--out', join(dir, 'o-link')],
    /^repgen reproduce: --issue '.*linked-issue\.md' is a symbolic link \(name the file itself\), not a regular file$/,
  ],
  [
    'context --issue a symbolic link',
    ['context', '--repo', join(ROOT, 'fixtures/repos/tiny-classifier'), '--issue', linked],
    /^repgen context: --issue '.*linked-issue\.md' is a symbolic link \(name the file itself\), not a regular file$/,
  ],
  ['run --issue a symbolic link', ['run', SCRIPT, '--issue', linked], /is a symbolic link \(name the file itself\), not a regular file$/],
];

describe('bad CLI input: one line, exit 2, no pipeline work', () => {
  it.each(CASES)('%s', (_name, args, message) => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      encoding: 'utf8',
      timeout: 60_000,
      cwd: dir,
      env: { ...process.env, ANTHROPIC_API_KEY: '', OPENAI_BASE_URL: '' },
    });
    expect(r.status).toBe(2);
    const lines = r.stderr.split('\n').filter((l) => l.trim() && !/^npm warn/.test(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
    expect(r.stderr).not.toMatch(/^\[(intake|report|plan|agent)\]/m);
  });
});

describe('the checks themselves', () => {
  it('prepareOutDir creates a normal folder, and leaves nothing behind but the folder', () => {
    const out = prepareOutDir(join(dir, 'new', 'nested'));
    expect(out).toBe(join(dir, 'new', 'nested'));
    expect(() => prepareOutDir('/sys/kernel/x')).toThrow(UsageError);
  });

  it('timeoutSeconds takes decimals and refuses what would overflow a timer', () => {
    expect(timeoutSeconds('2.5')).toBe(2.5);
    expect(timeoutSeconds(undefined)).toBeUndefined();
    for (const bad of ['Infinity', 'NaN', '', ' ', '86401', 'abc']) expect(() => timeoutSeconds(bad)).toThrow(UsageError);
  });
});
