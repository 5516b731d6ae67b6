import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENV_GROUPS, OperatorEnv, SANDBOX_VARIABLES, settingRows } from '../../src/config/operator-env.js';
import { renderSettingsDoc, withSettingsDoc } from '../../src/config/settings-doc.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : name.endsWith('.ts') ? [path] : [];
  });
}

describe('the settings table of docs/configuration.md', () => {
  it('is what `npm run settings-doc` writes from the schema (run it when this fails)', () => {
    const page = readFileSync(join(root, 'docs/configuration.md'), 'utf8');
    expect(withSettingsDoc(page)).toBe(page);
  });

  it('fails when the schema changes and the page does not', () => {
    const page = readFileSync(join(root, 'docs/configuration.md'), 'utf8');
    const edited = page.replace('| `REPGEN_MAX_COST_USD` | `5` |', '| `REPGEN_MAX_COST_USD` | `2` |');
    expect(edited).not.toBe(page);
    expect(withSettingsDoc(edited)).not.toBe(edited);
  });

  it('describes every variable, and every group is in the table', () => {
    const rendered = renderSettingsDoc();
    for (const group of ENV_GROUPS) {
      expect(rendered).toContain(`### ${group.title}`);
      for (const row of settingRows(group.schema)) {
        expect(row.description, row.name).not.toBe('');
        expect(rendered).toContain(`| \`${row.name}\` |`);
      }
    }
  });

  it('every REPGEN_* variable the code reads from an environment is in the one schema', () => {
    const known = new Set(Object.keys(OperatorEnv.shape));
    const read = new Set<string>();
    for (const file of [...sources(join(root, 'src')), ...sources(join(root, 'workers'))]) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\benv\??\.(REPGEN_[A-Z0-9_]+)/g)) read.add(m[1] ?? '');
    }
    expect(read.size).toBeGreaterThan(10);
    expect([...read].filter((name) => !known.has(name) && !SANDBOX_VARIABLES.has(name))).toEqual([]);
  });
});
