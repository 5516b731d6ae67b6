/**
 * What a fork server may import on a run's behalf before forking it (src/exec/warm/fork-server.ts): the modules the run's
 * entry imports first, before any statement of its own. Importing them in the server runs exactly the code the
 * run would have run first, so the forked run starts where a cold one would be after its opening imports.
 *
 * The scan stops at the first line that is anything else: a statement, a `try:`, a relative import, an import of
 * one of the run's own files (that runs the run's code), a line continued with a backslash. It passes over a
 * module docstring, comments, and an inert `def` (no decorator, no annotation, defaults that are literals): running
 * one only binds a name in the script's namespace, which no import can see, so the imports after it run as they
 * would before it. Pure: text in, names out.
 */

const DOTTED = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const IMPORT = /^import\s+(.+)$/;
const FROM = /^from\s+(\S+)\s+import\s*(.*)$/;
const MAX_MODULES = 32;
/** A literal default value: a number, a short string without quotes or escapes inside, None, True, False. */
const LITERAL = String.raw`(?:-?\d[\d_.eE+-]*|'[^'"\\]*'|"[^'"\\]*"|None|True|False)`;
/** One parameter of an inert def: a name, with `*`/`**`, or a name with a literal default; or a bare `*` or `/`. */
const PARAM = new RegExp(String.raw`^(?:\*{0,2}[A-Za-z_][A-Za-z0-9_]*(?:\s*=\s*${LITERAL})?|\*|/)$`);

/** Whether `params` (what stands between a def's parentheses) evaluates nothing when the def runs. */
function inertParams(params: string): boolean {
  const list = params.trim().replace(/,\s*$/, '');
  return list === '' || list.split(',').every((p) => PARAM.test(p.trim()));
}

/**
 * Top-level module names a run's own files provide to its entry (what `sys.path[0]`, the entry's folder, holds):
 * `x.py`, `x.so`, `x/…`. An import of one of them runs the run's code, and a server's module of that name would
 * be the wrong one.
 */
export function runOwnModules(paths: string[], entry: string): Set<string> {
  const slash = entry.lastIndexOf('/');
  const prefix = slash < 0 ? '' : entry.slice(0, slash + 1);
  const own = new Set<string>();
  for (const p of paths) {
    if (!p.startsWith(prefix)) continue;
    const rest = p.slice(prefix.length);
    const first = rest.split('/')[0] ?? '';
    const name = rest.includes('/') ? first : first.replace(/\..*$/, '');
    if (name) own.add(name);
  }
  return own;
}

/** Strips a trailing comment from an import line (imports hold no string literals). */
function code(line: string): string {
  const hash = line.indexOf('#');
  return (hash < 0 ? line : line.slice(0, hash)).trim();
}

/** The modules of one `import a.b as c, d` clause list, or null when it is not a plain one. */
function importedByImport(clauses: string): string[] | null {
  const names: string[] = [];
  for (const clause of clauses.split(',')) {
    const m = /^([^\s]+)(\s+as\s+[A-Za-z_][A-Za-z0-9_]*)?$/.exec(clause.trim());
    if (!m || !DOTTED.test(m[1]!)) return null;
    names.push(m[1]!);
  }
  return names.length ? names : null;
}

/**
 * The modules imported by the leading import statements of `source`, in order, without repeats; `own` names the
 * run's own top-level modules (runOwnModules): the scan stops before the first import of one of them.
 */
export function leadingImports(source: string, own: ReadonlySet<string> = new Set()): string[] {
  const lines = source.split(/\r?\n/);
  const found: string[] = [];
  let i = 0;
  let first = true;
  while (i < lines.length && found.length < MAX_MODULES) {
    const raw = lines[i]!;
    i += 1;
    const trimmed = raw.trim();
    // A module docstring, only as the first statement (it runs nothing).
    const doc = first ? /^[rRuU]?("""|''')/.exec(trimmed) : null;
    if (doc) {
      first = false;
      const quote = doc[1]!;
      let rest = trimmed.slice(doc[0].length);
      while (!rest.includes(quote)) {
        if (i >= lines.length) return found;
        rest = lines[i]!;
        i += 1;
      }
      if (code(rest.slice(rest.indexOf(quote) + 3)) !== '') break;
      continue;
    }
    const line = code(raw);
    if (line === '') continue;
    if (/^\s/.test(raw)) break;
    first = false;
    const def = /^def\s+[A-Za-z_][A-Za-z0-9_]*\s*\((.*)$/.exec(line);
    if (def) {
      // The signature may run over lines; it ends at the `):` that closes it (no `->` annotation).
      let sig = def[1]!;
      while (!sig.includes(')') && i < lines.length) {
        sig += ` ${code(lines[i]!)}`;
        i += 1;
      }
      const close = /^([^()]*)\)\s*:(.*)$/.exec(sig);
      if (!close || !inertParams(close[1]!)) break;
      // A one-line body after the colon, or an indented block (with blank and comment lines) below.
      if (close[2]!.trim() === '') while (i < lines.length && (/^\s/.test(lines[i]!) || code(lines[i]!) === '')) i += 1;
      continue;
    }
    if (line.endsWith('\\') || line.includes(';')) break;
    let names: string[] | null = null;
    const imp = IMPORT.exec(line);
    const from = imp ? null : FROM.exec(line);
    if (imp) names = importedByImport(imp[1]!);
    else if (from) {
      const module = from[1]!;
      if (!DOTTED.test(module)) break;
      let what = from[2]!;
      if (what.startsWith('(')) {
        while (!what.includes(')')) {
          if (i >= lines.length) return found;
          what += ` ${code(lines[i]!)}`;
          i += 1;
        }
        if (what.slice(what.indexOf(')') + 1).trim() !== '') break;
      } else if (what === '') break;
      names = [module];
    }
    if (!names) break;
    if (names.some((n) => own.has(n.split('.')[0]!))) break;
    // `__future__` holds compiler directives: nothing to import ahead.
    for (const n of names) if (n !== '__future__' && !found.includes(n) && found.length < MAX_MODULES) found.push(n);
  }
  return found;
}
