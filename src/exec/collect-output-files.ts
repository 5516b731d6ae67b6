import { lstat, readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { OutputFile } from './types.js';

export interface CollectOptions {
  /** Files up to this size that decode as UTF-8 text (no NUL) carry their content. */
  inlineBytes: number;
  /** Listing stops after this many files. */
  maxFiles: number;
}

/**
 * Lists the files a script left under its output dir. Symlinks are never followed: the script chose their
 * targets, and reading them from outside the sandbox would hand it the host's files.
 */
export async function collectOutputFiles(outDir: string, options: CollectOptions): Promise<{ files: OutputFile[]; notes: string[] }> {
  const files: OutputFile[] = [];
  const notes: string[] = [];
  let skippedLinks = 0;
  let overflow = 0;
  const decoder = new TextDecoder('utf-8', { fatal: true });

  async function walk(dir: string, depth: number): Promise<void> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const full = join(dir, entry.name);
      if (entry.isSymbolicLink()) {
        skippedLinks++;
        continue;
      }
      if (entry.isDirectory()) {
        if (depth < 16) await walk(full, depth + 1);
        continue;
      }
      if (!entry.isFile()) continue;
      if (files.length >= options.maxFiles) {
        overflow++;
        continue;
      }
      const st = await lstat(full);
      const file: OutputFile = { path: relative(outDir, full).split(sep).join('/'), size: st.size };
      if (st.size <= options.inlineBytes) {
        const bytes = await readFile(full);
        if (!bytes.includes(0)) {
          try {
            file.content = decoder.decode(bytes);
          } catch {
            // binary: size only
          }
        }
      }
      files.push(file);
    }
  }

  await walk(outDir, 0);
  if (skippedLinks > 0) notes.push(`${skippedLinks} symlink(s) under $REPGEN_OUT not followed`);
  if (overflow > 0) notes.push(`${overflow} output file(s) beyond the first ${options.maxFiles} not listed`);
  return { files, notes };
}
