import { existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bm25Adapter } from '../../../src/context/index/bm25-index.js';
import { assembleIndex, buildLexical, chunkRepo, type RepoIndex } from '../../../src/context/index/build-index.js';
import { INDEX_VERSION, loadIndex, saveIndex } from '../../../src/context/index/cache.js';
import { packSections } from '../../../src/context/index/packed-sections.js';
import { walkRepo } from '../../../src/context/walk-repo.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

const REPO = fileURLToPath(new URL('../../../fixtures/repos/vision-classifier', import.meta.url));

async function built(): Promise<RepoIndex> {
  const { files, skipped } = await walkRepo(REPO, { maxFileBytes: 1_000_000 });
  const { chunks, infos } = await chunkRepo(files);
  return assembleIndex('k1', { chunks, files: infos, lexical: buildLexical(bm25Adapter, chunks), skipped });
}

async function savedEntry(): Promise<{ cacheDir: string; index: RepoIndex }> {
  const index = await built();
  const cacheDir = makeTempDir('repgen-layout-');
  await saveIndex(cacheDir, index);
  return { cacheDir, index };
}

describe('context cache layout (meta.bin)', () => {
  it('gives back the files lazily with the same facts, and a chunk array that reads like a plain one', async () => {
    const { cacheDir, index } = await savedEntry();
    const loaded = (await loadIndex(cacheDir, 'k1', bm25Adapter))!;
    // Stored imports are the project-local ones only (saveIndex drops the rest); everything else is as built.
    const strip = ({ imports: _i, ...f }: RepoIndex['files'][number]) => f;
    expect(loaded.files.map(strip)).toEqual(index.files.map(strip));
    expect(Array.isArray(loaded.chunks)).toBe(true);
    expect(loaded.chunks[loaded.chunks.length]).toBeUndefined();
    expect(loaded.chunks.length in loaded.chunks).toBe(false);
    expect(0 in loaded.chunks).toBe(true);
    expect('' in loaded.chunks).toBe(false);
    expect(loaded.chunks.map((c) => c.id)).toEqual(index.chunks.map((c) => c.id));
    expect(loaded.chunks.filter((c) => c.hasLoop).map((c) => c.id)).toEqual(index.chunks.filter((c) => c.hasLoop).map((c) => c.id));
    expect(loaded.graph.filesByModule.get('vision.utils.metrics')?.defs).toEqual(
      index.graph.filesByModule.get('vision.utils.metrics')?.defs,
    );
    expect(loaded.loops).toEqual(index.loops);
  });

  it.each([
    ['cut short', (f: string) => truncateSync(f, Math.floor(readFileSync(f).length / 2))],
    ['cut to nothing', (f: string) => truncateSync(f, 0)],
    ['one byte short', (f: string) => truncateSync(f, readFileSync(f).length - 1)],
    ['one byte too long', (f: string) => writeFileSync(f, Buffer.concat([readFileSync(f), Buffer.alloc(1)]))],
    ['garbage', (f: string) => writeFileSync(f, Buffer.from('\x10\x00\x00\x00not a header at all, just bytes'))],
    ['a header claiming more than the file holds', (f: string) => writeFileSync(f, Buffer.from([0xff, 0xff, 0xff, 0x7f, 1, 2, 3]))],
    ['another version', (f: string) => writeFileSync(f, packSections(INDEX_VERSION - 1, {}, {}))],
    ['this version with no sections', (f: string) => writeFileSync(f, packSections(INDEX_VERSION, { chunks: 1, files: 1 }, {}))],
  ])('treats a meta.bin that is %s as no entry and drops it, never throws', async (_name, damage) => {
    const { cacheDir } = await savedEntry();
    damage(join(cacheDir, 'k1', 'meta.bin'));
    expect(await loadIndex(cacheDir, 'k1', bm25Adapter)).toBeNull();
    expect(existsSync(join(cacheDir, 'k1'))).toBe(false);
  });

  it('refuses a meta.bin whose name table points past the chunks', async () => {
    const { cacheDir } = await savedEntry();
    const file = join(cacheDir, 'k1', 'meta.bin');
    const bytes = readFileSync(file);
    const headLen = bytes.readUInt32LE(0);
    const header = JSON.parse(bytes.toString('utf8', 4, 4 + headLen)) as { sections: Array<{ name: string; bytes: number }> };
    // Find the callName ids section and overwrite its first id with a huge one.
    let at = 4 + headLen;
    for (const s of header.sections) {
      at = (at + 7) & ~7;
      if (s.name === 'callName.ids') break;
      at += s.bytes;
    }
    bytes.writeInt32LE(1 << 30, at);
    writeFileSync(file, bytes);
    expect(await loadIndex(cacheDir, 'k1', bm25Adapter)).toBeNull();
  });
});
