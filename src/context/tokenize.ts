/**
 * The code-aware tokenizer shared by indexing and querying. An identifier yields itself and its parts:
 * `torch.nn.functional.cross_entropy` → torch.nn.functional.cross_entropy, torch, nn, functional,
 * cross_entropy, cross, entropy; `GroupNormalization` → groupnormalization, group, normalization.
 * Words of error messages survive (no stemming, only a short stop list) because reports quote them verbatim.
 */

const STOP = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
  'i',
  'we',
  'you',
  'my',
  'me',
  'when',
  'can',
  'have',
  'has',
  'do',
  'does',
  'from',
  'so',
  // Python keywords and ubiquitous names carry no signal.
  'def',
  'self',
  'return',
  'import',
  'class',
  'none',
  'true',
  'false',
  'else',
  'elif',
  'pass',
  'lambda',
  'args',
  'kwargs',
  'cls',
  'x',
  'y',
]);

/** Splits CamelCase and digits: "ResNet50Block" → res, net, 50, block; "HTTPError" → http, error. */
function camelParts(word: string): string[] {
  return word.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g) ?? [];
}

function push(out: string[], token: string): void {
  const t = token.toLowerCase();
  if (t.length < 2 || t.length > 60 || STOP.has(t)) return;
  out.push(t);
}

const SIMPLE = /^[a-z][a-z0-9]*$/;

/** Appends the tokens of one word (one match of the word pattern) to `out`. */
export function wordTokens(word: string, out: string[]): void {
  // Most words are plain lower-case: skip the splitting work for them.
  if (SIMPLE.test(word)) {
    if (word.length >= 2 && word.length <= 60 && !STOP.has(word)) out.push(word);
    return;
  }
  // "self.x" and "cls.x" are attribute access on the instance: the name is the attribute.
  const dotted = word.replace(/^(?:self|cls)\./, '');
  const segments = dotted.split('.');
  if (segments.length > 1) push(out, dotted);
  for (const segment of segments) {
    const snake = segment.split('_').filter(Boolean);
    if (snake.length > 1 || /[a-z][A-Z]|[A-Z][a-z]/.test(segment)) push(out, segment);
    for (const part of snake) {
      const camel = camelParts(part);
      if (camel.length > 1 && snake.length > 1) push(out, part);
      for (const piece of camel.length ? camel : [part]) push(out, piece);
    }
  }
}

function isIdStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}

function isIdPart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || (c >= 48 && c <= 57);
}

/**
 * Calls `visit` with each word of a text, in order: a dotted identifier (`[A-Za-z_]\w*(\.[A-Za-z_]\w*)*`, ASCII
 * only) or a run of digits. The words of `/[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|[0-9]+/g`, found
 * by a scan over char codes: matchAll made a match object per word, a third of the tokenizer's time.
 */
export function forEachWord(text: string, visit: (word: string) => void): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (isIdStart(c)) {
      const start = i++;
      for (;;) {
        while (i < n && isIdPart(text.charCodeAt(i))) i++;
        // A dot continues the word only when an identifier starts right after it.
        if (i + 1 < n && text.charCodeAt(i) === 46 && isIdStart(text.charCodeAt(i + 1))) i += 2;
        else break;
      }
      visit(text.slice(start, i));
    } else if (c >= 48 && c <= 57) {
      const start = i++;
      while (i < n && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
      visit(text.slice(start, i));
    } else i++;
  }
}

/** Tokens of a text, repeated as often as they occur (BM25 needs term frequency). */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  forEachWord(text, (word) => wordTokens(word, out));
  return out;
}
