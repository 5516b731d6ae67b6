import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  chownDir,
  chownTree,
  holdDir,
  holdSubdir,
  makeFreshDir,
  removeEntry,
  UntrustedPathError,
  writeNewFile,
} from '../../src/host/untrusted-tree.js';

const root = mkdtempSync(join(tmpdir(), 'repgen-untrusted-tree-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Another uid to give files to: the sandbox's when we are root; as another user we can only give them to ourselves. */
const isRoot = process.geteuid?.() === 0;
const other = isRoot ? { uid: 65534, gid: 65534 } : { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };

/** A file outside the tree that a planted link points at: the host must neither write it nor change its owner. */
function victim(): { path: string; uid: number; content: string } {
  const dir = mkdtempSync(join(root, 'victim-'));
  const path = join(dir, 'key');
  writeFileSync(path, 'secret\n', { mode: 0o600 });
  return { path, uid: statSync(path).uid, content: 'secret\n' };
}

function untouched(v: { path: string; uid: number; content: string }): void {
  expect(readFileSync(v.path, 'utf8')).toBe(v.content);
  expect(statSync(v.path).uid).toBe(v.uid);
  expect(statSync(v.path).mode & 0o777).toBe(0o600);
}

describe('the host never follows a link it did not make (src/host/untrusted-tree.ts)', () => {
  it('writeNewFile refuses a planted link as the file and as a folder on the way; nothing outside is written', async () => {
    const v = victim();
    const tree = mkdtempSync(join(root, 'tree-'));
    symlinkSync(v.path, join(tree, 'repro.py'));
    symlinkSync(join(v.path, '..'), join(tree, 'pkg'));
    const dir = await holdDir(tree);
    try {
      await expect(writeNewFile(dir, 'repro.py', 'print(1)\n')).rejects.toMatchObject({ code: 'EEXIST' });
      await expect(writeNewFile(dir, 'pkg/key', 'print(1)\n')).rejects.toBeInstanceOf(UntrustedPathError);
      await expect(writeNewFile(dir, 'pkg/new.py', 'print(1)\n')).rejects.toBeInstanceOf(UntrustedPathError);
      await writeNewFile(dir, 'a/b/c.py', 'ok\n');
    } finally {
      await dir.close();
    }
    untouched(v);
    expect(existsSync(join(v.path, '..', 'new.py'))).toBe(false);
    expect(readFileSync(join(tree, 'a/b/c.py'), 'utf8')).toBe('ok\n');
  });

  it('makeFreshDir refuses a name already there (a folder, a link); holdDir and holdSubdir refuse a link', async () => {
    const v = victim();
    const tree = mkdtempSync(join(root, 'fresh-'));
    mkdirSync(join(tree, 'run-1'));
    symlinkSync(join(v.path, '..'), join(tree, 'run-2'));
    const dir = await holdDir(tree);
    try {
      await expect(makeFreshDir(dir, 'run-1')).rejects.toMatchObject({ code: 'EEXIST' });
      await expect(makeFreshDir(dir, 'run-2')).rejects.toMatchObject({ code: 'EEXIST' });
      await expect(holdSubdir(dir, 'run-2')).rejects.toBeInstanceOf(UntrustedPathError);
      await expect(holdSubdir(dir, '..')).rejects.toBeInstanceOf(UntrustedPathError);
      await (await makeFreshDir(dir, 'run-3')).close();
    } finally {
      await dir.close();
    }
    await expect(holdDir(join(tree, 'run-2'))).rejects.toBeInstanceOf(UntrustedPathError);
    await expect(chownDir(join(tree, 'run-2'), other.uid, other.gid)).rejects.toBeInstanceOf(UntrustedPathError);
    untouched(v);
  });

  it('chownTree gives the tree away but never a link target, a hard-linked file or what a linked folder holds', async () => {
    const v = victim();
    const tree = mkdtempSync(join(root, 'chown-'));
    mkdirSync(join(tree, 'pkg'));
    writeFileSync(join(tree, 'pkg', 'mod.py'), 'x = 1\n');
    symlinkSync(v.path, join(tree, 'pkg', 'l1'));
    symlinkSync(join(v.path, '..'), join(tree, 'pkg', 'ldir'));
    linkSync(v.path, join(tree, 'hard'));
    const dir = await holdDir(tree);
    try {
      await chownTree(dir, other.uid, other.gid);
    } finally {
      await dir.close();
    }
    untouched(v);
    expect(statSync(join(v.path, '..')).uid).toBe(v.uid);
    expect(statSync(join(tree, 'pkg', 'mod.py')).uid).toBe(other.uid);
    expect(lstatSync(join(tree, 'pkg', 'l1')).uid).toBe(other.uid);
    expect(statSync(tree).uid).toBe(other.uid);
  });

  it('removeEntry removes a tree with links and closed folders in it, and nothing a link points at', async () => {
    const v = victim();
    const tree = mkdtempSync(join(root, 'rm-'));
    mkdirSync(join(tree, 'work', 'closed', 'deep'), { recursive: true });
    writeFileSync(join(tree, 'work', 'closed', 'deep', 'f'), 'x');
    symlinkSync(join(v.path, '..'), join(tree, 'work', 'ldir'));
    symlinkSync(v.path, join(tree, 'work', 'closed', 'l1'));
    chmodSync(join(tree, 'work', 'closed'), 0o000);
    const dir = await holdDir(tree);
    try {
      await removeEntry(dir, 'work');
      await removeEntry(dir, 'missing');
    } finally {
      await dir.close();
    }
    expect(existsSync(join(tree, 'work'))).toBe(false);
    untouched(v);
  });
});
