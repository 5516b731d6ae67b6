// The scratch copy's adapter (issue 41 item 2): a candidate fix is applied to a copy of the checkout, never to the
// checkout itself, and the copy is handed to the sandbox as the checkout is (a Workspace: host path, same mount path).
// The host only copies and writes text here; it never runs anything of the copy. A checkout may hold links: the copy
// keeps them as links, and every read or write of a patched file goes through folders held open without following
// one (src/host/untrusted-tree.ts), so a link in the path or at the file itself is refused, never followed.
import { constants } from 'node:fs';
import { chmod, cp, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Workspace } from '../../../exec/types.js';
import { holdDir, holdSubdir, pathIn, removeEntry, UntrustedPathError, writeNewFile, type HeldDir } from '../../../host/untrusted-tree.js';

/** The port: a patched copy of the checkout and the text of its files. */
export interface PatchedCopies {
  /** The text of files of the checkout (for the prompt); null for one that is missing, a link, or too big. */
  read(workspace: Workspace, paths: readonly string[]): Promise<Map<string, string | null>>;
  /**
   * A copy of `workspace`'s checkout with `files` applied by `patch` (the original text, or null when the file is
   * absent, in; the new text or a refusal out). Throws UntrustedPathError when a path goes through a link.
   */
  make(
    workspace: Workspace,
    paths: readonly string[],
    patch: (originals: Map<string, string | null>) => { ok: true; files: Map<string, string> } | { ok: false; why: string },
  ): Promise<PatchedCopy>;
}

export type PatchedCopy =
  { ok: true; workspace: Workspace; dispose(): Promise<void> } | { ok: false; why: string; dispose(): Promise<void> };

/** Files a copy leaves out: version control state says nothing about the code. */
const SKIPPED = new Set(['.git', '.hg', '.svn']);
/** The largest file a patch may change. */
const MAX_FILE_BYTES = 2_000_000;

/** Copies in `root` (made with mkdtemp, removed by dispose). @defaultValue os.tmpdir() */
export function createPatchedCopies(options: { root?: string } = {}): PatchedCopies {
  return {
    async read(workspace, paths) {
      const out = new Map<string, string | null>();
      const root = await holdDir(workspace.hostPath);
      try {
        for (const p of paths) out.set(p, await readHeld(root, p).catch(() => null));
      } finally {
        await root.close();
      }
      return out;
    },
    async make(workspace, paths, patch) {
      const dir = await mkdtemp(join(options.root ?? tmpdir(), 'repgen-candidate-'));
      const dispose = () => rm(dir, { recursive: true, force: true }).then(() => undefined);
      try {
        // The sandbox runs as another uid: the copy must be searchable and readable, as the checkout is.
        await chmod(dir, 0o755);
        const copy = join(dir, 'checkout');
        await cp(workspace.hostPath, copy, { recursive: true, verbatimSymlinks: true, filter: (src) => !SKIPPED.has(basename(src)) });
        const root = await holdDir(copy);
        try {
          const originals = new Map<string, string | null>();
          for (const p of paths) originals.set(p, await readHeld(root, p));
          const patched = patch(originals);
          if (!patched.ok) return { ok: false, why: patched.why, dispose };
          for (const [p, text] of patched.files) await replaceHeld(root, p, text);
        } finally {
          await root.close();
        }
        return { ok: true, workspace: { ...workspace, hostPath: copy }, dispose };
      } catch (err) {
        if (err instanceof UntrustedPathError) return { ok: false, why: err.message, dispose };
        await dispose();
        throw err;
      }
    },
  };
}

/** Walks `rel`'s folders from `root`, each held without following a link; calls `use` with the last one and the name. */
async function inHeld<T>(root: HeldDir, rel: string, use: (dir: HeldDir, name: string) => Promise<T>): Promise<T> {
  const parts = rel.split('/');
  const name = parts.pop()!;
  let dir = root;
  try {
    for (const part of parts) {
      const next = await holdSubdir(dir, part).catch((err: unknown) => {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      });
      if (dir !== root) await dir.close();
      if (!next) return await use(dir === root ? root : dir, '\0missing');
      dir = next;
    }
    return await use(dir, name);
  } finally {
    if (dir !== root) await dir.close();
  }
}

/** The text of `rel` in the copy, or null when it is not there; a link or a non-file is refused. */
function readHeld(root: HeldDir, rel: string): Promise<string | null> {
  return inHeld(root, rel, async (dir, name) => {
    if (name === '\0missing') return null;
    let handle;
    try {
      handle = await open(pathIn(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return null;
      if (code === 'ELOOP') throw new UntrustedPathError(`${rel} is a link in the checkout: not followed`);
      throw err;
    }
    try {
      const st = await handle.stat();
      if (!st.isFile()) throw new UntrustedPathError(`${rel} is not a regular file in the checkout`);
      if (st.size > MAX_FILE_BYTES) throw new UntrustedPathError(`${rel} is larger than ${MAX_FILE_BYTES} bytes`);
      return await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  });
}

/** Replaces `rel` in the copy with `text`: the old entry (a file, or a link someone planted) is removed, a new file made. */
async function replaceHeld(root: HeldDir, rel: string, text: string): Promise<void> {
  await inHeld(root, rel, async (dir, name) => {
    if (name !== '\0missing') await removeEntry(dir, name);
  });
  await writeNewFile(root, rel, text);
}
