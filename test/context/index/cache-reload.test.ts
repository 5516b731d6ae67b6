import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bm25Adapter } from '../../../src/context/index/bm25-index.js';
import { assembleIndex, buildLexical, chunkRepo, type RepoIndex } from '../../../src/context/index/build-index.js';
import { loadIndex, saveIndex } from '../../../src/context/index/cache.js';
import { walkRepo } from '../../../src/context/walk-repo.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

const REPO = fileURLToPath(new URL('../../../fixtures/repos/vision-classifier', import.meta.url));

async function built(): Promise<RepoIndex> {
  const { files, skipped } = await walkRepo(REPO, { maxFileBytes: 1_000_000 });
  const { chunks, infos } = await chunkRepo(files);
  return assembleIndex('k1', { chunks, files: infos, lexical: buildLexical(bm25Adapter, chunks), skipped });
}

describe('context disk cache reload', () => {
  it('gives back the same chunks, graph and search, with texts read on use even after the entry is removed', async () => {
    const index = await built();
    const cacheDir = makeTempDir('repgen-reload-');
    await saveIndex(cacheDir, index);
    const loaded = await loadIndex(cacheDir, 'k1', bm25Adapter);
    expect(loaded).not.toBeNull();
    // The open texts.txt keeps its bytes readable: a concurrent rebuild or clean-up cannot break a loaded index.
    rmSync(join(cacheDir, 'k1'), { recursive: true });
    expect(loaded!.chunks.length).toBe(index.chunks.length);
    expect(loaded!.chunks.map((c) => c.text)).toEqual(index.chunks.map((c) => c.text));
    expect(loaded!.chunks.map((c) => ({ ...c }))).toEqual(index.chunks.map((c) => ({ ...c })));
    expect(Object.keys(loaded!.chunks[0]!)).toContain('text');
    // The name tables come back as stored (not derived again): every name finds the same chunks, and no more names.
    for (const table of ['byCallName', 'bySymbolPart'] as const) {
      const built = index.graph[table] as Map<string, number[]>;
      expect(built.size).toBeGreaterThan(0);
      expect(loaded!.graph[table].size).toBe(built.size);
      for (const [name, ids] of built) expect(loaded!.graph[table].get(name)).toEqual(ids);
      expect(loaded!.graph[table].get('no_such_name_here')).toBeUndefined();
    }
    const query = ['accuracy', 'topk', 'output', 'target', 'train'];
    expect(loaded!.lexical.search(query, 10)).toEqual(index.lexical.search(query, 10));
    expect(loaded!.lexical.search(query, 10).length).toBeGreaterThan(0);
  });

  it('writes texts of several megabytes, multi-byte characters across each write, and reads each back', async () => {
    const index = await built();
    // Each chunk is a little over 0.3 M characters, so the 1 M-character writes end inside chunks of four-byte
    // and two-byte characters; the bytes must be those of the texts joined, chunk for chunk.
    const big = index.chunks.slice(0, 12).map((c, i) => ({ ...c, text: `${'é𝔘'.repeat(70_000 + i)}\n${c.text}\n変` }));
    const heavy = { ...index, key: 'k2', chunks: [...big, ...index.chunks.slice(12)] };
    const cacheDir = makeTempDir('repgen-reload-');
    await saveIndex(cacheDir, heavy);
    expect(readFileSync(join(cacheDir, 'k2', 'texts.txt')).equals(Buffer.from(heavy.chunks.map((c) => c.text).join('')))).toBe(true);
    const loaded = await loadIndex(cacheDir, 'k2', bm25Adapter);
    expect(loaded!.chunks.map((c) => c.text)).toEqual(heavy.chunks.map((c) => c.text));
  });

  it('treats a texts file that does not match the stored lengths as corrupt and drops the entry', async () => {
    const index = await built();
    const cacheDir = makeTempDir('repgen-reload-');
    await saveIndex(cacheDir, index);
    writeFileSync(join(cacheDir, 'k1', 'texts.txt'), 'short');
    expect(await loadIndex(cacheDir, 'k1', bm25Adapter)).toBeNull();
    // Dropped, so the next build writes a fresh entry rather than meeting the same corrupt one.
    expect(existsSync(join(cacheDir, 'k1'))).toBe(false);
  });

  it('loads a BM25 index from bytes at any alignment, and refuses a truncated one', async () => {
    const index = await built();
    const stored = index.lexical.serialize();
    const bytes = typeof stored === 'string' ? Buffer.from(stored, 'latin1') : stored;
    const query = ['accuracy', 'topk', 'output'];
    const expected = index.lexical.search(query, 20);
    for (const shift of [0, 1, 2, 3]) {
      const holder = Buffer.alloc(bytes.length + shift);
      bytes.copy(holder, shift);
      expect(bm25Adapter.load(holder.subarray(shift)).search(query, 20)).toEqual(expected);
    }
    expect(() => bm25Adapter.load(bytes.subarray(0, bytes.length - 2))).toThrow(/truncated/);
    expect(() => bm25Adapter.load(Buffer.concat([bytes, Buffer.alloc(1)]))).toThrow(/truncated/);
    // Right length, wrong content: a posting naming a document past the last one is refused on load, not met
    // later as a score written past the end of an array.
    const headerLen = bytes.readUInt32LE(0);
    const header = JSON.parse(bytes.toString('utf8', 4, 4 + headerLen)) as { terms: number; n: number };
    const docsAt = ((4 + headerLen + 3) & ~3) + 4 * (header.terms + 1) * 2 + 4 * header.n * 2;
    const damaged = Buffer.from(bytes);
    damaged.writeInt32LE(header.n + 5, docsAt);
    expect(() => bm25Adapter.load(damaged)).toThrow(/unknown document/);
  });
});
