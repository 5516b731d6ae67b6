import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EnvironmentConfig } from '../../src/config/repo-config.js';
import { configKeyFor } from '../../src/env/lock/uv-compile.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every text a user reads advice from: the source's strings, the prompts, the docs. */
function adviceTexts(): Array<{ file: string; text: string }> {
  const files = [
    ...readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join('src', f)),
    ...readdirSync(join(ROOT, 'prompts'), { recursive: true, encoding: 'utf8' }).map((f) => join('prompts', f)),
    ...readdirSync(join(ROOT, 'docs')).map((f) => join('docs', f)),
    'README.md',
  ].filter((f) => /\.(?:ts|md)$/.test(f));
  return files.map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }));
}

/**
 * `environment.<key>` as advice writes it: right after a quote or a backtick, so code that reads a field
 * (`b.environment.framework`, `environment.project = …`) is not advice; `environment.yml` is conda's file, not a key.
 */
function namedEnvironmentKeys(text: string): string[] {
  return [...text.matchAll(/(?<=['"`])environment\.([A-Za-z_]+)/gm)].map((m) => m[1]!).filter((k) => k !== 'yml' && k !== 'yaml');
}

describe('every repgen.yml key advice names is one the schema accepts (issue 38: advice named environment.index_url)', () => {
  it('finds keys in advice, and knows a wrong one', () => {
    expect(
      namedEnvironmentKeys("Setting `environment.index_url` in .github/repgen.yml can fix it. b.environment.framework 'environment.build'"),
    ).toEqual(['index_url', 'build']);
  });

  it('src/, prompts/, docs/ and the README name only keys of EnvironmentConfig', () => {
    const accepted = new Set(Object.keys(EnvironmentConfig.shape));
    const named = adviceTexts().flatMap(({ file, text }) => namedEnvironmentKeys(text).map((key) => ({ file, key })));
    expect(named.length).toBeGreaterThan(5);
    expect(named.filter((n) => !accepted.has(n.key))).toEqual([]);
  });

  it('the advice for an index that cannot be reached names a key the schema parses', () => {
    const key = configKeyFor({ kind: 'network', package: null, version: null } as Parameters<typeof configKeyFor>[0]);
    expect(key).toBe('environment.index');
    expect(EnvironmentConfig.safeParse({ [key.slice('environment.'.length)]: 'https://pypi.org/simple' }).success).toBe(true);
  });
});
