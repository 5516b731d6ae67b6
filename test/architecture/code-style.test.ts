import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';

// `npm test` is the one command: the formatter, the linter and the line limit are checked here, each with a case
// that must fail, so a broken check cannot pass in silence. `npm run format` / `npm run lint` fix and explain.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CODE = /\.(?:ts|mts|js|mjs)$/;
const MAX_LINE = 160;

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(rel));
    else if (e.isFile()) out.push(rel);
  }
  return out;
}

/** `file:line (N chars)` for each line over the limit. */
export function longLines(file: string, text: string, max = MAX_LINE): string[] {
  return text.split('\n').flatMap((line, i) => (line.length > max ? [`${file}:${i + 1} (${line.length} chars)`] : []));
}

/**
 * The files `npm run format` would change, by the same CLI and options as `npm run format:check` (the
 * .prettierignore decides which files are code). Its cache (content-keyed, git-ignored) keeps a re-run fast.
 */
function unformatted(): string[] {
  const bin = path.join(ROOT, 'node_modules/prettier/bin/prettier.cjs');
  const args = [bin, '--list-different', '--cache', '--cache-location', '.prettiercache', '--cache-strategy', 'content', '.'];
  const run = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  // 0: all formatted; 1: some file is not; anything else (2: a file does not parse) is a failure to report.
  if (run.status !== 0 && run.status !== 1) throw new Error(`prettier exited ${run.status}: ${run.stderr}`);
  return run.stdout.split('\n').filter(Boolean);
}

describe('formatting (Prettier, config in .prettierrc.json)', () => {
  it('leaves every code file as `npm run format` writes it', () => {
    expect(unformatted()).toEqual([]);
  }, 120_000);

  it('would catch an unformatted file', async () => {
    const options = await prettier.resolveConfig(path.join(ROOT, 'src/x.ts'));
    expect(await prettier.check('const  a = {b:1}\n', { ...options, parser: 'typescript' })).toBe(false);
    expect(await prettier.check('const a = { b: 1 };\n', { ...options, parser: 'typescript' })).toBe(true);
    // The ignore file lets code in and keeps docs and recorded fixtures out: an empty file list would pass vacuously.
    const ignorePath = path.join(ROOT, '.prettierignore');
    expect((await prettier.getFileInfo(path.join(ROOT, 'src/app.ts'), { ignorePath })).ignored).toBe(false);
    expect((await prettier.getFileInfo(path.join(ROOT, 'docs/cassettes.md'), { ignorePath })).ignored).toBe(true);
  });
});

describe('lint (ESLint, eslint.config.js)', () => {
  // The cache (content-keyed, git-ignored) keeps a re-run at a few seconds; a cold run parses every file.
  const eslint = new ESLint({ cwd: ROOT, cache: true, cacheLocation: path.join(ROOT, '.eslintcache'), cacheStrategy: 'content' });

  it('finds no error in the checkout', async () => {
    const results = await eslint.lintFiles(['.']);
    expect(results.length).toBeGreaterThan(300);
    const errors = results.flatMap((r) =>
      r.messages.filter((m) => m.severity === 2).map((m) => `${path.relative(ROOT, r.filePath)}:${m.line} ${m.ruleId}: ${m.message}`),
    );
    expect(errors).toEqual([]);
  }, 180_000);

  it('would catch a lint error', async () => {
    const [result] = await new ESLint({ cwd: ROOT }).lintText('const unused = 1;\n', { filePath: path.join(ROOT, 'src/x.ts') });
    expect(result?.messages.map((m) => m.ruleId)).toEqual(['@typescript-eslint/no-unused-vars']);
  });
});

describe(`lines of src/ and workers/ (at most ${MAX_LINE} characters, strings and regexes included)`, () => {
  it('has none longer', () => {
    const files = ['src', 'workers'].flatMap(filesUnder).filter((f) => CODE.test(f));
    expect(files.length).toBeGreaterThan(200);
    expect(files.flatMap((f) => longLines(f, readFileSync(path.join(ROOT, f), 'utf8')))).toEqual([]);
  });

  it('names the file and line of a long one', () => {
    expect(longLines('a.ts', `ok\n${'x'.repeat(161)}\n${'y'.repeat(160)}`)).toEqual(['a.ts:2 (161 chars)']);
  });
});

/** A file past this many lines does several jobs; split it by responsibility. */
const MAX_FILE_LINES = 400;

/** `file (N lines)` when `text` has more than MAX_FILE_LINES lines. */
function longFile(file: string, text: string): string[] {
  const n = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
  return n > MAX_FILE_LINES ? [`${file} (${n} lines)`] : [];
}

describe(`files of src/ and workers/ (at most ${MAX_FILE_LINES} lines)`, () => {
  it('has none longer', () => {
    const files = ['src', 'workers'].flatMap(filesUnder).filter((f) => CODE.test(f));
    expect(files.flatMap((f) => longFile(f, readFileSync(path.join(ROOT, f), 'utf8')))).toEqual([]);
  });

  it('names a long one with its length', () => {
    expect(longFile('a.ts', 'x\n'.repeat(401))).toEqual(['a.ts (401 lines)']);
    expect(longFile('b.ts', 'x\n'.repeat(400))).toEqual([]);
  });
});
