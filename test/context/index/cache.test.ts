import { execFileSync } from 'node:child_process';
import { appendFileSync, cpSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { types } from 'node:util';
import { describe, expect, it } from 'vitest';
import { gitIdentity, IndexLru } from '../../../src/context/index/cache.js';
import type { RepoIndex } from '../../../src/context/index/build-index.js';
import { buildContext } from '../../../src/context/index.js';
import { makeHostileFiles } from '../../helpers/hostile-files.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

const REPO = fileURLToPath(new URL('../../../fixtures/repos/vision-classifier', import.meta.url));
const MODELS = fileURLToPath(new URL('../../../fixtures/models', import.meta.url));
const REPORT = { title: 'accuracy fails', body: 'RuntimeError: selected index k out of range in `accuracy`' };

function copy(): string {
  const dir = makeTempDir('repgen-cache-repo-');
  cpSync(REPO, dir, { recursive: true });
  return dir;
}

describe('context index cache', () => {
  it('serves a second build from memory, a new process from disk, and rebuilds when the content changes', async () => {
    const repoDir = copy();
    const cacheDir = makeTempDir('repgen-cache-');
    const deps = { embedder: null, crossEncoder: null, cacheDir, env: {} };
    const memory = new IndexLru(2);
    const first = await buildContext({ repoDir, report: REPORT }, { ...deps, memory });
    expect(first.cache).toBe('built');
    const second = await buildContext({ repoDir, report: REPORT }, { ...deps, memory });
    expect(second.cache).toBe('memory');
    expect(second.bundles).toEqual(first.bundles);
    // A fresh LRU stands for a new process: the disk entry answers.
    const third = await buildContext({ repoDir, report: REPORT }, { ...deps, memory: new IndexLru(2) });
    expect(third.cache).toBe('disk');
    expect(third.bundles).toEqual(first.bundles);
    appendFileSync(join(repoDir, 'vision/utils/metrics.py'), '\n\ndef top_k_error(output, target):\n    return 1\n');
    const changed = await buildContext({ repoDir, report: REPORT }, { ...deps, memory });
    expect(changed.cache).toBe('built');
    // The content hash is remembered against the files' stat data, for the next process.
    const memos = readdirSync(join(cacheDir, 'stat-memo'));
    expect(memos).toHaveLength(2);
    expect(readFileSync(join(cacheDir, 'stat-memo', memos[0]!), 'utf8')).toMatch(/^content:[0-9a-f]{64}$/);
  });

  it('keeps in memory the index reloaded from disk after a build (texts read on demand), not the built one', async () => {
    const repoDir = copy();
    const kept: RepoIndex[] = [];
    const memory = new (class extends IndexLru {
      override set(index: RepoIndex): void {
        kept.push(index);
        super.set(index);
      }
    })(2);
    const deps = { embedder: null, crossEncoder: null, cacheDir: makeTempDir('repgen-cache-'), env: {}, memory };
    const first = await buildContext({ repoDir, report: REPORT }, deps);
    expect(first.cache).toBe('built');
    expect(kept).toHaveLength(1);
    // The reloaded index's chunks are made on first read (a Proxy over the stored columns); the built ones are plain.
    expect(types.isProxy(kept[0]!.chunks)).toBe(true);
    const second = await buildContext({ repoDir, report: REPORT }, deps);
    expect(second.cache).toBe('memory');
    expect(second.bundles).toEqual(first.bundles);
    // Without a disk cache there is nothing to reload: the built index stays.
    const none = await buildContext({ repoDir, report: REPORT }, { ...deps, cacheDir: 'off', memory: new IndexLru(2) });
    expect(none.bundles).toEqual(first.bundles);
  });

  it('keys a git work tree by its commit, and a dirty tree apart from its commit', async () => {
    const repoDir = copy();
    const git = (...args: string[]): string =>
      execFileSync('git', ['-C', repoDir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { encoding: 'utf8' });
    git('init', '-q');
    git('add', '.');
    git('commit', '-qm', 'fixture');
    const cacheDir = makeTempDir('repgen-cache-');
    const deps = { embedder: null, crossEncoder: null, cacheDir, env: {} };
    expect((await buildContext({ repoDir, report: REPORT }, { ...deps, memory: new IndexLru(2) })).cache).toBe('built');
    expect((await buildContext({ repoDir, report: REPORT }, { ...deps, memory: new IndexLru(2) })).cache).toBe('disk');
    appendFileSync(join(repoDir, 'train.py'), '\n# local edit\n');
    expect((await buildContext({ repoDir, report: REPORT }, { ...deps, memory: new IndexLru(2) })).cache).toBe('built');
    git('commit', '-qam', 'edit');
    expect((await buildContext({ repoDir, report: REPORT }, { ...deps, memory: new IndexLru(2) })).cache).toBe('built');
    expect(readdirSync(cacheDir)).toHaveLength(3);
  });

  it('stores chunk vectors with the index, so a second run does not embed again', async () => {
    const repoDir = copy();
    const cacheDir = makeTempDir('repgen-cache-');
    const env = { REPGEN_EMBED_MODEL: 'tiny-embed', REPGEN_MODEL_DIR: MODELS };
    const first = await buildContext({ repoDir, report: REPORT }, { crossEncoder: null, cacheDir, env, memory: new IndexLru(2) });
    expect(first.timings.embedMs).toBeGreaterThan(0);
    const second = await buildContext({ repoDir, report: REPORT }, { crossEncoder: null, cacheDir, env, memory: new IndexLru(2) });
    expect(second.cache).toBe('disk');
    expect(second.timings.embedMs).toBeUndefined();
    expect(second.timings.vectorLoadMs).toBeGreaterThanOrEqual(0);
    expect(second.bundles).toEqual(first.bundles);
  });

  it('evicts the least recently used index', () => {
    const lru = new IndexLru(2);
    const entry = (key: string) => ({ key }) as Parameters<IndexLru['set']>[0];
    lru.set(entry('a'));
    lru.set(entry('b'));
    lru.get('a');
    lru.set(entry('c'));
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')?.key).toBe('a');
    expect(lru.get('c')?.key).toBe('c');
  });
});

describe('gitIdentity of a work tree with hostile untracked files', () => {
  function workTree(): string {
    const dir = makeTempDir('repgen-identity-');
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '' } });
    writeFileSync(join(dir, 'model.py'), 'x = 1\n');
    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'init');
    return dir;
  }

  // git lists an untracked link (never a FIFO itself); its target used to be read whole, through the link.
  it.each([
    ['a link to a FIFO with no writer', () => makeHostileFiles().fifo],
    ['a link to /dev/zero', () => '/dev/zero'],
  ])('%s: an identity at once, never a blocked or endless read', async (_what, target) => {
    const dir = workTree();
    symlinkSync(target(), join(dir, 'data.txt'));
    expect(await gitIdentity(dir)).toMatch(/^git:[0-9a-f]{40}\+dirty:[0-9a-f]{16}$/);
  });
});
