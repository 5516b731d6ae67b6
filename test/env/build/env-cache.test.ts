import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  dropScopeCache,
  findEnv,
  newBuildDir,
  openBuildScope,
  openEnvCache,
  pruneEnvs,
  publishEnv,
} from '../../../src/env/build/env-cache.js';
import { removeTree } from '../../../src/env/build/seal-env.js';
import { makeTempDir } from '../../helpers/temp-dir.js';

describe('env cache folders', () => {
  let base: string;
  beforeEach(() => {
    base = makeTempDir('repgen-envcache-');
  });
  afterEach(() => removeTree(base)); // sealed envs' folders are read-only

  it('creates a private root and its folders', async () => {
    const paths = await openEnvCache(join(base, 'c'), null);
    for (const dir of [paths.root, paths.work, paths.envs, paths.locks]) expect(statSync(dir).mode & 0o777).toBe(0o700);
    const scope = await openBuildScope(paths, 'a'.repeat(64), null);
    expect(scope.work).toBe(join(paths.work, `s-${'a'.repeat(16)}`));
    for (const dir of [scope.work, scope.uvCache]) expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('refuses a root other users can enter', async () => {
    mkdirSync(join(base, 'open'));
    chmodSync(join(base, 'open'), 0o755);
    await expect(openEnvCache(join(base, 'open'), null)).rejects.toThrow(/open to other users/);
  });

  it.runIf(process.geteuid?.() === 0)('refuses a root that belongs to someone else', async () => {
    mkdirSync(join(base, 'theirs'), { mode: 0o700 });
    chownSync(join(base, 'theirs'), 4242, 4242);
    await expect(openEnvCache(join(base, 'theirs'), null)).rejects.toThrow(/belongs to uid 4242/);
  });

  it('counts a venv only once published, and keeps the first of two builds of one key', async () => {
    const paths = await openEnvCache(join(base, 'c'), null);
    const a = await newBuildDir(paths, null);
    const b = await newBuildDir(paths, null);
    mkdirSync(join(a, 'venv'));
    mkdirSync(join(b, 'venv'));
    writeFileSync(join(b, 'venv', 'marker'), 'b');
    expect(await findEnv(paths, 'k')).toBeNull();
    const first = await publishEnv(paths, 'k', join(a, 'venv'), {});
    const second = await publishEnv(paths, 'k', join(b, 'venv'), {});
    expect(second).toBe(first);
    expect(await findEnv(paths, 'k')).toBe(first);
    expect(existsSync(join(first, 'marker'))).toBe(false);
  });

  it("drops a scope's uv cache once its last build is done, and keeps it while another build of the scope runs", async () => {
    const paths = await openEnvCache(join(base, 'c'), null);
    const scope = await openBuildScope(paths, 'b'.repeat(64), null);
    writeFileSync(join(scope.uvCache, 'wheel'), 'x'.repeat(1000));
    const mine = await newBuildDir(scope, null);
    const other = await newBuildDir(scope, null);
    // Another build of the scope is under way: its cache stays where it is, whole.
    expect(await dropScopeCache(scope, mine)).toBe(false);
    expect(existsSync(join(scope.uvCache, 'wheel'))).toBe(true);
    await removeTree(other);
    expect(await dropScopeCache(scope, mine)).toBe(true);
    expect(existsSync(scope.uvCache)).toBe(false);
    expect(readdirSync(scope.work).filter((n) => n.startsWith('uv-cache'))).toEqual([]);
    // A later build of the scope gets its folders again.
    const again = await openBuildScope(paths, 'b'.repeat(64), null);
    expect(statSync(again.uvCache).isDirectory()).toBe(true);
    // The cache root's own folder is never a scope's, so nothing there is dropped.
    mkdirSync(paths.uvCache, { recursive: true });
    expect(await dropScopeCache(paths, mine)).toBe(false);
    expect(existsSync(paths.uvCache)).toBe(true);
  });

  it('reaps build folders a crashed process left a day ago, and only those', async () => {
    const paths = await openEnvCache(join(base, 'c'), null);
    const old = await newBuildDir(paths, null);
    const fresh = await newBuildDir(paths, null);
    const dayAgo = new Date(Date.now() - 25 * 3_600_000);
    utimesSync(old, dayAgo, dayAgo);
    await openEnvCache(join(base, 'c'), null);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
  });

  it('prunes the venvs no job used for the given time, and keeps one a job just reused', async () => {
    const paths = await openEnvCache(join(base, 'c'), null);
    for (const key of ['old', 'used']) {
      const b = await newBuildDir(paths, null);
      mkdirSync(join(b, 'venv'));
      await publishEnv(paths, key, join(b, 'venv'), {});
    }
    const weekAgo = new Date(Date.now() - 7 * 86_400_000);
    for (const key of ['old', 'used']) utimesSync(join(paths.envs, key, '.repgen-env.json'), weekAgo, weekAgo);
    expect(await findEnv(paths, 'used')).not.toBeNull();
    expect(await pruneEnvs(paths, 3 * 86_400_000)).toEqual(['old']);
    expect(await findEnv(paths, 'old')).toBeNull();
    expect(await findEnv(paths, 'used')).not.toBeNull();
  });
});
