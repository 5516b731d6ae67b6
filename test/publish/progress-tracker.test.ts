import { describe, expect, it } from 'vitest';
import { createProgressTracker } from '../../src/publish/progress-tracker.js';

describe('createProgressTracker', () => {
  it('moves stages from pending to running to done as the pipeline reports, and re-renders each time', async () => {
    const renders: string[] = [];
    const t = createProgressTracker((md) => void renders.push(md));
    await t.progress('intake', 'reading the issue');
    await t.progress('context', 'skipped: no repository given');
    await t.progress('report', 'extracting the report');
    await t.progress('agent', 'attempt 2 (tier 1): run_mismatch');
    expect(t.stages().map((s) => s.state)).toEqual(['done', 'skipped', 'done', 'skipped', 'running', 'pending', 'pending']);
    expect(renders).toHaveLength(4);
    expect(renders.at(-1)).toContain('- ⏳ **agent** — attempt 2 (tier 1): run_mismatch');
    await t.progress('publish', 'reproduced: Reproduced RuntimeError');
    expect(t.stages().map((s) => s.state)).toEqual(['done', 'skipped', 'done', 'skipped', 'done', 'skipped', 'done']);
  });

  it('marks a failed stage', async () => {
    const t = createProgressTracker();
    await t.progress('intake', 'rejected: the issue is empty');
    expect(t.stages()[0]).toMatchObject({ state: 'failed' });
    expect(t.markdown()).toContain('- ❌ **intake** — rejected: the issue is empty');
  });
});
