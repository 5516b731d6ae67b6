/**
 * Columns of a cache file laid out so that loading them is a view onto the file's bytes, not a parse: numbers in
 * typed arrays, strings as UTF-8 bytes cut by offsets and decoded one at a time when asked for. A reload of a
 * 5,000-file repository spent most of its second in JSON.parse and in re-deriving maps that a query reads a few
 * dozen entries of.
 */

/** Strings back to back as UTF-8; string i is bytes[offsets[i] .. offsets[i+1]). */
export interface StringColumn {
  readonly length: number;
  at(i: number): string;
}

export function encodeStrings(values: readonly string[]): { offsets: Int32Array; bytes: Buffer } {
  const parts = values.map((v) => Buffer.from(v, 'utf8'));
  const offsets = new Int32Array(values.length + 1);
  for (let i = 0; i < parts.length; i++) offsets[i + 1] = offsets[i]! + parts[i]!.length;
  return { offsets, bytes: Buffer.concat(parts) };
}

/** Throws when the offsets do not cut `bytes` exactly (a damaged file), so that no later read goes astray. */
export function stringColumn(offsets: Int32Array, bytes: Buffer): StringColumn {
  if (offsets.length < 1 || offsets[0] !== 0 || offsets[offsets.length - 1] !== bytes.length)
    throw new Error('string column does not match its bytes');
  for (let i = 1; i < offsets.length; i++) if (offsets[i]! < offsets[i - 1]!) throw new Error('string column offsets go backwards');
  return { length: offsets.length - 1, at: (i) => bytes.toString('utf8', offsets[i]!, offsets[i + 1]!) };
}

/** A string column over an in-memory array (what a fresh build holds). */
export function arrayColumn(values: readonly string[]): StringColumn {
  return { length: values.length, at: (i) => values[i]! };
}

/**
 * Position of `value` in a column sorted by JavaScript's string order, by binary search. Decoding the few
 * strings a search probes costs far less than decoding (or hashing) all of them on load.
 */
export function sortedIndexOf(column: StringColumn, value: string): number | undefined {
  let lo = 0;
  let hi = column.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const t = column.at(mid);
    if (t === value) return mid;
    if (t < value) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/**
 * Whether every value lies in [0, limit). An indexed loop in a function of its own: `for…of` over a 4.6 M entry
 * typed array took 150 ms on a reload, this takes about 10.
 */
export function allInRange(values: Int32Array, limit: number): boolean {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v < 0 || v >= limit) return false;
  }
  return true;
}

/** A read-only name → chunk ids lookup: a Map when built, a packed table when loaded from the cache. */
export interface NameLookup {
  readonly size: number;
  get(name: string): readonly number[] | undefined;
}

/** A name lookup as sorted keys, each with a run of ids (row r: ids[rows[r] .. rows[r+1])). */
export interface PackedNames {
  keys: { offsets: Int32Array; bytes: Buffer };
  rows: Int32Array;
  ids: Int32Array;
}

export function packNames(map: ReadonlyMap<string, readonly number[]>): PackedNames {
  const names = [...map.keys()].sort();
  const rows = new Int32Array(names.length + 1);
  for (let r = 0; r < names.length; r++) rows[r + 1] = rows[r]! + map.get(names[r]!)!.length;
  const ids = new Int32Array(rows[names.length]!);
  for (let r = 0; r < names.length; r++) ids.set(map.get(names[r]!)!, rows[r]!);
  return { keys: encodeStrings(names), rows, ids };
}

/** Checks the table against itself and against `idLimit` (chunk ids), then answers lookups from it. */
export function namesLookup(packed: PackedNames, idLimit: number): NameLookup {
  const keys = stringColumn(packed.keys.offsets, packed.keys.bytes);
  const { rows, ids } = packed;
  if (rows.length !== keys.length + 1 || rows[0] !== 0 || rows[keys.length] !== ids.length)
    throw new Error('name table does not match its ids');
  for (let r = 1; r < rows.length; r++) if (rows[r]! < rows[r - 1]!) throw new Error('name table rows go backwards');
  if (!allInRange(ids, idLimit)) throw new Error('name table holds an unknown chunk id');
  return {
    size: keys.length,
    get(name: string): readonly number[] | undefined {
      const r = sortedIndexOf(keys, name);
      return r === undefined ? undefined : Array.from(ids.subarray(rows[r]!, rows[r + 1]!));
    },
  };
}
