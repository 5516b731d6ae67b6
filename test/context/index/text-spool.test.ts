import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Chunk } from '../../../src/context/chunk-types.js';
import { bm25Adapter } from '../../../src/context/index/bm25-index.js';
import { assembleIndex, buildLexical, chunkRepo } from '../../../src/context/index/build-index.js';
import { loadIndex, openTextSpool, saveIndex } from '../../../src/context/index/cache.js';
import { indexFiles } from '../../../src/context/index/parallel-index.js';
import { TextSpool } from '../../../src/context/index/text-spool.js';
import { walkRepo } from '../../../src/context/walk-repo.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

const REPO = fileURLToPath(new URL('../../../fixtures/repos/vision-classifier', import.meta.url));

function chunk(id: number, text: string): Chunk {
  return { id, path: 'a.py', startLine: 1, endLine: 1, kind: 'module', text, calls: [], hasLoop: false };
}

describe('text spool', () => {
  it('writes texts in chunk order and reads each back on use, multi-byte text included', () => {
    const dir = makeTempDir('repgen-spool-');
    const spool = TextSpool.open(join(dir, 'texts.txt'));
    const first = [chunk(0, 'def f():\n    return 1'), chunk(1, '# é ü 漢字 🙂')];
    const second = [chunk(2, ''), chunk(3, 'x = "tail"')];
    spool.append(first);
    spool.append(second);
    expect(spool.size).toBe(4);
    expect(Array.from(spool.textBytes())).toEqual([21, Buffer.byteLength('# é ü 漢字 🙂'), 0, 10]);
    expect([...first, ...second].map((c) => c.text)).toEqual(['def f():\n    return 1', '# é ü 漢字 🙂', '', 'x = "tail"']);
    // Read once, the text is plain data: a spread copy carries it.
    expect({ ...first[1]! }.text).toBe('# é ü 漢字 🙂');
    spool.commit(join(dir, 'texts.txt'));
    expect(readFileSync(join(dir, 'texts.txt'), 'utf8')).toBe('def f():\n    return 1# é ü 漢字 🙂x = "tail"');
    spool.close();
  });

  it('refuses chunks out of order, and a name already there (a planted link is not followed)', () => {
    const dir = makeTempDir('repgen-spool-');
    const spool = TextSpool.open(join(dir, 'texts.txt'));
    expect(() => spool.append([chunk(1, 'b')])).toThrow(/chunk 1 came where 0 was due/);
    spool.discard();
    expect(readdirSync(dir)).toEqual([]);
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'keep');
    const now = Date.now;
    Date.now = () => 42;
    try {
      symlinkSync(victim, join(dir, `texts.txt.${process.pid}.42.spool`));
      expect(() => TextSpool.open(join(dir, 'texts.txt'))).toThrow(/EEXIST/);
    } finally {
      Date.now = now;
    }
    expect(readFileSync(victim, 'utf8')).toBe('keep');
  });

  it('a discarded spool leaves nothing behind, and a closed one reads no more', () => {
    const dir = makeTempDir('repgen-spool-');
    const spool = TextSpool.open(join(dir, 'texts.txt'));
    const c = chunk(0, 'unread');
    spool.append([c]);
    spool.discard();
    expect(readdirSync(dir)).toEqual([]);
    expect(() => c.text).toThrow(/closed/);
  });

  it('a save from spooled texts writes the same entry, byte for byte, as a save from texts in memory', async () => {
    const { files, skipped } = await walkRepo(REPO, { maxFileBytes: 1_000_000 });
    const { chunks: inMemory, infos } = await chunkRepo(files.map((f) => ({ ...f })));
    const plainDir = makeTempDir('repgen-spool-plain-');
    await saveIndex(
      plainDir,
      assembleIndex('k', { chunks: inMemory, files: infos, lexical: buildLexical(bm25Adapter, inMemory), skipped }),
    );

    const spoolDir = makeTempDir('repgen-spool-built-');
    const spool = await openTextSpool(spoolDir, 'k');
    const seen: number[] = [];
    // Small shards on two worker threads, which answer in any order: the spool gets them one at a time, in order.
    const built = await indexFiles(files, {
      workers: 2,
      minParallelBytes: 0,
      bm25: false,
      shardBytes: 2_000,
      onChunks: (cs) => {
        seen.push(...cs.map((c) => c.id));
        spool.append(cs);
      },
    });
    expect(built.shards).toBeGreaterThan(1);
    expect(seen).toEqual(built.chunks.map((_, i) => i));
    const index = assembleIndex('k', {
      chunks: built.chunks,
      files: built.infos,
      lexical: buildLexical(bm25Adapter, built.chunks),
      skipped,
    });
    await saveIndex(spoolDir, index, spool);
    for (const name of ['lexical.bin', 'meta.bin', 'texts.txt'])
      expect(readFileSync(join(spoolDir, 'k', name)).equals(readFileSync(join(plainDir, 'k', name)))).toBe(true);
    expect(readdirSync(join(spoolDir, 'k')).sort()).toEqual(['lexical.bin', 'meta.bin', 'texts.txt']);
    const loaded = await loadIndex(spoolDir, 'k', bm25Adapter);
    expect(loaded!.chunks.map((c) => c.text)).toEqual(inMemory.map((c) => c.text));
    spool.close();
    expect(existsSync(join(spoolDir, 'k', 'texts.txt'))).toBe(true);
  });

  it('a spool that fails (a full disk) fails the build, on worker threads as on this one, instead of escaping', async () => {
    const { files } = await walkRepo(REPO, { maxFileBytes: 1_000_000 });
    // Two workers: small shards, the second fails; one thread: one shard, which fails.
    for (const [workers, failing] of [
      [2, 2],
      [1, 1],
    ] as const) {
      let calls = 0;
      const onChunks = (): void => {
        if (++calls === failing) throw new Error('ENOSPC: no space left on device');
      };
      await expect(
        indexFiles(
          files.map((f) => ({ ...f })),
          { workers, bm25: true, minParallelBytes: 0, shardBytes: 2_000, onChunks },
        ),
      ).rejects.toThrow(/ENOSPC/);
      expect(calls).toBe(failing);
    }
  });
});
