import type { Node, Tree } from 'web-tree-sitter';
import type { Chunk, FileInfo, ImportRef } from './chunk-types.js';
import type { PythonParser } from './python-parser.js';
import type { RepoFile } from './walk-repo.js';
import { regexLines } from '../regex.js';

/** Top-level statements are grouped into module blocks of at most this many lines. */
const MODULE_BLOCK_LINES = 60;
/** Files that do not parse (or are not Python) are cut into windows of this many lines. */
const TEXT_WINDOW_LINES = 50;

export function moduleNameOf(path: string): string {
  return path
    .replace(/\.pyi?$/, '')
    .replace(/\/__init__$/, '')
    .split('/')
    .join('.');
}

/** Parses the text of an import statement; tree-sitter found it, a regex reads it (faster than walking it). */
export function parseImport(stmt: string, into: Record<string, ImportRef>, roots: Set<string>): void {
  const text = stmt
    .replace(/[()\\\n]/g, ' ')
    .replace(/#.*$/gm, '')
    .trim();
  const from = /^from\s+(\S+)\s+import\s+(.+)$/s.exec(text);
  if (from) {
    const module = from[1]!;
    if (!module.startsWith('.')) roots.add(module.split('.')[0]!);
    for (const part of from[2]!.split(',')) {
      const m = /^\s*([\w*]+)(?:\s+as\s+(\w+))?\s*$/.exec(part);
      if (!m || m[1] === '*') continue;
      into[m[2] ?? m[1]!] = { module, name: m[1]! };
    }
    return;
  }
  const imp = /^import\s+(.+)$/s.exec(text);
  if (!imp) return;
  for (const part of imp[1]!.split(',')) {
    const m = /^\s*([\w.]+)(?:\s+as\s+(\w+))?\s*$/.exec(part);
    if (!m) continue;
    const module = m[1]!;
    roots.add(module.split('.')[0]!);
    if (m[2]) into[m[2]] = { module };
    else {
      into[module.split('.')[0]!] = { module: module.split('.')[0]! };
      // "import a.b" lets code call "a.b.f": keep the dotted name resolvable too.
      if (module.includes('.')) into[module] = { module };
    }
  }
}

// The lookbehind starts a match only where a run of [\w.] starts: the matches are the same (a match from inside
// a run is also one from its start, which comes first), and the engine no longer retries at every character.
const OPTIMIZER_ASSIGN = regexLines('g')`
    (?<![\w.])([\w.]+)\s*=\s*(?:[\w.]*optim(?:izers)?\.)?(?:Adam|AdamW|SGD|RMSprop|Adagrad|Adadelta|Adamax|NAdam
    |RAdam|LBFGS|Lion|Adafactor|LAMB|Lamb|create_optimizer\w*|build_optimizer\w*|get_optimizer\w*)\s*\(
  `;

/**
 * Every match of OPTIMIZER_ASSIGN holds one of these (AdamW, NAdam, RAdam and Adamax hold "Adam"; Adagrad,
 * Adadelta and Adafactor "Ada"; the factories "_optimizer"). Most files hold none, and a scan for them is far
 * cheaper than the assignment pattern.
 */
const OPTIMIZER_WORD = /Ada|SGD|RMSprop|LBFGS|Lion|LAMB|Lamb|_optimizer/;

export function optimizerNamesIn(text: string): string[] {
  if (!OPTIMIZER_WORD.test(text)) return [];
  const names = new Set<string>();
  for (const m of text.matchAll(OPTIMIZER_ASSIGN)) names.add(m[1]!.split('.').pop()!);
  return [...names];
}

interface Span {
  start: number;
  end: number;
  kind: Chunk['kind'];
  symbol?: string;
}

function definitionOf(node: Node): Node | null {
  if (node.type === 'decorated_definition') return node.childForFieldName('definition');
  return node.type === 'function_definition' || node.type === 'class_definition' ? node : null;
}

/** Rows (0-based, inclusive) of each chunk of a parsed file. */
function spansOf(root: Node): Span[] {
  const spans: Span[] = [];
  let block: { start: number; end: number } | null = null;
  const flush = (): void => {
    if (block) spans.push({ start: block.start, end: block.end, kind: 'module' });
    block = null;
  };
  for (const node of root.namedChildren) {
    if (!node) continue;
    const def = definitionOf(node);
    const start = node.startPosition.row;
    const end = node.endPosition.row;
    if (!def) {
      if (node.type === 'comment' && !block) continue;
      if (block && end - block.start >= MODULE_BLOCK_LINES) flush();
      block = block ? { start: block.start, end } : { start, end };
      continue;
    }
    flush();
    const name = def.childForFieldName('name')?.text ?? '?';
    if (def.type === 'function_definition') {
      spans.push({ start, end, kind: 'function', symbol: name });
      continue;
    }
    const methods: Span[] = [];
    for (const member of def.childForFieldName('body')?.namedChildren ?? []) {
      if (!member) continue;
      const inner = definitionOf(member);
      if (inner?.type !== 'function_definition') continue;
      const methodName = inner.childForFieldName('name')?.text ?? '?';
      methods.push({ start: member.startPosition.row, end: member.endPosition.row, kind: 'method', symbol: `${name}.${methodName}` });
    }
    // The class chunk is its header (signature, docstring, class attributes); methods are chunks of their own.
    const headerEnd = methods.length ? Math.max(start, methods[0]!.start - 1) : end;
    spans.push({ start, end: headerEnd, kind: 'class', symbol: name }, ...methods);
  }
  flush();
  return spans;
}

function textWindows(lines: string[]): Span[] {
  const spans: Span[] = [];
  for (let start = 0; start < lines.length; start += TEXT_WINDOW_LINES) {
    spans.push({ start, end: Math.min(lines.length, start + TEXT_WINDOW_LINES) - 1, kind: 'text' });
  }
  return spans;
}

/**
 * Cuts one file into chunks (functions, methods, class headers, module blocks), with the calls, imports and
 * loops found by tree-sitter. A file that does not parse, or is not Python, is cut into text windows so that it
 * still indexes. `nextId` numbers the chunks across the repository.
 */
export function chunkFile(file: RepoFile, py: PythonParser, nextId: number): { chunks: Chunk[]; info: FileInfo } {
  const lines = file.text.split('\n');
  const imports: Record<string, ImportRef> = {};
  const roots = new Set<string>();
  let tree: Tree | null = null;
  if (file.language === 'python') tree = py.parser.parse(file.text);
  const parsed = !!tree && !tree.rootNode.hasError;
  const spans = parsed ? spansOf(tree!.rootNode) : textWindows(lines);
  // Row → index of the chunk holding it, to hand each call to its chunk.
  const owner = new Int32Array(lines.length).fill(-1);
  for (const [i, span] of spans.entries()) owner.fill(i, span.start, span.end + 1);
  const calls: string[][] = spans.map(() => []);
  const loops = spans.map(() => false);
  if (tree && parsed) {
    // tree-sitter reports UTF-8 byte offsets; in an ASCII file they are string indices too, and slicing the
    // string is much cheaper than asking wasm for each node's text.
    const ascii = !/[^\x00-\x7f]/.test(file.text);
    const textOf = (node: Node): string => (ascii ? file.text.slice(node.startIndex, node.endIndex) : node.text);
    for (const { name, node } of py.query.captures(tree.rootNode)) {
      const row = node.startPosition.row;
      if (name === 'import') parseImport(textOf(node), imports, roots);
      else {
        const at = owner[row] ?? -1;
        if (at < 0) continue;
        if (name === 'loop') loops[at] = true;
        else {
          const callee = textOf(node);
          calls[at]!.push(/\s/.test(callee) ? callee.replace(/\s+/g, '') : callee);
        }
      }
    }
  } else if (file.language === 'python') {
    for (const m of file.text.matchAll(/^\s*(?:from\s+\S+\s+)?import\s+[^\n]+/gm)) parseImport(m[0].trim(), imports, roots);
  }
  tree?.delete();
  const chunks: Chunk[] = [];
  const defs: Record<string, number> = {};
  for (const [i, span] of spans.entries()) {
    const id = nextId + chunks.length;
    const chunk: Chunk = {
      id,
      path: file.path,
      startLine: span.start + 1,
      endLine: span.end + 1,
      kind: span.kind,
      text: lines.slice(span.start, span.end + 1).join('\n'),
      calls: [...new Set(calls[i])],
      hasLoop: loops[i]!,
    };
    if (span.symbol) {
      chunk.symbol = span.symbol;
      defs[span.symbol] = id;
    }
    if (!parsed && file.language === 'python') {
      // Unparsed text still names its definitions: keep them findable by symbol.
      const names = [...chunk.text.matchAll(/^\s*(?:async\s+)?(?:def|class)\s+(\w+)/gm)].map((m) => m[1]!);
      if (names.length) chunk.symbol = names.join(',');
      chunk.hasLoop = /^\s*(?:for|while)\s/m.test(chunk.text);
      chunk.calls = [...new Set([...chunk.text.matchAll(/([A-Za-z_][\w.]*)\s*\(/g)].map((m) => m[1]!))];
    }
    chunks.push(chunk);
  }
  const info: FileInfo = {
    path: file.path,
    module: moduleNameOf(file.path),
    imports,
    importRoots: [...roots],
    defs,
    chunkIds: chunks.map((c) => c.id),
    optimizerNames: file.language === 'python' ? optimizerNamesIn(file.text) : [],
    parsed,
  };
  return { chunks, info };
}
