/**
 * Keeps a bounded amount of one output stream while counting all of it. When the stream passes the cap, the
 * first half and the last half are kept with a marker between them: the traceback that explains a crash comes
 * at the end, after whatever flood of output came before it, so keeping only the head would lose it.
 */
export interface OutputCapture {
  push(chunk: Buffer): void;
  /** Bytes seen in all, kept or not. */
  readonly bytes: number;
  readonly truncated: boolean;
  /** What was kept, as text; a marker says how many bytes were left out. */
  text(): string;
}

/** The marker put where bytes were dropped. */
export function omittedMarker(omitted: number): string {
  return `\n… [repgen: ${omitted} bytes of output omitted] …\n`;
}

export function createOutputCapture(capBytes: number): OutputCapture {
  const headCap = Math.floor(capBytes / 2);
  const tailCap = capBytes - headCap;
  const head: Buffer[] = [];
  let headLen = 0;
  // The tail is a queue of chunks trimmed from the front; it never holds much more than tailCap + one chunk.
  const tail: Buffer[] = [];
  let tailLen = 0;
  let total = 0;

  function push(chunk: Buffer): void {
    total += chunk.length;
    let rest = chunk;
    if (headLen < headCap) {
      const take = Math.min(headCap - headLen, rest.length);
      head.push(rest.subarray(0, take));
      headLen += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    // Copy: the chunk may be a slice of a large pooled buffer we must not pin.
    tail.push(Buffer.from(rest));
    tailLen += rest.length;
    while (tail.length > 1 && tailLen - (tail[0]?.length ?? 0) >= tailCap) {
      tailLen -= tail.shift()?.length ?? 0;
    }
  }

  function text(): string {
    const headBuf = Buffer.concat(head, headLen);
    let tailBuf = Buffer.concat(tail, tailLen);
    if (total <= capBytes) return Buffer.concat([headBuf, tailBuf]).toString('utf8');
    tailBuf = tailBuf.subarray(tailBuf.length - tailCap);
    const headEnd = utf8Boundary(headBuf, headBuf.length);
    const tailStart = skipContinuation(tailBuf);
    const kept = headEnd + (tailBuf.length - tailStart);
    return headBuf.subarray(0, headEnd).toString('utf8') + omittedMarker(total - kept) + tailBuf.subarray(tailStart).toString('utf8');
  }

  return {
    push,
    get bytes() {
      return total;
    },
    get truncated() {
      return total > capBytes;
    },
    text,
  };
}

/** Largest index ≤ end that does not cut a UTF-8 sequence in two. */
function utf8Boundary(buf: Buffer, end: number): number {
  let i = end;
  // Walk back over continuation bytes to the lead byte, then keep the sequence only if it is complete.
  while (i > 0 && i > end - 4 && ((buf[i - 1] ?? 0) & 0xc0) === 0x80) i--;
  if (i === 0) return end;
  const lead = buf[i - 1] ?? 0;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return end - (i - 1) >= need ? end : i - 1;
}

function skipContinuation(buf: Buffer): number {
  let i = 0;
  while (i < buf.length && i < 4 && ((buf[i] ?? 0) & 0xc0) === 0x80) i++;
  return i;
}
