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

const WORD = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|[0-9]+/g;

/** Splits CamelCase and digits: "ResNet50Block" → res, net, 50, block; "HTTPError" → http, error. */
function camelParts(word: string): string[] {
  return word.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g) ?? [];
}

function push(out: string[], token: string): void {
  const t = token.toLowerCase();
  if (t.length < 2 || t.length > 60 || STOP.has(t)) return;
  out.push(t);
}

/** Tokens of a text, repeated as often as they occur (BM25 needs term frequency). */
const SIMPLE = /^[a-z][a-z0-9]*$/;

export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(WORD)) {
    // Most words are plain lower-case: skip the splitting work for them.
    if (SIMPLE.test(m[0])) {
      if (m[0].length >= 2 && m[0].length <= 60 && !STOP.has(m[0])) out.push(m[0]);
      continue;
    }
    // "self.x" and "cls.x" are attribute access on the instance: the name is the attribute.
    const dotted = m[0].replace(/^(?:self|cls)\./, '');
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
  return out;
}
