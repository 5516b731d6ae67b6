/**
 * A reader of the Python that `setup.py` files are written in, far enough to find literal dependency lists:
 * statements split into logical lines, expressions parsed into a small tree (strings, lists, dicts, names,
 * calls, subscripts, `+`). Nothing is executed; what it cannot follow becomes `other`. Pure.
 */

export type PyExpr =
  | { t: 'str'; v: string }
  | { t: 'list'; items: PyExpr[] }
  | { t: 'dict'; entries: Array<[PyExpr, PyExpr]> }
  | { t: 'name'; id: string }
  | { t: 'attr'; obj: PyExpr; name: string }
  | { t: 'call'; fn: PyExpr; args: PyExpr[]; kwargs: Record<string, PyExpr> }
  | { t: 'sub'; obj: PyExpr; key: PyExpr }
  | { t: 'add'; a: PyExpr; b: PyExpr }
  | { t: 'other' };

/** One logical line: `target op value`, or an expression statement (`target` null). */
export interface PyStatement {
  indent: number;
  line: number;
  target: PyExpr | null;
  op: '=' | '+=' | null;
  value: PyExpr;
}

interface Tok {
  k: 'str' | 'name' | 'num' | 'op' | 'nl';
  v: string;
  line: number;
  col: number;
  /** A string with `{…}` substitutions (an f-string): its value is not known. */
  dynamic?: boolean;
}

const STRING = /([rRbBuUfF]{0,2})('''|"""|'|")/y;

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  let depth = 0;
  while (i < src.length) {
    const c = src[i] ?? '';
    if (c === '\n') {
      if (depth === 0) out.push({ k: 'nl', v: '', line, col: 0 });
      line++;
      lineStart = ++i;
      continue;
    }
    if (c === '\\' && src[i + 1] === '\n') {
      i += 2;
      line++;
      lineStart = i;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\f') {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    const col = i - lineStart;
    STRING.lastIndex = i;
    const s = /[rRbBuUfF'"]/.test(c) ? STRING.exec(src) : null;
    if (s) {
      const prefix = (s[1] ?? '').toLowerCase();
      const q = s[2] ?? '"';
      let j = STRING.lastIndex;
      let text = '';
      while (j < src.length && !src.startsWith(q, j)) {
        if (src[j] === '\\' && !prefix.includes('r')) {
          const e = src[j + 1] ?? '';
          text += e === 'n' ? '\n' : e === 't' ? '\t' : e === '\n' ? '' : e;
          j += 2;
          continue;
        }
        if (src[j] === '\n') {
          if (q.length === 1) break;
          line++;
          lineStart = j + 1;
        }
        text += src[j++];
      }
      i = j + q.length;
      const dynamic = prefix.includes('f') && /\{(?!\{)/.test(text);
      out.push({ k: 'str', v: text, line, col, dynamic });
      continue;
    }
    const name = /[A-Za-z_][A-Za-z0-9_]*/y;
    name.lastIndex = i;
    const n = name.exec(src);
    if (n) {
      out.push({ k: 'name', v: n[0], line, col });
      i = name.lastIndex;
      continue;
    }
    const num = /\d[\d_.eExXoObBjJa-fA-F]*/y;
    num.lastIndex = i;
    const d = num.exec(src);
    if (d) {
      out.push({ k: 'num', v: d[0], line, col });
      i = num.lastIndex;
      continue;
    }
    const op = /\*\*=?|\/\/=?|->|[-+*/%&|^@]=|[=!<>]=|:=|[-+*/%&|^~<>()[\]{},:;.=@]/y;
    op.lastIndex = i;
    const o = op.exec(src);
    const v = o ? o[0] : c;
    if ('([{'.includes(v)) depth++;
    if (')]}'.includes(v)) depth = Math.max(0, depth - 1);
    out.push({ k: 'op', v, line, col });
    i += v.length;
  }
  out.push({ k: 'nl', v: '', line, col: 0 });
  return out;
}

/** The statements of a module, in order (compound headers such as `if x:` are skipped, their bodies kept). */
export function parsePythonStatements(src: string): PyStatement[] {
  const toks = tokenize(src);
  const out: PyStatement[] = [];
  let start = 0;
  for (let i = 0; i < toks.length; i++) {
    if (toks[i]?.k !== 'nl' && !(toks[i]?.k === 'op' && toks[i]?.v === ';')) continue;
    const lineToks = toks.slice(start, i);
    start = i + 1;
    const first = lineToks[0];
    if (!first) continue;
    // `if …:` / `else:` / `with …:` may carry a one-line body after the colon; the header itself is no statement.
    let body = lineToks;
    if (first.k === 'name' && /^(if|elif|else|for|while|with|try|except|finally|def|class|async)$/.test(first.v)) {
      const colon = headerColon(lineToks);
      if (colon < 0) continue;
      body = lineToks.slice(colon + 1);
      if (!body.length || /^(def|class)$/.test(first.v)) continue;
    }
    const stmt = parseStatement(body);
    if (stmt) out.push({ ...stmt, indent: first.col, line: first.line });
  }
  return out;
}

function headerColon(toks: Tok[]): number {
  let depth = 0;
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i];
    if (t?.k !== 'op') continue;
    if ('([{'.includes(t.v)) depth++;
    else if (')]}'.includes(t.v)) depth--;
    else if (t.v === ':' && depth === 0) return i;
  }
  return -1;
}

function parseStatement(toks: Tok[]): Omit<PyStatement, 'indent' | 'line'> | null {
  if (toks[0]?.k === 'name' && /^(import|from|return|raise|assert|del|pass|global|nonlocal|print)$/.test(toks[0].v)) return null;
  const p = new ExprParser(toks);
  const first = p.expr();
  let next = p.peek();
  // `x: list[str] = [...]`: an annotation before the value.
  if (next?.v === ':' && first.t === 'name') {
    p.pos++;
    p.expr();
    next = p.peek();
  }
  if (next?.k === 'op' && (next.v === '=' || next.v === '+=')) {
    p.pos++;
    return { target: first, op: next.v, value: p.expr() };
  }
  return { target: null, op: null, value: first };
}

class ExprParser {
  pos = 0;
  constructor(private readonly toks: Tok[]) {}

  peek(): Tok | undefined {
    return this.toks[this.pos];
  }

  private isOp(v: string): boolean {
    const t = this.peek();
    return t?.k === 'op' && t.v === v;
  }

  /** An expression: `a + b + …` of postfix terms; anything else in it (`if`, `for`, `or`, `*`) makes it `other`. */
  expr(): PyExpr {
    let left = this.postfix();
    while (this.isOp('+')) {
      this.pos++;
      left = { t: 'add', a: left, b: this.postfix() };
    }
    if (this.peek() && !this.atEnd()) {
      this.skipToEnd();
      return { t: 'other' };
    }
    return left;
  }

  /** The end of an expression: a closing bracket, a comma, a colon, `=`, `+=`, or the line's end. */
  private atEnd(): boolean {
    const t = this.peek();
    return !t || (t.k === 'op' && [')', ']', '}', ',', ':', '=', '+='].includes(t.v));
  }

  private skipToEnd(): void {
    let depth = 0;
    while (this.peek()) {
      const t = this.peek()!;
      if (t.k === 'op' && '([{'.includes(t.v)) depth++;
      if (t.k === 'op' && ')]}'.includes(t.v)) {
        if (depth === 0) return;
        depth--;
      }
      if (depth === 0 && t.k === 'op' && [',', ':', '=', '+='].includes(t.v)) return;
      this.pos++;
    }
  }

  private postfix(): PyExpr {
    let e = this.atom();
    for (;;) {
      if (this.isOp('.')) {
        this.pos++;
        const n = this.peek();
        this.pos++;
        e = n?.k === 'name' ? { t: 'attr', obj: e, name: n.v } : { t: 'other' };
      } else if (this.isOp('(')) {
        this.pos++;
        const args: PyExpr[] = [];
        const kwargs: Record<string, PyExpr> = {};
        while (this.peek() && !this.isOp(')')) {
          const t = this.peek()!;
          if (t.k === 'name' && this.toks[this.pos + 1]?.v === '=') {
            this.pos += 2;
            kwargs[t.v] = this.expr();
          } else {
            if (this.isOp('*') || this.isOp('**')) this.pos++;
            args.push(this.expr());
          }
          if (this.isOp(',')) this.pos++;
          else if (!this.isOp(')')) this.skipToEnd();
          if (this.isOp(',')) this.pos++;
        }
        this.pos++;
        e = { t: 'call', fn: e, args, kwargs };
      } else if (this.isOp('[')) {
        this.pos++;
        const key = this.expr();
        while (this.peek() && !this.isOp(']')) this.pos++;
        this.pos++;
        e = { t: 'sub', obj: e, key };
      } else return e;
    }
  }

  private atom(): PyExpr {
    const t = this.peek();
    if (!t) return { t: 'other' };
    if (t.k === 'str') {
      let v = '';
      let dynamic = false;
      // Adjacent literals concatenate: `"torch" ">=2.1"`.
      while (this.peek()?.k === 'str') {
        const s = this.peek()!;
        v += s.v;
        dynamic ||= s.dynamic === true;
        this.pos++;
      }
      return dynamic ? { t: 'other' } : { t: 'str', v };
    }
    if (t.k === 'name') {
      this.pos++;
      return { t: 'name', id: t.v };
    }
    if (t.k === 'op' && '([{'.includes(t.v)) return this.display(t.v);
    this.pos++;
    return { t: 'other' };
  }

  /** `[…]`, `(…)`, `{…}`: a list, tuple, set or dict; a comprehension inside makes it `other`. */
  private display(open: string): PyExpr {
    const close = open === '(' ? ')' : open === '[' ? ']' : '}';
    this.pos++;
    const items: PyExpr[] = [];
    const entries: Array<[PyExpr, PyExpr]> = [];
    let isDict = false;
    let other = false;
    while (this.peek() && !this.isOp(close)) {
      if (this.isOp('*') || this.isOp('**')) this.pos++;
      const item = this.expr();
      if (this.isOp(':')) {
        this.pos++;
        isDict = true;
        entries.push([item, this.expr()]);
      } else items.push(item);
      if (this.isOp(',')) this.pos++;
      else if (!this.isOp(close)) {
        other = true;
        while (this.peek() && !this.isOp(close)) this.pos++;
      }
    }
    this.pos++;
    if (other) return { t: 'other' };
    if (open === '(' && items.length === 1 && !isDict) return items[0] ?? { t: 'other' };
    // `{}` is an empty dict, not a set.
    return isDict || (open === '{' && !items.length) ? { t: 'dict', entries } : { t: 'list', items };
  }
}
