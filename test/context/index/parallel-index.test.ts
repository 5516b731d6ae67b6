import { cpSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bm25Adapter } from '../../../src/context/index/bm25-index.js';
import { chunkRepo, lexicalDocs } from '../../../src/context/index/build-index.js';
import { IndexLru } from '../../../src/context/index/cache.js';
import { buildContext } from '../../../src/context/index.js';
import { indexFiles } from '../../../src/context/index/parallel-index.js';
import { tokenize } from '../../../src/context/tokenize.js';
import { listRepoFiles, walkRepo, type RepoFile } from '../../../src/context/walk-repo.js';

import { makeTempDir } from '../../helpers/temp-dir.js';

const REPOS = ['vision-classifier', 'training-loops'].map((r) => fileURLToPath(new URL(`../../../fixtures/repos/${r}`, import.meta.url)));
const worker = (name: string): URL => new URL(`../workers/${name}`, import.meta.url);

/** Both fixture repositories as one file list, so that there are enough files for many shards. */
async function fixtureFiles(): Promise<RepoFile[]> {
  const out: RepoFile[] = [];
  for (const [i, repo] of REPOS.entries()) {
    const { files } = await walkRepo(repo, { maxFileBytes: 1_000_000 });
    out.push(...files.map((f) => ({ ...f, path: `r${i}/${f.path}` })));
  }
  return out;
}

/** What the single-thread path gives: chunkRepo, then one BM25 build over every chunk. */
async function reference(files: RepoFile[]) {
  const { chunks, infos } = await chunkRepo(files);
  return { chunks, infos, lexical: Buffer.from(bm25Adapter.build(lexicalDocs(chunks)).serialize() as Buffer) };
}

// Small shards on two threads: every shard boundary, renumbering and BM25 merge is exercised on a tiny repository.
const SMALL = { workers: 2, bm25: true, minParallelBytes: 0, shardBytes: 800 } as const;

describe('parallel indexing', () => {
  it('gives the same chunks, file facts and BM25 index (byte for byte) as the single-thread path', async () => {
    const files = await fixtureFiles();
    const want = await reference(files);
    const got = await indexFiles(files, SMALL);
    expect(got.workers).toBe(2);
    expect(got.shards).toBeGreaterThan(4);
    expect(got.failures).toEqual([]);
    expect(got.chunks).toEqual(want.chunks);
    expect(got.infos).toEqual(want.infos);
    expect(Buffer.from(got.lexical!.serialize() as Buffer).equals(want.lexical)).toBe(true);
    const query = tokenize('accuracy topk num_groups optimizer step loss backward');
    expect(got.lexical!.search(query, 50)).toEqual(bm25Adapter.load(want.lexical).search(query, 50));
    // The in-thread sharded path is the same code: it must agree too.
    const inThread = await indexFiles(files, { ...SMALL, workers: 1 });
    expect(inThread.workers).toBe(0);
    expect(Buffer.from(inThread.lexical!.serialize() as Buffer).equals(want.lexical)).toBe(true);
    expect(inThread.chunks).toEqual(want.chunks);
  });

  it('lets go of the files it is handed (consume), on workers and on this thread, and gives the same index', async () => {
    const want = await reference(await fixtureFiles());
    for (const workers of [2, 1]) {
      const files = await fixtureFiles();
      const got = await indexFiles(files, { ...SMALL, workers, consume: true });
      expect(files).toEqual([]);
      expect(got.chunks).toEqual(want.chunks);
      expect(got.infos).toEqual(want.infos);
      expect(Buffer.from(got.lexical!.serialize() as Buffer).equals(want.lexical)).toBe(true);
    }
  });

  it('ranks the same bundles through buildContext with workers as on one thread', async () => {
    const reports = [
      {
        title: 'selected index k out of range',
        body: 'File "vision/utils/metrics.py", line 26, in accuracy\n_, pred = output.topk(maxk, 1, True, True)',
      },
      { title: 'GroupNorm accepts num_groups that does not divide num_channels', body: 'vision.layers.norm.GroupNorm(3, 64)' },
      { title: 'Loss becomes NaN with label smoothing', body: 'training diverges after a few steps' },
    ];
    for (const report of reports) {
      const base = { embedder: null, crossEncoder: null, cacheDir: 'off' } as const;
      const one = await buildContext(
        { repoDir: REPOS[0]!, report },
        { ...base, memory: new IndexLru(1), env: { REPGEN_CONTEXT_WORKERS: '1' } },
      );
      const many = await buildContext(
        { repoDir: REPOS[0]!, report },
        { ...base, memory: new IndexLru(1), env: { REPGEN_CONTEXT_WORKERS: '2' }, indexing: { minParallelBytes: 0, shardBytes: 1500 } },
      );
      expect(one.timings.indexWorkers).toBe(0);
      expect(many.timings.indexWorkers).toBe(2);
      expect(many.bundles).toEqual(one.bundles);
      expect(many.trainingLoops).toEqual(one.trainingLoops);
      expect(many.bundles.length).toBeGreaterThan(0);
    }
  });

  it('redoes on the main thread the shard of a worker that dies, and keeps the result identical', async () => {
    const files = await fixtureFiles();
    const want = await reference(files);
    const handed: number[] = [];
    const onChunks = (cs: Array<{ id: number }>): void => void handed.push(...cs.map((c) => c.id));
    const got = await indexFiles(files, { ...SMALL, workerUrl: worker('exits-on-second-shard.mjs'), onChunks });
    // Each of the two workers dies on its second shard; what was left ran here. The chunks still came in order.
    expect(handed).toEqual(want.chunks.map((_, i) => i));
    expect(got.failures).toEqual(['index worker exited with code 7', 'index worker exited with code 7']);
    expect(got.shardsInThread).toBeGreaterThanOrEqual(2);
    expect(got.chunks).toEqual(want.chunks);
    expect(Buffer.from(got.lexical!.serialize() as Buffer).equals(want.lexical)).toBe(true);
  });

  it('falls back to the main thread when no worker can start, or every worker reports an error', async () => {
    const files = await fixtureFiles();
    const want = await reference(files);
    const broken = await indexFiles(files, { ...SMALL, workerUrl: worker('throws-on-start.mjs') });
    expect(broken.failures).toHaveLength(2);
    expect(broken.failures[0]).toMatch(/^index worker crashed: cannot load the grammar$/);
    expect(broken.shardsInThread).toBe(broken.shards);
    expect(broken.chunks).toEqual(want.chunks);
    const erring = await indexFiles(files, { ...SMALL, workerUrl: worker('replies-error.mjs') });
    expect(erring.failures[0]).toMatch(/^index worker failed on r0\/.+: wasm memory access out of bounds$/);
    expect(Buffer.from(erring.lexical!.serialize() as Buffer).equals(want.lexical)).toBe(true);
  });

  it('fails with one line naming the file when a shard fails on the main thread too', async () => {
    const files = await fixtureFiles();
    // Hostile input: a "file" whose text is not a string breaks chunking wherever it runs. With a length it
    // counts towards the shard sizes, goes to a worker first, and fails again on the main thread.
    for (const text of [{ length: 500 }, 42]) {
      const bad = [...files.slice(0, 3), { path: 'evil.py', language: 'python', text } as unknown as RepoFile, ...files.slice(3)];
      const err = await indexFiles(bad, SMALL).then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).toMatch(/^indexing \S+ failed: .+$/);
      expect(err?.message).not.toContain('\n');
    }
  });

  it('reads listed files in the workers: same index as from texts, binary and generated files counted, no link followed', async () => {
    const dir = makeTempDir('repgen-parallel-listed-');
    const outside = makeTempDir('repgen-parallel-outside-');
    cpSync(REPOS[0]!, dir, { recursive: true });
    writeFileSync(join(outside, 'settings.py'), 'API_TOKEN = "host-secret"\n');
    writeFileSync(join(dir, 'blob.py'), Buffer.from([0x61, 0, 0x62]));
    writeFileSync(join(dir, 'ops_gen.py'), '# generated by a tool\nx = 1\n');
    writeFileSync(join(dir, 'leak.py'), 'x = 1\n');
    const { files: texts } = await walkRepo(dir, { maxFileBytes: 1_000_000 });
    const want = await reference(texts.filter((f) => f.path !== 'leak.py'));
    const { listed } = await listRepoFiles(dir, { maxFileBytes: 1_000_000 });
    // leak.py becomes a link to a host file after the listing: the worker must not follow it.
    rmSync(join(dir, 'leak.py'));
    symlinkSync(join(outside, 'settings.py'), join(dir, 'leak.py'));
    for (const workers of [2, 1]) {
      const got = await indexFiles([...listed], { ...SMALL, workers });
      expect(got.workers).toBe(workers === 2 ? 2 : 0);
      expect(got.failures).toEqual([]);
      expect(got.skipped).toEqual({ binary: 1, generated: 1 });
      expect(got.chunks.some((c) => c.text.includes('host-secret'))).toBe(false);
      expect(got.chunks).toEqual(want.chunks);
      expect(got.infos).toEqual(want.infos);
      expect(Buffer.from(got.lexical!.serialize() as Buffer).equals(want.lexical)).toBe(true);
    }
  });
});
