import { constants } from 'node:fs';
import { lstat, open, opendir } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { holdDir, holdSubdir, pathIn, UntrustedPathError, type HeldDir } from '../host/untrusted-tree.js';
import type { OutputFile } from './types.js';

export interface CollectOptions {
  /** Files up to this size that decode as UTF-8 text (no NUL) carry their content. */
  inlineBytes: number;
  /** Listing stops after this many files. */
  maxFiles: number;
  /** Directory entries looked at in all, files or not, before the walk gives up. @defaultValue 20 × maxFiles */
  maxEntries?: number;
}

/** Folders deeper than this under $REPGEN_OUT are not entered. */
const MAX_DEPTH = 16;

/**
 * Lists the files a script left under its output dir. No link is ever followed, the output dir itself included:
 * the script chose their targets, and reading them from outside the sandbox would hand it the host's files. Every
 * folder is opened with O_NOFOLLOW and what is in it is reached through that descriptor (src/host/
 * untrusted-tree.ts); each file is opened with O_NOFOLLOW and measured on the open descriptor, so nothing swapped
 * in between the listing and the read is read either, at any depth. `outDir`: a path whose parent is the host's
 * own, or a name in a folder the host holds (a warm run's folder, in a work dir the sandbox writes). A hostile
 * tree (millions of entries, names that are not UTF-8, FIFOs, sockets) costs a bounded walk and a note, and never
 * an exception.
 */
export async function collectOutputFiles(
  outDir: string | { dir: HeldDir; name: string },
  options: CollectOptions,
): Promise<{ files: OutputFile[]; notes: string[] }> {
  const files: OutputFile[] = [];
  const notes: string[] = [];
  const maxEntries = options.maxEntries ?? options.maxFiles * 20;
  let skippedLinks = 0;
  let skippedOther = 0;
  let overflow = 0;
  let entriesSeen = 0;
  let stoppedEarly = false;
  const decoder = new TextDecoder('utf-8', { fatal: true });

  const where = typeof outDir === 'string' ? null : outDir;
  let parent: HeldDir;
  try {
    parent = where ? where.dir : await holdDir(dirname(outDir as string));
  } catch {
    return { files, notes: ['$REPGEN_OUT is gone: the script removed it'] };
  }
  const name = where ? where.name : basename(outDir as string);
  let top: HeldDir;
  try {
    top = await holdSubdir(parent, name);
  } catch (err) {
    const st = await lstat(pathIn(parent, name)).catch(() => null);
    if (!where) await parent.close();
    if (!st || !(err instanceof UntrustedPathError)) return { files, notes: ['$REPGEN_OUT is gone: the script removed it'] };
    return {
      files,
      notes: [`$REPGEN_OUT was replaced by ${st.isSymbolicLink() ? 'a symlink' : 'something not a folder'}: nothing collected`],
    };
  }
  if (!where) await parent.close();

  async function readOne(dir: HeldDir, name: string, rel: string): Promise<void> {
    let handle;
    try {
      handle = await open(pathIn(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ELOOP') skippedLinks++;
      else skippedOther++;
      return;
    }
    try {
      const st = await handle.stat();
      if (!st.isFile()) {
        skippedOther++;
        return;
      }
      const file: OutputFile = { path: rel, size: st.size };
      if (st.size <= options.inlineBytes) {
        const bytes = Buffer.alloc(st.size);
        const { bytesRead } = await handle.read(bytes, 0, st.size, 0);
        const kept = bytes.subarray(0, bytesRead);
        if (!kept.includes(0)) {
          try {
            file.content = decoder.decode(kept);
          } catch {
            // binary: size only
          }
        }
      }
      files.push(file);
    } catch {
      skippedOther++;
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  async function walk(dir: HeldDir, rel: string, depth: number): Promise<void> {
    let handle;
    try {
      handle = await opendir(`/proc/self/fd/${dir.handle.fd}`, { bufferSize: 64 });
    } catch {
      skippedOther++;
      return;
    }
    // Sorted listing for stable results, but read in bounded batches: a folder of a million names stops at the cap.
    const names: Array<{ name: string; kind: 'link' | 'dir' | 'file' | 'other' }> = [];
    try {
      for await (const entry of handle) {
        if (++entriesSeen > maxEntries) {
          stoppedEarly = true;
          break;
        }
        if (entry.name.includes('\uFFFD')) {
          // Not UTF-8: the name cannot be opened again through a JS string.
          skippedOther++;
          continue;
        }
        const kind = entry.isSymbolicLink() ? 'link' : entry.isDirectory() ? 'dir' : entry.isFile() ? 'file' : 'other';
        names.push({ name: entry.name, kind });
      }
    } catch {
      skippedOther++;
    }
    names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const { name, kind } of names) {
      const childRel = rel ? `${rel}/${name}` : name;
      if (kind === 'link') {
        skippedLinks++;
      } else if (kind === 'dir') {
        if (depth < MAX_DEPTH && !stoppedEarly) {
          let sub: HeldDir;
          try {
            sub = await holdSubdir(dir, name);
          } catch (err) {
            if (err instanceof UntrustedPathError) skippedLinks++;
            else skippedOther++;
            continue;
          }
          try {
            await walk(sub, childRel, depth + 1);
          } finally {
            await sub.close();
          }
        }
      } else if (kind === 'file') {
        if (files.length >= options.maxFiles) overflow++;
        else await readOne(dir, name, childRel);
      } else {
        skippedOther++;
      }
    }
  }

  try {
    await walk(top, '', 0);
  } finally {
    await top.close();
  }
  if (skippedLinks > 0) notes.push(`${skippedLinks} symlink(s) under $REPGEN_OUT not followed`);
  if (skippedOther > 0)
    notes.push(
      `${skippedOther} entr${skippedOther === 1 ? 'y' : 'ies'} under $REPGEN_OUT skipped (not a regular file, unreadable or a name that is not UTF-8)`,
    );
  if (overflow > 0) notes.push(`${overflow} output file(s) beyond the first ${options.maxFiles} not listed`);
  if (stoppedEarly) notes.push(`$REPGEN_OUT holds more than ${maxEntries} entries: the listing stopped there`);
  return { files, notes };
}
