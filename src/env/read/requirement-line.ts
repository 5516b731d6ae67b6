import { satisfies } from '@renovatebot/pep440';

/**
 * PEP 508 requirement strings (`torch[opt]>=2.1,<3; python_version >= "3.8"`) as every dependency file
 * writes them, and the markers evaluated for the machine the env is built for. Pure.
 */

/** PEP 503: lower case, runs of `-_.` become one `-`. */
export function normalizeName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[-_.]+/g, '-');
}

export interface ParsedRequirement {
  name: string;
  extras: string[];
  /** PEP 440 specifier set without spaces, '' for any. */
  specifier: string;
  /** The marker after `;`, '' when none. */
  marker: string;
}

const NAME = /^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*/;
const SPEC_CLAUSE = /^(~=|===|==|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+$/;

/** One requirement string, or null when it is not one (a URL, an option, a path, garbage). */
export function parseRequirement(text: string): ParsedRequirement | null {
  const semi = text.indexOf(';');
  const head = (semi >= 0 ? text.slice(0, semi) : text).replace(/\s+#.*$/, '').trim();
  const marker = semi >= 0 ? text.slice(semi + 1).trim() : '';
  const m = NAME.exec(head);
  if (!m) return null;
  let rest = head.slice(m[0].length);
  let extras: string[] = [];
  const ex = /^\[([^\]]*)\]\s*/.exec(rest);
  if (ex) {
    extras = (ex[1] ?? '')
      .split(',')
      .map((e) => normalizeName(e))
      .filter(Boolean);
    rest = rest.slice(ex[0].length);
  }
  // `name @ url`: a direct reference the env cannot take from an index.
  if (rest.startsWith('@')) return null;
  rest = rest.replace(/^\(\s*(.*?)\s*\)$/, '$1').trim();
  const clauses = rest ? rest.split(',').map((c) => c.replace(/\s+/g, '')) : [];
  if (!clauses.every((c) => SPEC_CLAUSE.test(c))) return null;
  return { name: normalizeName(m[1] ?? ''), extras, specifier: clauses.join(','), marker };
}

/** The machine an env is built for, as markers see it. */
export interface MarkerTarget {
  /** `3.11` */
  python: string;
  extras?: readonly string[];
}

/**
 * Whether a marker holds on Linux x86_64 CPython at `target.python`. A marker this reader cannot follow
 * (an unknown variable, a syntax it does not know) holds: a dependency too many is a smaller harm than one missing.
 */
export function markerHolds(marker: string, target: MarkerTarget): boolean {
  if (!marker.trim() || marker.length > 2000) return true;
  try {
    return evaluateMarker(marker, target);
  } catch {
    // Parentheses nested past the stack: a marker no real file writes; the requirement stays.
    return true;
  }
}

function evaluateMarker(marker: string, target: MarkerTarget): boolean {
  const env: Record<string, string> = {
    python_version: target.python,
    python_full_version: `${target.python}.0`,
    sys_platform: 'linux',
    platform_system: 'Linux',
    os_name: 'posix',
    platform_machine: 'x86_64',
    implementation_name: 'cpython',
    platform_python_implementation: 'CPython',
  };
  const tokens = tokenize(marker);
  if (!tokens) return true;
  let i = 0;
  const peek = () => tokens[i];
  const or = (): boolean | null => {
    let v = and();
    while (peek() === 'or') {
      i++;
      const r = and();
      v = v === null || r === null ? null : v || r;
    }
    return v;
  };
  const and = (): boolean | null => {
    let v = atom();
    while (peek() === 'and') {
      i++;
      const r = atom();
      v = v === false || r === false ? false : v === null || r === null ? null : true;
    }
    return v;
  };
  const value = (): { s: string } | null => {
    const t = tokens[i++];
    if (t === undefined) return null;
    if (/^["']/.test(t)) return { s: t.slice(1, -1) };
    if (t === 'extra') return { s: '\0extra' };
    return t in env ? { s: env[t] ?? '' } : null;
  };
  const atom = (): boolean | null => {
    if (peek() === '(') {
      i++;
      const v = or();
      if (peek() === ')') i++;
      return v;
    }
    const a = value();
    let op = tokens[i++];
    if (op === 'not' && peek() === 'in') {
      i++;
      op = 'not in';
    }
    const b = value();
    if (!a || !b || !op) return null;
    if (a.s === '\0extra' || b.s === '\0extra') {
      const wanted = normalizeName(a.s === '\0extra' ? b.s : a.s);
      return (target.extras ?? []).some((e) => normalizeName(e) === wanted) === (op === '==');
    }
    return compare(a.s, op, b.s);
  };
  const v = or();
  return i === tokens.length && v !== null ? v : true;
}

function compare(a: string, op: string, b: string): boolean | null {
  if (op === 'in') return b.includes(a);
  if (op === 'not in') return !b.includes(a);
  // Versions compare as versions (`3.11 >= 3.8`, not as strings); the specifier library does the PEP 440 work.
  if (/^\d/.test(a) && /^\d/.test(b)) return satisfies(a, `${op}${b}`);
  if (op === '==' || op === '===') return a === b;
  if (op === '!=') return a !== b;
  return null;
}

function tokenize(s: string): string[] | null {
  const out: string[] = [];
  const re = /\s*(?:("[^"]*"|'[^']*')|(===|==|!=|<=|>=|~=|<|>|\(|\))|([A-Za-z_][A-Za-z0-9_.]*))/y;
  let pos = 0;
  while (pos < s.length) {
    if (/^\s*$/.test(s.slice(pos))) break;
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) return null;
    out.push(m[1] ?? m[2] ?? m[3] ?? '');
    pos = re.lastIndex;
  }
  return out;
}
