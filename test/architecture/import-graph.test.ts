import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildFileGraph, findCycles, readSpecifiers, unitEdges, unitOf } from './import-graph.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Each cycle between folders, with the imports that close it (so the failure says where to cut). */
function folderCycles(root: string, dirs: string[]): string[] {
  const graph = buildFileGraph(root, dirs);
  const byUnit = unitEdges(graph.edges);
  const pairs = [...byUnit.keys()].map((k) => {
    const [from = '', to = ''] = k.split(' -> ');
    return { from, to };
  });
  return findCycles(pairs).map((units) => {
    const inside = [...byUnit].filter(([k]) => units.includes(k.split(' -> ')[0] ?? '') && units.includes(k.split(' -> ')[1] ?? ''));
    const lines = inside.map(([k, es]) => `  ${k}: ${es.map((e) => `${e.from} imports ${e.specifier}`).join(', ')}`);
    return `cycle between ${units.join(', ')}\n${lines.join('\n')}`;
  });
}

/** Each cycle between files (inside one folder too), with the imports that close it. */
function fileCycles(root: string, dirs: string[]): string[] {
  const graph = buildFileGraph(root, dirs);
  return findCycles(graph.edges).map((files) => {
    const inside = graph.edges.filter((e) => files.includes(e.from) && files.includes(e.to));
    return `cycle between ${files.join(', ')}\n${inside.map((e) => `  ${e.from} imports ${e.specifier}`).join('\n')}`;
  });
}

describe('the import graph of src/ (and workers/)', () => {
  it('has no cycle between folders', () => {
    expect(folderCycles(ROOT, ['src', 'workers'])).toEqual([]);
  });

  it('has no cycle between files, inside a folder either (a port names no adapter; types import no orchestrator)', () => {
    expect(fileCycles(ROOT, ['src', 'workers'])).toEqual([]);
  });

  it('resolves every relative import (a graph that misses edges would hide cycles)', () => {
    const graph = buildFileGraph(ROOT, ['src', 'workers']);
    expect(graph.files.length).toBeGreaterThan(100);
    expect(graph.unresolved.map((e) => `${e.from}: ${e.specifier}`)).toEqual([]);
  });
});

describe('the cycle finder', () => {
  function tree(files: Record<string, string>): string {
    const root = makeTempDir('import-graph-');
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      writeFileSync(path.join(root, name), text);
    }
    return root;
  }

  it('finds a two-folder cycle made by a type-only import', () => {
    const root = tree({
      'src/a/x.ts': "import { y } from '../b/y.js';\nexport const x = y;\n",
      'src/b/y.ts': "import type { Z } from '../a/z.js';\nexport const y = 1 as unknown as Z;\n",
      'src/a/z.ts': 'export type Z = number;\n',
    });
    const cycles = folderCycles(root, ['src']);
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toContain('cycle between src/a, src/b');
    expect(cycles[0]).toContain('src/b/y.ts imports ../a/z.js');
  });

  it('finds a three-folder cycle through re-exports and dynamic imports, and ignores imports inside the same folder', () => {
    const root = tree({
      'src/a/index.ts': "export { b } from '../b/index.js';\nimport { a2 } from './a2.js';\nexport const a = a2;\n",
      'src/a/a2.ts': "import { a } from './index.js';\nexport const a2 = 2; void a;\n",
      'src/b/index.ts': "export const b = async () => (await import('../c/c.js')).c;\n",
      'src/c/c.ts': "import '../a/a2.js';\nexport const c = 3;\n",
    });
    expect(folderCycles(root, ['src'])[0]).toContain('cycle between src/a, src/b, src/c');
  });

  it('does not count a specifier in a comment or a string, and finds none in a layered tree', () => {
    const root = tree({
      'src/low/l.ts': "// import { h } from '../high/h.js';\nexport const s = \"from '../high/h.js'\";\n",
      'src/high/h.ts': "import { s } from '../low/l.js';\nexport const h = s;\n",
      'src/root.ts': "import { h } from './high/h.js';\nexport const r = h;\n",
    });
    expect(folderCycles(root, ['src'])).toEqual([]);
    expect(readSpecifiers('x.ts', readFileSync(path.join(root, 'src/low/l.ts'), 'utf8'))).toEqual([]);
  });

  it('finds a cycle between two files of one folder, through a dynamic import, that the folder check cannot see', () => {
    const root = tree({
      'src/a/port.ts': "export type P = number;\nexport const pick = async () => (await import('./adapter.js')).adapter;\n",
      'src/a/adapter.ts': "import type { P } from './port.js';\nexport const adapter: P = 1;\n",
    });
    expect(folderCycles(root, ['src'])).toEqual([]);
    const cycles = fileCycles(root, ['src']);
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toContain('src/a/adapter.ts imports ./port.js');
    expect(cycles[0]).toContain('src/a/port.ts imports ./adapter.js');
  });

  it('names units: a folder under src/, a file at src/ root, workers/ as one', () => {
    expect(unitOf('src/exec/local/run.ts')).toBe('src/exec');
    expect(unitOf('src/errors.ts')).toBe('src/errors.ts');
    expect(unitOf('workers/repro-worker.ts')).toBe('workers');
  });
});
