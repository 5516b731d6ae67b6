import { readFileSync } from 'node:fs';
import { parseMappingLines, type ImportNameTables } from './import-names.js';

/**
 * The import-name tables, read once from src/env/read/data/ (pipreqs' mapping, our short supplement, CPython
 * 3.11's stdlib names; their sources are in data/README.md). The supplement is read last and wins.
 */
let cached: ImportNameTables | null = null;

export function loadImportNameTables(): ImportNameTables {
  if (cached) return cached;
  const read = (file: string) => readFileSync(new URL(`./data/${file}`, import.meta.url), 'utf8');
  const mapping = parseMappingLines(read('pipreqs-mapping.txt'));
  for (const [k, v] of parseMappingLines(read('import-names-extra.txt'))) mapping.set(k, v);
  const stdlib = new Set(
    read('stdlib-3.11.txt')
      .split(/\r?\n/)
      .map((s) => s.trim())
      .filter(Boolean),
  );
  cached = { mapping, stdlib };
  return cached;
}
