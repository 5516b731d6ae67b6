import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

// Issue 25, item 7: the docs agree with app.yml and with themselves.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const read = (p: string) => readFileSync(join(root, p), 'utf8');

/** "Issue comment" → "issue_comment", as app.yml names events. */
const eventId = (words: string) => words.trim().toLowerCase().replace(/\s+/g, '_');

describe('docs/app-setup.md', () => {
  it('lists exactly the events app.yml subscribes to', () => {
    const manifest = parseYaml(read('app.yml')) as { default_events: string[] };
    const line = /^\s*- events: (.+)$/m.exec(read('docs/app-setup.md'))?.[1] ?? '';
    expect(line.split(',').map(eventId).sort()).toEqual([...manifest.default_events].sort());
  });

  it('says Redis must persist, and the worker setting that finds runs a non-persistent Redis lost', () => {
    const page = read('docs/app-setup.md');
    expect(page).toMatch(/Redis must persist \(`appendonly yes`/);
    expect(page).toContain('`REPGEN_LOST_RUN_SWEEP_S`');
  });
});

describe('docs/github-action.md', () => {
  it('pins its own sample to a commit SHA, as it tells users to', () => {
    const page = read('docs/github-action.md');
    expect(page).toContain('Pin `repgen/repgen@…` to a commit SHA');
    const uses = [...page.matchAll(/uses: repgen\/repgen@(\S+)/g)].map((m) => m[1]);
    expect(uses.length).toBeGreaterThan(0);
    for (const ref of uses) expect(ref).toMatch(/^[0-9a-f]{40}$/);
  });
});
