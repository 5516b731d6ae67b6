import { normalizeName } from './requirement-line.js';

/**
 * Which distribution a script's `import X` needs: the standard library needs none, the project's own
 * packages come from the checkout, and the rest go through pipreqs' maintained mapping (`cv2` →
 * `opencv-python`, `sklearn` → `scikit-learn`, `PIL` → `pillow`), else the import name itself, as pip users
 * name most packages. Pure: the tables are data (src/env/read/data/, loaded by load-import-names.ts).
 */

export interface ImportNameTables {
  /** import name → distribution, from pipreqs' `mapping` and our short supplement. */
  mapping: ReadonlyMap<string, string>;
  /** `sys.stdlib_module_names` of the target Python. */
  stdlib: ReadonlySet<string>;
}

/**
 * Parses `import:dist` lines. A name listed for several distributions (a namespace such as `azure` or `plone`)
 * maps to '': no distribution can be chosen from the import alone.
 */
export function parseMappingLines(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const m = /^([A-Za-z_][\w.]*):([A-Za-z0-9][\w.-]*)\s*$/.exec(line.trim());
    if (!m) continue;
    const [name, dist] = [m[1] ?? '', m[2] ?? ''];
    const prev = out.get(name);
    out.set(name, prev === undefined || normalizeName(prev) === normalizeName(dist) ? dist : '');
  }
  return out;
}

/**
 * Names a report's code imports that are almost always the reporter's own files (`from model import Net`,
 * `import utils`): never looked up on an index, where a package of that name is someone else's.
 */
const LOCAL_NAMES = new Set([
  'model',
  'models',
  'utils',
  'util',
  'config',
  'configs',
  'data',
  'dataset',
  'datasets_local',
  'train',
  'test',
  'tests',
  'main',
  'common',
  'helpers',
  'helper',
  'src',
  'lib',
  'module',
  'modules',
  'network',
  'networks',
  'net',
  'layers',
  'loss',
  'losses',
  'my_module',
  'mymodule',
  'app',
  'run',
  'setup',
]);

export interface ImportDistribution {
  module: string;
  /** PEP 503-normalised distribution name. */
  distribution: string;
  /** `mapping` when the table named it, `same-name` when the import name is taken as the distribution's. */
  via: 'mapping' | 'same-name';
}

/**
 * The distributions `imports` (top-level or dotted module names) need. `projectPackages` are the checkout's
 * own import names; `known` are distributions already required (a same-name guess is then unnecessary).
 */
export function distributionsForImports(
  imports: readonly string[],
  tables: ImportNameTables,
  projectPackages: readonly string[] = [],
): ImportDistribution[] {
  const own = new Set(projectPackages);
  const out = new Map<string, ImportDistribution>();
  for (const full of imports) {
    const top = full.split('.')[0] ?? '';
    if (!/^[A-Za-z_]\w*$/.test(top) || top.startsWith('_') || tables.stdlib.has(top) || own.has(top)) continue;
    if (LOCAL_NAMES.has(top.toLowerCase())) continue;
    // A dotted entry wins over its top level (`google.protobuf` is protobuf, `google` alone is ambiguous).
    const dotted = [...tables.mapping.keys()].find((k) => k.includes('.') && (full === k || full.startsWith(`${k}.`)));
    const mapped = dotted ? tables.mapping.get(dotted) : tables.mapping.get(top);
    if (mapped === '') continue;
    const distribution = normalizeName(mapped ?? top);
    if (!out.has(distribution)) out.set(distribution, { module: top, distribution, via: mapped ? 'mapping' : 'same-name' });
  }
  return [...out.values()];
}

/**
 * Top-level modules a Python source imports (`import a.b`, `from c import d`), relative imports left out.
 * Line-based on purpose: report code often does not parse (a `>>>` prompt, an ellipsis, a cut paste).
 */
export function importedModules(code: string): string[] {
  const out = new Set<string>();
  for (const raw of code.split(/\r?\n/)) {
    const line = raw.replace(/^\s*(?:>>>|\.\.\.)\s?/, '').trim();
    const from = /^from\s+([A-Za-z_][\w.]*)\s+import\b/.exec(line);
    if (from) {
      out.add(from[1] ?? '');
      continue;
    }
    const imp = /^import\s+(.+)$/.exec(line);
    if (!imp) continue;
    for (const part of (imp[1] ?? '').split(',')) {
      const m = /^\s*([A-Za-z_][\w.]*)/.exec(part);
      if (m) out.add(m[1] ?? '');
    }
  }
  return [...out];
}
