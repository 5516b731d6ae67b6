/**
 * A cache file of named binary sections behind a small JSON header: [u32 header length][header][sections, each
 * 8-byte aligned]. Loading views each section in place; the header's lengths must add up to the file's size, so
 * a truncated or padded file is refused before anything reads it.
 */

type Section = Int32Array | Uint8Array | Buffer;
type Kind = 'i32' | 'u8';

interface Header {
  version: number;
  meta: unknown;
  sections: Array<{ name: string; kind: Kind; bytes: number }>;
}

const align = (n: number): number => (n + 7) & ~7;

export function packSections(version: number, meta: unknown, sections: Record<string, Section>): Buffer {
  return Buffer.concat(packSectionParts(version, meta, sections));
}

/** The file `packSections` makes, as its pieces in order (views of the sections, not copies): written as they are, no copy of the whole is made. */
export function packSectionParts(version: number, meta: unknown, sections: Record<string, Section>): Buffer[] {
  const entries = Object.entries(sections).map(([name, data]) => ({
    name,
    data,
    kind: (data instanceof Int32Array ? 'i32' : 'u8') as Kind,
  }));
  const header: Header = { version, meta, sections: entries.map((e) => ({ name: e.name, kind: e.kind, bytes: e.data.byteLength })) };
  const head = Buffer.from(JSON.stringify(header), 'utf8');
  const parts: Buffer[] = [Buffer.alloc(4), head];
  parts[0]!.writeUInt32LE(head.length);
  let at = 4 + head.length;
  for (const { data } of entries) {
    parts.push(Buffer.alloc(align(at) - at));
    at = align(at);
    parts.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    at += data.byteLength;
  }
  return parts;
}

export interface Unpacked {
  version: number;
  meta: unknown;
  i32(name: string): Int32Array;
  u8(name: string): Buffer;
}

/** Throws on any mismatch of the layout; the caller treats that as a corrupt entry. */
export function unpackSections(buf: Buffer): Unpacked {
  if (buf.length < 4) throw new Error('cache file is truncated');
  const headLen = buf.readUInt32LE(0);
  if (4 + headLen > buf.length) throw new Error('cache file is truncated');
  const header = JSON.parse(buf.toString('utf8', 4, 4 + headLen)) as Header;
  if (typeof header.version !== 'number' || !Array.isArray(header.sections)) throw new Error('cache file header is malformed');
  const found = new Map<string, { kind: Kind; start: number; bytes: number }>();
  let at = 4 + headLen;
  for (const s of header.sections) {
    if (typeof s.bytes !== 'number' || s.bytes < 0 || (s.kind !== 'i32' && s.kind !== 'u8') || (s.kind === 'i32' && s.bytes % 4))
      throw new Error('cache file header is malformed');
    at = align(at);
    found.set(s.name, { kind: s.kind, start: at, bytes: s.bytes });
    at += s.bytes;
  }
  if (at !== buf.length) throw new Error(`cache file is ${buf.length} bytes, its header says ${at}`);
  const section = (name: string, kind: Kind): { start: number; bytes: number } => {
    const s = found.get(name);
    if (!s || s.kind !== kind) throw new Error(`cache file has no ${kind} section ${name}`);
    return s;
  };
  return {
    version: header.version,
    meta: header.meta,
    i32(name) {
      const { start, bytes } = section(name, 'i32');
      const from = buf.byteOffset + start;
      // A view onto the file's bytes when aligned (a large readFile gets a buffer of its own); a copy otherwise.
      if (from % 4 === 0) return new Int32Array(buf.buffer, from, bytes / 4);
      return new Int32Array(buf.buffer.slice(from, from + bytes) as ArrayBuffer);
    },
    u8(name) {
      const { start, bytes } = section(name, 'u8');
      return buf.subarray(start, start + bytes);
    },
  };
}
