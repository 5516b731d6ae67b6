// What the snippet's model looks like: where it is bound, the values its constructor needs, the inputs it takes.
import { HYPERPARAMETER_DEFAULTS } from '../context/conventions.js';
import { descendants, paramsOf, readsOf, type Analysis, type ClassInfo, type Param } from './scope.js';

const DOWNSAMPLE = /\bnn\.Conv[23]d\([^()]*\bstride\s*=\s*\(?\s*2\b|\b(?:Max|Avg)Pool[23]d\(|\bF\.(?:max|avg)_pool[23]d\(/;

/**
 * How many times the model's code halves its input: each stride-2 convolution or pooling it builds, counted once per
 * call when it is a `self.x` layer called more than once (`self.pool` after each convolution), and each functional pooling.
 */
export function downsamplings(code: string): number {
  let n = 0;
  for (const line of code.split('\n')) {
    if (!DOWNSAMPLE.test(line)) continue;
    const attr = /\bself\.(\w+)\s*=/.exec(line)?.[1];
    const calls = attr ? (code.match(new RegExp(`\\bself\\.${attr}\\s*\\(`, 'g')) ?? []).length : 0;
    n += Math.max(1, calls) * (line.match(new RegExp(DOWNSAMPLE.source, 'g')) ?? []).length;
  }
  return n;
}

/**
 * Input sizes derived from the model's own downsampling (n halvings, downsamplings()): sizes whose feature maps halve
 * evenly and then turn odd (5 wide at the deepest level within 512 pixels, and an odd multiple of 2^(n-1) near 224),
 * where skip connections and concatenations stop lining up. None without downsampling.
 */
export function strideProbeSizes(code: string): number[] {
  const n = downsamplings(code);
  if (!n) return [];
  let deepest = n;
  while (deepest > 1 && 2 ** deepest * 5 > 512) deepest--;
  const unit = 2 ** Math.min(n - 1, 6);
  const odd = Math.round(224 / unit) % 2 ? Math.round(224 / unit) : Math.round(224 / unit) + 1;
  return [2 ** deepest * 5, unit * odd].filter((v, i, all) => v >= 8 && all.indexOf(v) === i);
}

/** A product of integer literals (`32 * 7 * 7`), else null. */
function product(expr: string): number | null {
  const t = expr.trim();
  if (!/^\d+(?:\s*\*\s*\d+)*$/.test(t)) return null;
  return t.split('*').reduce((acc, v) => acc * Number(v), 1);
}

/**
 * The input size the model was built for: its first `nn.Linear` after the convolutions takes C·h·h features, C the
 * last convolution's output channels before it, so the image is h·2^n wide (n halvings). Null when the code does not
 * say (no such Linear, or features that are not C times a square).
 */
export function linearFitSize(code: string): number | null {
  const linear = /\bnn\.Linear\(\s*([^,()]+),/.exec(code);
  if (!linear) return null;
  const before = code.slice(0, linear.index);
  const convs = [...before.matchAll(/\bnn\.Conv2d\(\s*(?:in_channels\s*=\s*)?\w+\s*,\s*(?:out_channels\s*=\s*)?(\d+)/g)];
  const channels = Number(convs.at(-1)?.[1] ?? NaN);
  const features = product(linear[1] ?? '');
  if (!channels || !features || features % channels) return null;
  const side = Math.sqrt(features / channels);
  if (!Number.isInteger(side)) return null;
  const size = side * 2 ** downsamplings(code);
  return size >= 8 && size <= 1024 ? size : null;
}

/** Image sizes the report states (`Resize(224)`, `128x128`, `img_size = 64`), most specific first. */
export function statedImageSizes(text: string): number[] {
  const out: number[] = [];
  const add = (n: number) => {
    if (n >= 8 && n <= 1024 && !out.includes(n)) out.push(n);
  };
  for (const m of text.matchAll(
    /\b(?:Resize|CenterCrop|RandomCrop|RandomResizedCrop|img_size|image_size|input_size|im_size|resolution)\s*[(=:]\s*\(?\s*(\d{2,4})/g,
  ))
    add(Number(m[1]));
  for (const m of text.matchAll(/\b(\d{2,4})\s*[x×]\s*(\d{2,4})\b/g)) if (m[1] === m[2]) add(Number(m[1]));
  for (const m of text.matchAll(/\[\s*\d+\s*,\s*\d+\s*,\s*(\d{2,4})\s*,\s*(\d{2,4})\s*\]/g)) if (m[1] === m[2]) add(Number(m[1]));
  return out;
}

/** The variable that holds the model at module level: assigned from one of the snippet's nn.Module classes. */
export function moduleLevelModel(a: Analysis): { name: string; index: number } | null {
  const modules = new Set(a.classes.filter((c) => c.isModule).map((c) => c.name));
  let named: { name: string; index: number } | null = null;
  for (let i = 0; i < a.statements.length; i += 1) {
    const s = a.statements[i];
    const m = s ? /^(\w+)\s*=\s*([\w.]+)\s*\(/.exec(s.text) : null;
    if (!m?.[1] || !m[2]) continue;
    if (modules.has(m[2])) return { name: m[1], index: i };
    // `model = nn.Linear(3, 1)`, `net = models.resnet18()`: a library model bound to a model-like name.
    if (
      !named &&
      /^(?:model|net|network|classifier|\w+_model|model_\w+)$/i.test(m[1]) &&
      /^(?:nn|torch\.nn|models|torchvision\.models)\.\w+$|^[A-Z]\w*$/.test(m[2])
    )
      named = { name: m[1], index: i };
  }
  return named;
}

/** A value for a constructor parameter, from its name and its uses in `__init__`; null when it cannot be known. */
export function constructorArg(cls: ClassInfo, p: Param, size: number): string | null {
  const init = cls.init;
  const body = init?.childForFieldName('body');
  if (body) {
    for (const n of descendants(body)) {
      if (n.type !== 'assignment' || n.childForFieldName('right')?.text !== p.name) continue;
      const left = n.childForFieldName('left');
      if (left?.type === 'pattern_list' || left?.type === 'tuple_pattern') {
        const names = left.namedChildren.map((c) => c?.text ?? '');
        return `(${names.map((nm) => (/chan/i.test(nm) ? '3' : /class/i.test(nm) ? '10' : String(size))).join(', ')})`;
      }
    }
    if (readsOf(body, p.name).some((r) => r.parent?.type === 'call' && r.parent.childForFieldName('function')?.id === r.id)) return null;
  }
  const name = p.name;
  const stated = HYPERPARAMETER_DEFAULTS[name];
  if (stated && /^[\d.]+$/.test(stated)) return stated;
  if (/chan/i.test(name)) return '3';
  if (/class/i.test(name)) return '10';
  if (/(?:size|dim|feat|num|^n_|len|count|hidden|depth|width|height|units|vocab|gpu|layers|heads)/i.test(name)) return '16';
  if (/(?:rate|drop|prob|eps|lr|momentum|alpha|beta|gamma)/i.test(name)) return '0.1';
  return null;
}

/** `forward`'s parameters beyond the input, all with defaults: the model can be called on one tensor. */
export function callableOnOneInput(cls: ClassInfo): boolean {
  if (!cls.forward) return true;
  const params = cls.forward.childForFieldName('parameters')?.namedChildren ?? [];
  const plain = params.filter((p) => p?.type === 'identifier' || p?.type === 'typed_parameter');
  return plain.length <= 2;
}

/**
 * The sub-layer each input of a multi-input forward goes into first (`forward(self, image, landmarks)` with
 * `self.image_features(image)` and `self.landmark_features(landmarks)`), in parameter order; null when an input
 * goes into no `self.<layer>(...)` call as its first argument.
 */
export function forwardInputs(cls: ClassInfo): { param: string; layer: string }[] | null {
  const fwd = cls.forward;
  const body = fwd?.childForFieldName('body');
  if (!fwd || !body) return null;
  const params = paramsOf(fwd)
    .slice(1)
    .filter((p) => !p.default && !p.splat);
  const out: { param: string; layer: string }[] = [];
  for (const p of params) {
    const call = readsOf(body, p.name)
      .map((r) => {
        // `image`, or a conversion of it (`image.float()`, `image.to(device)`), as the first argument.
        let e = r;
        while (e.parent?.type === 'attribute' && e.parent.parent?.type === 'call' && e.parent.childForFieldName('object')?.id === e.id)
          e = e.parent.parent;
        return e.parent?.type === 'argument_list' && e.parent.namedChildren[0]?.id === e.id ? e.parent.parent : null;
      })
      .find((c) => c?.type === 'call' && /^self\.\w+$/.test(c.childForFieldName('function')?.text ?? ''));
    const layer = call?.childForFieldName('function')?.text.slice('self.'.length);
    if (!layer) return null;
    out.push({ param: p.name, layer });
  }
  return out.length ? out : null;
}

export function usesConv(a: Analysis, cls: ClassInfo, seen = new Set<string>()): boolean {
  if (seen.has(cls.name)) return false;
  seen.add(cls.name);
  const text = cls.node.text;
  if (/\b(?:Conv[23]d|ConvTranspose[23]d|BatchNorm2d|MaxPool2d|AvgPool2d|models\.\w+\()/.test(text)) return true;
  return a.classes.some((c) => c.name !== cls.name && new RegExp(`\\b${c.name}\\b`).test(text) && usesConv(a, c, seen));
}

/** `batch_size=16` in the report's code, else 16. */
export function batchSize(code: string): number {
  const m = /\bbatch_size\s*=\s*(\d{1,4})\b/.exec(code);
  const n = m ? Number(m[1]) : 16;
  return n >= 1 && n <= 256 ? n : 16;
}
