import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { lstat, open, stat } from 'node:fs/promises';
import { RepgenError } from '../errors.js';

/**
 * Reading a file someone named (an issue, a script, a key, an event payload, a file of a checkout) with the whole of
 * it trusted: `/dev/zero` grew RepGen to 5 GB in seconds, a FIFO without a writer blocked forever, and `st_size`
 * says 0 for both. Here only a regular file is read, at most `maxBytes` of it, and every other case is a
 * ReadBoundedError whose message names the file (`what`) and the limit.
 *
 * The path is stat'ed first, so a device is never even opened (opening some has effects of its own); the open uses
 * O_NONBLOCK, so a file swapped for a FIFO in between cannot block it, and the opened descriptor is checked again.
 */

export type ReadBoundedReason = 'missing' | 'not_a_file' | 'too_big' | 'unreadable';

export class ReadBoundedError extends RepgenError {
  override name = 'ReadBoundedError';
  constructor(
    message: string,
    readonly reason: ReadBoundedReason,
  ) {
    super(message);
  }
}

export interface ReadBoundedOptions {
  /** The most bytes read; a longer file is a `too_big` error, never read past this. */
  maxBytes: number;
  /** How the file is named in messages, e.g. `--issue 'x.md'`. @defaultValue `'<path>'` */
  what?: string;
  /** Where the limit is set, added to the `too_big` message, e.g. `REPGEN_MAX_ISSUE_BYTES`. */
  limitName?: string;
  /**
   * Refuse a symbolic link (the path's last part) as `not_a_file`, for a file a person names: `--issue` linked to
   * `/etc/shadow` was followed and its lines landed in evidence.json. Checked before opening and by the open itself
   * (O_NOFOLLOW). @defaultValue false
   */
  noFollow?: boolean;
}

// O_NOCTTY: a terminal named as a file never becomes our controlling terminal.
const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
const CHUNK = 64 * 1024;

/** What a non-regular file is, in words. */
function kindOf(st: Stats): string {
  if (st.isSymbolicLink()) return 'a symbolic link (name the file itself)';
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

function notAFile(what: string, st: Stats): ReadBoundedError {
  return new ReadBoundedError(`${what} is ${kindOf(st)}, not a regular file`, 'not_a_file');
}

/** `999 bytes`, `1.0 MB`: exact below a megabyte, one decimal above. */
function bytes(n: number): string {
  return n < 1e6 ? `${n} bytes` : `${(n / 1e6).toFixed(1)} MB`;
}

function tooBig(what: string, o: ReadBoundedOptions, size: number | null): ReadBoundedError {
  const where = o.limitName ? ` (${o.limitName})` : '';
  const is = size === null ? `is longer than ${bytes(o.maxBytes)}` : `is ${bytes(size)}`;
  return new ReadBoundedError(`${what} ${is}; the limit is ${bytes(o.maxBytes)}${where}`, 'too_big');
}

function failed(what: string, err: unknown): ReadBoundedError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new ReadBoundedError(`${what} does not exist`, 'missing');
  // O_NOFOLLOW on a link swapped in after the lstat.
  if (code === 'ELOOP') return new ReadBoundedError(`${what} is a symbolic link (name the file itself), not a regular file`, 'not_a_file');
  const why =
    code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'ENOTDIR' ? 'a parent is not a folder' : (code ?? String(err));
  return new ReadBoundedError(`cannot read ${what}: ${why}`, 'unreadable');
}

/** The checks made before opening: a regular file no longer than the limit. */
function checkBefore(st: Stats, what: string, o: ReadBoundedOptions): void {
  if (!st.isFile()) throw notAFile(what, st);
  if (st.size > o.maxBytes) throw tooBig(what, o, st.size);
}

/** The checks made on the opened descriptor: still a regular file, the same one. */
function checkOpened(before: Stats, now: Stats, what: string, o: ReadBoundedOptions): void {
  if (!now.isFile()) throw notAFile(what, now);
  if (now.dev !== before.dev || now.ino !== before.ino)
    throw new ReadBoundedError(`${what} changed while it was being opened`, 'unreadable');
  if (now.size > o.maxBytes) throw tooBig(what, o, now.size);
}

/** Reads a regular file, at most `maxBytes` of it (a file that grows past the limit while read is `too_big`). */
export async function readBounded(path: string, o: ReadBoundedOptions): Promise<Buffer> {
  const what = o.what ?? `'${path}'`;
  let fh;
  try {
    const before = o.noFollow ? await lstat(path) : await stat(path);
    checkBefore(before, what, o);
    fh = await open(path, o.noFollow ? FLAGS | constants.O_NOFOLLOW : FLAGS);
    checkOpened(before, await fh.stat(), what, o);
  } catch (err) {
    await fh?.close();
    throw err instanceof ReadBoundedError ? err : failed(what, err);
  }
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.alloc(Math.min(CHUNK, o.maxBytes + 1 - total));
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      chunks.push(buf.subarray(0, bytesRead));
      total += bytesRead;
      if (total > o.maxBytes) throw tooBig(what, o, null);
    }
    return Buffer.concat(chunks, total);
  } catch (err) {
    throw err instanceof ReadBoundedError ? err : failed(what, err);
  } finally {
    await fh.close();
  }
}

/** readBounded for synchronous callers (settings read at startup). */
export function readBoundedSync(path: string, o: ReadBoundedOptions): Buffer {
  const what = o.what ?? `'${path}'`;
  let fd: number | null = null;
  try {
    const before = o.noFollow ? lstatSync(path) : statSync(path);
    checkBefore(before, what, o);
    fd = openSync(path, o.noFollow ? FLAGS | constants.O_NOFOLLOW : FLAGS);
    checkOpened(before, fstatSync(fd), what, o);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.alloc(Math.min(CHUNK, o.maxBytes + 1 - total));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
      if (total > o.maxBytes) throw tooBig(what, o, null);
    }
    return Buffer.concat(chunks, total);
  } catch (err) {
    throw err instanceof ReadBoundedError ? err : failed(what, err);
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
