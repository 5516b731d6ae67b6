import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { interpreterFingerprint } from '../../../src/exec/local/fingerprint.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

describe('interpreterFingerprint (the local executor environment key)', () => {
  it('is stable, and moves when a folder on sys.path gains a package or a read-only path changes', async () => {
    // A copy of the interpreter in a fake prefix: its site folder (lib/pythonX.Y/site-packages) is ours to change.
    const prefix = makeTempDir('repgen-fp-');
    await mkdir(join(prefix, 'bin'));
    const python = join(prefix, 'bin', 'python3');
    await copyFile('/usr/bin/python3', python);
    const a = await interpreterFingerprint('/usr/bin/python3', []);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(await interpreterFingerprint('/usr/bin/python3', [])).toBe(a);
    const extra = makeTempDir('repgen-fp-ro-');
    const withExtra = await interpreterFingerprint('/usr/bin/python3', [extra]);
    expect(withExtra).not.toBe(a);
    await new Promise((r) => setTimeout(r, 20));
    await writeFile(join(extra, 'newpkg.py'), 'x = 1\n');
    expect(await interpreterFingerprint('/usr/bin/python3', [extra])).not.toBe(withExtra);
    // Another binary (same bytes, other path) is another environment.
    const copied = await interpreterFingerprint(python, []);
    expect(copied === null || copied !== a).toBe(true);
  });

  it('null when the interpreter will not say its sys.path', async () => {
    expect(await interpreterFingerprint('/bin/false', [])).toBeNull();
  });
});
