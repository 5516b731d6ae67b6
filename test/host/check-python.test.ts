import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SetupError } from '../../src/errors.js';
import { checkPython } from '../../src/host/check-python.js';
import { makeTempDir } from '../helpers/temp-dir.js';

function script(body: string): string {
  const dir = makeTempDir('repgen-check-python-');
  const path = join(dir, 'python');
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

async function refusal(python: string, timeoutMs?: number): Promise<string> {
  const err = await checkPython(python, { setting: '--python', ...(timeoutMs ? { timeoutMs } : {}) }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SetupError);
  return (err as Error).message;
}

describe('checkPython', () => {
  it("answers a real Python 3's version, found by path or by name", async () => {
    const [major] = await checkPython('/usr/bin/python3', { setting: 'REPGEN_PYTHON' });
    expect(major).toBe(3);
    expect((await checkPython('python3', { setting: '--python' }))[0]).toBe(3);
  });

  it('/bin/true (exit 0, no output) is not a Python', async () => {
    expect(await refusal('/bin/true')).toBe("--python '/bin/true' is not a Python interpreter: asked for its version, it printed nothing");
  });

  it('/bin/false, a program that prints something else, a Python 2, one that hangs', async () => {
    expect(await refusal('/bin/false')).toBe("--python '/bin/false' is not a Python interpreter: asked for its version, exit 1");
    expect(await refusal('/bin/echo')).toMatch(
      /^--python '\/bin\/echo' is not a Python interpreter: asked for its version, it printed '-I -c import sys/,
    );
    expect(await refusal(script('echo "repgen-python-check 2.7.18"'))).toMatch(/is Python 2\.7\.18: RepGen needs Python 3$/);
    expect(await refusal(script('exec sleep 600'), 500)).toMatch(
      /is not a Python interpreter: it did not answer a version check within 0\.5 s$/,
    );
  });

  it('a missing program, a name not on PATH, a file that is not executable', async () => {
    expect(await refusal('/nonexistent/python3')).toBe("--python '/nonexistent/python3' does not exist (not found on PATH)");
    expect(await refusal('no-such-python-9')).toMatch(/does not exist/);
    const plain = join(makeTempDir('repgen-check-python-'), 'python');
    writeFileSync(plain, 'print(1)\n');
    expect(await refusal(plain)).toMatch(/is not executable$/);
  });

  it('runs isolated, from /, without the environment: no secret reaches it, a PYTHONPATH sitecustomize is not imported', async () => {
    const dir = makeTempDir('repgen-check-python-env-');
    writeFileSync(join(dir, 'sitecustomize.py'), `open(${JSON.stringify(join(dir, 'IMPORTED'))}, "w").write("1")\n`);
    const seen = join(dir, 'env.txt');
    const spy = script(`env > ${seen}; pwd >> ${seen}; exec /usr/bin/python3 "$@"`);
    process.env.REPGEN_TEST_SECRET_TOKEN = 'ghs_secret';
    process.env.PYTHONPATH = dir;
    try {
      expect((await checkPython(spy, { setting: '--python' }))[0]).toBe(3);
    } finally {
      delete process.env.REPGEN_TEST_SECRET_TOKEN;
      delete process.env.PYTHONPATH;
    }
    const text = readFileSync(seen, 'utf8');
    expect(text).not.toContain('ghs_secret');
    expect(text).not.toContain('PYTHONPATH');
    expect(text.trim().split('\n').at(-1)).toBe('/');
    expect(existsSync(join(dir, 'IMPORTED'))).toBe(false);
  });
});
