import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPatchedCopies } from '../../../../src/pipeline/stages/candidate-fix/scratch-copy.js';
import { makeTempDir } from '../../../helpers/temp-dir.js';

/** A checkout, and a file outside it that a hostile checkout links to. */
function checkout(): { root: string; outside: string } {
  const root = makeTempDir('repgen-scratch-co-');
  mkdirSync(join(root, 'toylib'));
  writeFileSync(join(root, 'toylib', 'blocks.py'), 'x = 1\n');
  mkdirSync(join(root, '.git'));
  writeFileSync(join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  const outsideDir = makeTempDir('repgen-scratch-outside-');
  const outside = join(outsideDir, 'secret.py');
  writeFileSync(outside, 'SECRET = 1\n');
  return { root, outside };
}

const replaceAll = (originals: Map<string, string | null>) => ({
  ok: true as const,
  files: new Map([...originals.keys()].map((p) => [p, `patched = ${JSON.stringify(originals.get(p))}\n`])),
});

describe('the scratch copy a candidate fix is applied to', () => {
  it('patches a copy, never the checkout; the copy keeps the mount path, leaves .git out, and goes with dispose', async () => {
    const { root } = checkout();
    const copies = createPatchedCopies({ root: makeTempDir('repgen-scratch-root-') });
    const copy = await copies.make({ hostPath: root, mountPath: '/workspace' }, ['toylib/blocks.py', 'toylib/new.py'], replaceAll);
    expect(copy.ok).toBe(true);
    if (!copy.ok) return;
    expect(copy.workspace.mountPath).toBe('/workspace');
    expect(copy.workspace.hostPath).not.toBe(root);
    expect(readFileSync(join(copy.workspace.hostPath, 'toylib', 'blocks.py'), 'utf8')).toBe('patched = "x = 1\\n"\n');
    expect(readFileSync(join(copy.workspace.hostPath, 'toylib', 'new.py'), 'utf8')).toBe('patched = null\n');
    expect(existsSync(join(copy.workspace.hostPath, '.git'))).toBe(false);
    expect(readFileSync(join(root, 'toylib', 'blocks.py'), 'utf8')).toBe('x = 1\n');
    await copy.dispose();
    expect(existsSync(copy.workspace.hostPath)).toBe(false);
  });

  it('hostile: a patched file that is a link out of the checkout is refused, never read nor written through', async () => {
    const { root, outside } = checkout();
    symlinkSync(outside, join(root, 'toylib', 'linked.py'));
    const copies = createPatchedCopies({ root: makeTempDir('repgen-scratch-root-') });
    const copy = await copies.make({ hostPath: root }, ['toylib/linked.py'], replaceAll);
    await copy.dispose();
    expect(copy).toMatchObject({ ok: false, why: expect.stringMatching(/toylib\/linked\.py is a link in the checkout: not followed/) });
    expect(readFileSync(outside, 'utf8')).toBe('SECRET = 1\n');
    expect((await copies.read({ hostPath: root }, ['toylib/linked.py', 'toylib/blocks.py'])).get('toylib/linked.py')).toBeNull();
  });

  it('hostile: a folder that is a link out of the checkout is refused; a new file is never made through it', async () => {
    const { root, outside } = checkout();
    symlinkSync(join(outside, '..'), join(root, 'escape'));
    const copies = createPatchedCopies({ root: makeTempDir('repgen-scratch-root-') });
    for (const path of ['escape/secret.py', 'escape/planted.py']) {
      const copy = await copies.make({ hostPath: root }, [path], replaceAll);
      await copy.dispose();
      expect(copy.ok, path).toBe(false);
    }
    expect(readFileSync(outside, 'utf8')).toBe('SECRET = 1\n');
    expect(existsSync(join(outside, '..', 'planted.py'))).toBe(false);
  });

  it('a patch that does not apply leaves nothing behind', async () => {
    const { root } = checkout();
    const where = makeTempDir('repgen-scratch-root-');
    const copies = createPatchedCopies({ root: where });
    const copy = await copies.make({ hostPath: root }, ['toylib/blocks.py'], () => ({ ok: false, why: 'hunk 1 does not match' }));
    expect(copy).toMatchObject({ ok: false, why: 'hunk 1 does not match' });
    await copy.dispose();
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(where)).toEqual([]);
  });
});
