import { closeSync, constants, openSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import type { Chunk } from '../chunk-types.js';

/** Closes a spool's descriptor once nothing can read through it any more (its chunks are gone), unless closed before. */
const unclosed = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd);
  } catch {
    // Already closed.
  }
});

/**
 * A cold build's chunk texts, written to a temporary file beside the cache entry's texts.txt as the shards come
 * in (in chunk order), so that the main thread does not hold every chunk's text (80 MB on a 5,600-file tree)
 * until the save. Each spooled chunk's `text` becomes a getter that reads its bytes back on first use, as the
 * chunks of a reloaded index do; `commit` renames the file into place as texts.txt, whose bytes are the ones
 * the save wrote from the texts before.
 */
export class TextSpool {
  /** Byte offset of chunk id's text; starts[count] is the file's size. */
  private starts = new Float64Array(4096);
  private count = 0;
  private fd: number | null;
  private readonly descriptor: PropertyDescriptor;

  private constructor(
    readonly tmpPath: string,
    fd: number,
  ) {
    this.fd = fd;
    const read = (id: number): string => this.read(id);
    // One getter for every spooled chunk, finding its bytes through `this.id`; the first read replaces it with
    // the value, so the chunk then spreads and compares as plain data.
    this.descriptor = {
      configurable: true,
      enumerable: true,
      get(this: Chunk): string {
        const value = read(this.id);
        Object.defineProperty(this, 'text', { value, enumerable: true, writable: true, configurable: true });
        return value;
      },
    };
  }

  /** Creates the temporary file next to `finalPath` (never through an existing name: O_EXCL, no link followed). */
  static open(finalPath: string): TextSpool {
    const tmpPath = `${finalPath}.${process.pid}.${Date.now()}.spool`;
    const fd = openSync(tmpPath, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    const spool = new TextSpool(tmpPath, fd);
    unclosed.register(spool, fd, spool);
    return spool;
  }

  /** Chunks spooled so far. */
  get size(): number {
    return this.count;
  }

  /**
   * Writes the texts of the next chunks (their ids must follow the chunks appended before, from 0) and turns
   * each chunk's `text` into a read from the file.
   */
  append(chunks: readonly Chunk[]): void {
    const fd = this.openFd();
    if (!chunks.length) return;
    if (this.count + chunks.length + 1 > this.starts.length) {
      const bigger = new Float64Array(Math.max(this.starts.length * 2, this.count + chunks.length + 1));
      bigger.set(this.starts);
      this.starts = bigger;
    }
    const texts: string[] = [];
    for (const chunk of chunks) {
      if (chunk.id !== this.count) throw new Error(`text spool: chunk ${chunk.id} came where ${this.count} was due`);
      const text = chunk.text;
      texts.push(text);
      this.starts[this.count + 1] = this.starts[this.count]! + Buffer.byteLength(text);
      this.count++;
    }
    const bytes = Buffer.from(texts.join(''));
    const at = this.starts[this.count - chunks.length]!;
    for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done, bytes.length - done, at + done);
    for (const chunk of chunks) Object.defineProperty(chunk, 'text', this.descriptor);
  }

  /** Each spooled chunk's text length in UTF-8 bytes, by chunk id (meta.bin's `chunk.textBytes`). */
  textBytes(): Int32Array {
    const out = new Int32Array(this.count);
    for (let id = 0; id < this.count; id++) out[id] = this.starts[id + 1]! - this.starts[id]!;
    return out;
  }

  /**
   * Renames the file into place as `finalPath` once every chunk is spooled. The descriptor stays open: chunks
   * not yet read still read through it, whatever later happens to the name.
   */
  commit(finalPath: string): void {
    this.openFd();
    renameSync(this.tmpPath, finalPath);
  }

  /** Closes the file and removes it when it was never committed (a failed build). */
  discard(): void {
    this.close();
    try {
      unlinkSync(this.tmpPath);
    } catch {
      // Committed (renamed away) or already gone.
    }
  }

  /** Closes the descriptor; chunks not read by then can no longer be. */
  close(): void {
    if (this.fd === null) return;
    unclosed.unregister(this);
    closeSync(this.fd);
    this.fd = null;
  }

  private read(id: number): string {
    const start = this.starts[id]!;
    const buf = Buffer.allocUnsafe(this.starts[id + 1]! - start);
    const fd = this.openFd();
    for (let got = 0; got < buf.length;) {
      const n = readSync(fd, buf, got, buf.length - got, start + got);
      if (n === 0) throw new Error(`${this.tmpPath} ended early`);
      got += n;
    }
    return buf.toString('utf8');
  }

  private openFd(): number {
    if (this.fd === null) throw new Error('text spool is closed');
    return this.fd;
  }
}
