import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildFileGraph, listSourceFiles, roomOf, roomViolations, type RoomRules } from './import-graph.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * src/exec/: the ScriptExecutor port and its chooser at the root; rooms below. sandbox/ (what makes a process safe,
 * and one sandboxed run's steps and work folders) knows no executor; warm/ (fork servers) builds on the sandbox;
 * local/ (the local executor) on both; kubernetes/ on the sandbox's script environment only.
 */
const EXEC: RoomRules = {
  base: 'src/exec',
  rooms: { sandbox: [], warm: ['sandbox'], local: ['sandbox', 'warm'], kubernetes: ['sandbox'] },
  chooser: ['src/exec/index.ts'],
};

/**
 * src/context/: the stage's root (chunking, ranking, the lexical port `lexical-index.ts`, bundles) and index/ (the
 * lexical store: the adapters and their chooser, building and sharding the index, its on-disk cache and format).
 * index/ builds on the root; only the stage's entry (`index.ts`) and the query side (`query.ts`) reach into it, so
 * the port names no adapter and ranking knows no storage format.
 */
const CONTEXT: RoomRules = {
  base: 'src/context',
  rooms: { index: [] },
  chooser: ['src/context/index.ts', 'src/context/query.ts'],
};

/**
 * src/env/: the port and its types, the entry (`index.ts`: the spec from the inputs) and the builder (`uv-builder.ts`:
 * lock, build, prove, in that order) at the root; below them one room per step. read/ (the inputs: the report, the
 * checkout's dependency files, import names) and sandboxed/ (every command a build runs, in the sandbox, through the
 * index proxy) know no other room; decide/ (the versions and their sources) reads the inputs; lock/ (uv's resolution
 * and the lock) runs uv sandboxed; build/ (the env cache, the sealed env, the project's extensions) installs a lock;
 * prove/ (the import proof, its failure and the next candidate) runs in a built env, reading requirement lines as build/ does.
 */
const ENV: RoomRules = {
  base: 'src/env',
  rooms: {
    read: [],
    sandboxed: [],
    decide: ['read'],
    lock: ['sandboxed'],
    build: ['read', 'sandboxed', 'lock'],
    prove: ['read', 'sandboxed', 'lock', 'build'],
  },
  chooser: ['src/env/index.ts', 'src/env/uv-builder.ts'],
};

/** Every room of `rules.base` that holds a file but is not declared (a new room must say what it may import). */
function undeclaredRooms(root: string, rules: RoomRules): string[] {
  const rooms = listSourceFiles(root, rules.base).map((f) => roomOf(rules.base, f));
  return [...new Set(rooms)].filter((r): r is string => r !== null && r !== 'root' && !(r in rules.rooms));
}

/** The rules hold on src/ as it is: `room` holds more than five files, no import breaks the order, no room is undeclared. */
function expectRoomsHold(rules: RoomRules, room: string) {
  const graph = buildFileGraph(ROOT, ['src']);
  expect(graph.files.filter((f) => roomOf(rules.base, f) === room).length).toBeGreaterThan(5);
  expect(roomViolations(graph.edges, rules)).toEqual([]);
  expect(undeclaredRooms(ROOT, rules)).toEqual([]);
  return graph;
}

describe('the rooms of src/exec', () => {
  it('import only downward: sandbox nothing of an executor, warm the sandbox, local both, kubernetes the sandbox', () => {
    expectRoomsHold(EXEC, 'sandbox');
  });
});

describe('the rooms of src/context', () => {
  it('index/ builds on the root; only the entry and the query side import it; the lexical port imports no adapter', () => {
    const graph = expectRoomsHold(CONTEXT, 'index');
    const port = graph.edges.filter((e) => e.from === 'src/context/lexical-index.ts');
    expect(port.filter((e) => roomOf(CONTEXT.base, e.to) === 'index')).toEqual([]);
  });
});

describe('the rooms of src/env', () => {
  it('import only downward: read and sandboxed nothing, decide read, lock sandboxed, build the lock, prove the build', () => {
    expectRoomsHold(ENV, 'read');
  });
});

describe('the room check', () => {
  function tree(files: Record<string, string>): string {
    const root = makeTempDir('rooms-');
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      writeFileSync(path.join(root, name), text);
    }
    return root;
  }

  it('names roots and rooms', () => {
    expect(roomOf('src/exec', 'src/exec/types.ts')).toBe('root');
    expect(roomOf('src/exec', 'src/exec/sandbox/seccomp.ts')).toBe('sandbox');
    expect(roomOf('src/exec', 'src/exec/warm/deep/x.ts')).toBe('warm');
    expect(roomOf('src/exec', 'src/executor.ts')).toBeNull();
  });

  it('passes a layered tree: rooms import the root and the rooms below, the chooser imports rooms', () => {
    const root = tree({
      'src/exec/types.ts': 'export type R = number;\n',
      'src/exec/index.ts': "export const pick = async () => (await import('./local/executor.js')).run;\n",
      'src/exec/sandbox/box.ts': "import type { R } from '../types.js';\nexport const box: R = 1;\n",
      'src/exec/warm/pool.ts': "import { box } from '../sandbox/box.js';\nexport const pool = box;\n",
      'src/exec/local/executor.ts':
        "import { pool } from '../warm/pool.js';\nimport { box } from '../sandbox/box.js';\nexport const run = pool + box;\n",
    });
    expect(roomViolations(buildFileGraph(root, ['src']).edges, EXEC)).toEqual([]);
    expect(undeclaredRooms(root, EXEC)).toEqual([]);
  });

  it('fails when the sandbox imports the local executor, even by a type-only import', () => {
    const root = tree({
      'src/exec/sandbox/box.ts': "import type { Run } from '../local/executor.js';\nexport const box = 1 as unknown as Run;\n",
      'src/exec/local/executor.ts': 'export type Run = number;\n',
    });
    expect(roomViolations(buildFileGraph(root, ['src']).edges, EXEC)).toEqual([
      'src/exec/sandbox/box.ts imports ../local/executor.js: sandbox may import only the root',
    ]);
  });

  it('fails on a sideways import (kubernetes reaching into warm), a root file other than the chooser importing a room, an undeclared room', () => {
    const root = tree({
      'src/exec/types.ts': "import { pool } from './warm/pool.js';\nexport const t = pool;\n",
      'src/exec/warm/pool.ts': 'export const pool = 1;\n',
      'src/exec/kubernetes/render.ts': "export const render = async () => (await import('../warm/pool.js')).pool;\n",
      'src/exec/gpu/probe.ts': "import { t } from '../types.js';\nexport const probe = t;\n",
    });
    expect(roomViolations(buildFileGraph(root, ['src']).edges, EXEC)).toEqual([
      'src/exec/gpu/probe.ts imports ../types.js: room src/exec/gpu is not declared',
      'src/exec/kubernetes/render.ts imports ../warm/pool.js: kubernetes may import only sandbox',
      'src/exec/types.ts imports ./warm/pool.js: only the chooser (src/exec/index.ts) may import a room',
    ]);
    expect(undeclaredRooms(root, EXEC)).toEqual(['gpu']);
  });
});
