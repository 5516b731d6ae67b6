import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Language, Parser, Query } from 'web-tree-sitter';

/** Calls, imports and loops in one query: one pass in wasm is far cheaper than walking nodes from JS. */
const QUERY = `
(call function: (_) @call)
(import_statement) @import
(import_from_statement) @import
(for_statement) @loop
(while_statement) @loop
`;

export interface PythonParser {
  parser: Parser;
  query: Query;
}

let loading: Promise<PythonParser> | null = null;

/** Loads web-tree-sitter and tree-sitter-python's wasm from node_modules, once per process. */
export function loadPythonParser(): Promise<PythonParser> {
  loading ??= (async () => {
    await Parser.init();
    const require = createRequire(import.meta.url);
    // The grammar package has no "exports"; its wasm sits next to package.json.
    const wasm = join(dirname(require.resolve('tree-sitter-python/package.json')), 'tree-sitter-python.wasm');
    const language = await Language.load(wasm);
    const parser = new Parser();
    parser.setLanguage(language);
    return { parser, query: new Query(language, QUERY) };
  })();
  return loading;
}
