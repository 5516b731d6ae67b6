import type { ReportReading, ValueComparison } from './types.js';
import { clip, numbersIn } from './text.js';
import { regexLines } from '../regex.js';

/**
 * Which of a report's printed values a reproduction can be held to, and the comparison itself. Pure.
 *
 * A value is *determined* when the report's code fixes everything it depends on: the code seeds its random
 * generators, or uses no randomness and no outside data. Such values must come back within
 * {@link VALUE_TOLERANCE}. Every other value depends on the reporter's random state (an unseeded weight
 * initialisation, shuffled or random data) or on data only the reporter has; no faithful script can hit it, so
 * only its pattern is compared: NaN stays NaN, infinity stays infinity, zero stays zero.
 */

/** Tolerance for determined values: equal within 5 % of the larger magnitude, or within 0.01. */
export const VALUE_TOLERANCE = { relative: 0.05, absolute: 0.01 } as const;

/** The tolerance in words, as the comment and the docs state it. */
export const VALUE_TOLERANCE_TEXT = `within ${VALUE_TOLERANCE.relative * 100} % or ${VALUE_TOLERANCE.absolute}`;

export type ValueBasis = ValueComparison['basis'];

const SEEDS = regexLines()`
  \b(?:torch\.(?:cuda\.)?manual_seed(?:_all)?|np\.random\.seed|numpy\.random\.seed|random\.seed
  |tf\.random\.set_seed|tf\.set_random_seed|set_seed|seed_everything|keras\.utils\.set_random_seed
  |jax\.random\.(?:PRNGKey|key))\s*\(|\bdefault_rng\s*\(\s*\d
`;
const OUTSIDE_DATA = regexLines()`
    \b(?:open|read_csv|read_json|read_parquet|loadtxt|genfromtxt|ImageFolder|DatasetFolder|load_dataset
    |from_pretrained|load_state_dict|imread|Image\.open)\s*\(|\b(?:np|numpy|torch|pickle
    |joblib)\.load\s*\(|\bdatasets\.[A-Z]\w*\(|\bkeras\.datasets\.|['"](?:\/|\.\/
    |[A-Za-z]:\\)[^'"\n]*\.(?:csv|json|txt|npy|npz|pt|pth|h5|pkl|png|jpe?g|parquet)['"]
  `;
const RANDOMNESS: Array<[RegExp, string]> = [
  [/\btorch\.(?:rand|randn|randint|randperm|normal|bernoulli|multinomial|rand_like|randn_like)\s*\(/, 'random tensors'],
  [/\b(?:np|numpy)\.random\.\w+\s*\(|\brandom\.(?:random|randint|choice|shuffle|uniform|gauss|sample)\s*\(/, 'random numbers'],
  [
    /\bnn\.(?:Linear|Conv[123]d|ConvTranspose[123]d|LSTM|GRU|RNN|Embedding|Bilinear|MultiheadAttention|Transformer\w*|LazyLinear)\s*\(/,
    'random weight initialisation',
  ],
  [/\b(?:Dense|Conv[123]D|LSTM|GRU|Embedding)\s*\(|\bnn\.init\.|\btf\.random\./, 'random weight initialisation'],
  [/\bshuffle\s*=\s*True|\bDropout\s*\(|\bRandom\w+\s*\(/, 'shuffling, dropout or random augmentation'],
];

/** Names a training snippet uses for its model and data: when the code never builds them, they are the reporter's. */
const OUTSIDE_OBJECTS = [
  'model',
  'net',
  'network',
  'train_loader',
  'val_loader',
  'test_loader',
  'dataloader',
  'data_loader',
  'loader',
  'dataset',
  'train_dataset',
  'train_data',
  'y_train',
  'X_train',
  'X',
  'y',
  'features',
  'targets',
  'labels',
  'inputs',
];

/** Whether the code gives `name` a value itself (`name = …`, `for name in`, `name, x = …`, `with … as name`), a parameter not counting. */
function assigned(code: string, name: string): boolean {
  const n = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const item = `[\\w.\\[\\]'"()]+`;
  const assignment = `^\\s*(?:${item}\\s*,\\s*)*${n}\\s*(?:,\\s*${item}\\s*)*(?::[^=\\n]+)?=(?!=)`;
  return new RegExp(`${assignment}|\\bfor\\b[^\\n]*\\b${n}\\b[^\\n]*\\bin\\b|\\bas\\s+${n}\\b|\\bimport\\b[^\\n]*\\b${n}\\b`, 'm').test(
    code,
  );
}

/**
 * Whether `name` is a parameter of a function the code itself calls: then its value is whatever the call passes,
 * which the code builds (or which is checked under its own name), not an object only the reporter has.
 */
function parameterOfCalledFunction(code: string, name: string): boolean {
  for (const m of code.matchAll(/\bdef\s+(\w+)\s*\(([^)]*)\)/g)) {
    const params = (m[2] ?? '').split(',').map((p) =>
      p
        .replace(/[:=][\s\S]*$/, '')
        .replace(/^\s*\*{0,2}/, '')
        .trim(),
    );
    const rest = code.slice(0, m.index) + code.slice((m.index ?? 0) + m[0].length);
    if (params.includes(name) && new RegExp(`(?<![\\w.])${m[1]}\\s*\\(`).test(rest)) return true;
  }
  return false;
}

/** Whether the report's printed values are determined by its code, and why, in words. */
export function valueBasis(report: ReportReading): { basis: ValueBasis; why: string } {
  const code = report.codeBlocks.map((b) => b.code).join('\n');
  if (!code.trim()) return { basis: 'random_state', why: 'the report has no code that shows how its values were made' };
  const data = OUTSIDE_DATA.exec(code);
  if (data)
    return { basis: 'random_state', why: `the values come from data or weights only the reporter has (\`${clip(data[0].trim(), 60)}\`)` };
  const undefinedNames = OUTSIDE_OBJECTS.filter(
    (n) => new RegExp(`\\b${n}\\b`).test(code) && !assigned(code, n) && !parameterOfCalledFunction(code, n),
  );
  if (undefinedNames.length) {
    return {
      basis: 'random_state',
      why: `the values depend on a model or data the report's code uses but never builds (${undefinedNames
        .slice(0, 3)
        .map((n) => `\`${n}\``)
        .join(', ')})`,
    };
  }
  const seed = SEEDS.exec(code);
  if (seed) return { basis: 'determined', why: `the report's code seeds its random generator (\`${seed[0].replace(/\s*\($/, '')}\`)` };
  const sources = new Map<string, string>();
  for (const [re, what] of RANDOMNESS) {
    const m = re.exec(code);
    if (m && !sources.has(what)) sources.set(what, `${what} (\`${m[0].replace(/\s*\($/, '')}\`)`);
  }
  if (sources.size)
    return {
      basis: 'random_state',
      why: `the values depend on the reporter's random state: ${[...sources.values()].join(', ')} with no seed`,
    };
  return { basis: 'determined', why: "the report's code uses no randomness and no outside data" };
}

function closeEnough(a: number, b: number): boolean {
  return Math.abs(a - b) <= Math.max(VALUE_TOLERANCE.absolute, VALUE_TOLERANCE.relative * Math.max(Math.abs(a), Math.abs(b)));
}

/** Losses at chance level for k classes: ln k, what a model that learned nothing gets from cross-entropy. */
const CHANCE_LOSSES = Array.from({ length: 99 }, (_, i) => Math.log(i + 2));

/** The special values a pattern comparison keeps: the ones that are the bug whatever the random state. */
function patternOf(token: string): 'nan' | 'inf' | 'zero' | 'chance' | 'other' {
  if (/nan/i.test(token)) return 'nan';
  if (/inf/i.test(token)) return 'inf';
  const v = Number(token);
  if (v === 0) return 'zero';
  // Only printed with 3+ decimals: "1.0986" is ln 3, "1.1" is just a number.
  if (/\.\d{3,}/.test(token) && CHANCE_LOSSES.some((c) => Math.abs(v - c) <= 5e-4 * c)) return 'chance';
  return 'other';
}

const PATTERN_WORDS: Record<string, string> = { nan: 'NaN', inf: 'infinity', zero: 'zero', chance: 'a chance-level loss (ln k)' };

/** The numbers of a line, NaN and infinity included (the line-shape rule folds only digits). */
function valueTokens(line: string): string[] {
  return line.match(/-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|\b-?nan\b|\b-?inf(?:inity)?\b/gi) ?? numbersIn(line);
}

/**
 * Compares the report's line with a run's line of the same shape. Determined values: each within the
 * tolerance. Random-state values: their pattern (NaN, infinity, zero, a chance-level loss) must agree; a number
 * that is equal on both sides counts as held; every other number is listed as not compared.
 */
export function compareLine(reportLine: string, runLine: string, basis: { basis: ValueBasis; why: string }): ValueComparison {
  const want = valueTokens(reportLine);
  const got = valueTokens(runLine);
  const base = {
    what: "the report's last output line",
    report: clip(reportLine.trim(), 200),
    run: clip(runLine.trim(), 200),
    basis: basis.basis,
  };
  if (want.length !== got.length) return { ...base, agree: false, note: `the lines hold ${want.length} and ${got.length} numbers` };
  if (basis.basis === 'determined') {
    const off = want.findIndex((w, i) => {
      const a = Number(w);
      const b = Number(got[i]);
      if (Number.isNaN(a) || Number.isNaN(b)) return patternOf(w) !== patternOf(got[i] ?? '');
      return !closeEnough(a, b);
    });
    if (off < 0) return { ...base, agree: true, note: `values agree ${VALUE_TOLERANCE_TEXT} (${basis.why})` };
    return {
      ...base,
      agree: false,
      note: `${want[off]} in the report, ${got[off]} in the run: not ${VALUE_TOLERANCE_TEXT}, and these values are determined (${basis.why})`,
    };
  }
  const off = want.findIndex((w, i) => {
    const p = patternOf(w);
    const q = patternOf(got[i] ?? '');
    return (p !== 'other' || q !== 'other') && p !== q;
  });
  if (off >= 0) {
    const p = patternOf(want[off] ?? '');
    return {
      ...base,
      agree: false,
      note: `${want[off]} in the report, ${got[off]} in the run: the pattern differs${p !== 'other' ? ` (the report shows ${PATTERN_WORDS[p]})` : ''}`,
    };
  }
  const kept = [...new Set(want.filter((w) => patternOf(w) !== 'other').map((w) => PATTERN_WORDS[patternOf(w)]))];
  const free = want.filter((w, i) => patternOf(w) === 'other' && w !== got[i]);
  const out: ValueComparison = {
    ...base,
    agree: true,
    note:
      `pattern agrees${kept.length ? ` (${kept.join(', ')} where the report has ${kept.length === 1 ? 'it' : 'them'})` : ''}` +
      (free.length ? `; ${free.join(', ')} not compared: ${basis.why}` : `; every other number is equal (${basis.why})`),
  };
  if (free.length) out.notCompared = free;
  return out;
}
