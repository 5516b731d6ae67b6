import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from './temp-dir.js';

/** Files a user may name where RepGen expects a small text file; none may be read whole or block a read. */
export interface HostileFiles {
  dir: string;
  /** A named pipe no one ever writes to. */
  fifo: string;
  /** A 64 GiB sparse file (nothing on disk; st_size tells the truth). */
  sparse: string;
  /** A symbolic link to /dev/zero. */
  zeroLink: string;
  /** A folder with a `.md` name. */
  folder: string;
}

export function makeHostileFiles(prefix = 'repgen-hostile-files-'): HostileFiles {
  const dir = makeTempDir(prefix);
  const fifo = join(dir, 'issue.fifo');
  execFileSync('mkfifo', [fifo]);
  const sparse = join(dir, 'sparse.md');
  writeFileSync(sparse, '');
  truncateSync(sparse, 64 * 2 ** 30);
  const zeroLink = join(dir, 'zero.md');
  symlinkSync('/dev/zero', zeroLink);
  const folder = join(dir, 'folder.md');
  mkdirSync(folder);
  return { dir, fifo, sparse, zeroLink, folder };
}
