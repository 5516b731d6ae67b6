import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

/** The manifest asks for exactly the events RepGen handles and the permissions its API calls need. */
describe('app.yml', () => {
  const manifest = parse(readFileSync(new URL('../../app.yml', import.meta.url), 'utf8')) as {
    default_events: string[];
    default_permissions: Record<string, string>;
    public: boolean;
  };
  const appSource = readFileSync(new URL('../../src/app.ts', import.meta.url), 'utf8');

  it('subscribes to the events whose handlers src/app.ts registers, and no others', () => {
    const handled = [...new Set([...appSource.matchAll(/app\.on\('([a-z_]+)\./g)].map((m) => m[1]))].sort();
    expect([...manifest.default_events].sort()).toEqual(handled);
  });

  it('asks for the least permissions that work', () => {
    expect(manifest.default_permissions).toEqual({
      issues: 'write',
      pull_requests: 'write',
      contents: 'write',
      checks: 'write',
      metadata: 'read',
    });
    expect(manifest.public).toBe(false);
  });
});
