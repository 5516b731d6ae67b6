// Pretrained weights need the network, which runs here do not have. Where what the report checks cannot depend on
// the weights' values (a crash, a shape, how many outputs), random weights show the same bug.
import type { Symptom } from '../symptoms/types.js';

const PRETRAINED = /\bpretrained\s*=\s*True\b/g;
/** torchvision's `weights='IMAGENET1K_V1'`, `weights=ResNet50_Weights.DEFAULT`, `weights="DEFAULT"`. */
const WEIGHTS = /\bweights\s*=\s*(?:(['"])[A-Z][\w]*\1|[A-Z]\w*_Weights(?:\.\w+)?)/g;
/** What a report's failing assertion or evidence checks when it is about structure, not values. */
const STRUCTURE = /\blen\s*\(|\.shape\b|\.size\s*\(|\.ndim\b|\.dim\s*\(|\bisinstance\s*\(|\btype\s*\(|\.keys\s*\(|\bhasattr\s*\(/;
/**
 * Structure stated in words (issue 40 item 5): parameter names and groups, layer-decay scales, dtypes, keys, shapes —
 * what a randomly initialised model or synthetic data of the same shapes has too.
 */
const STRUCTURE_WORDS = new RegExp(
  String.raw`\b(?:param(?:eter)?(?:\s+|_)?groups?|(?:\w+_)?(?:groups?|names?|keys?)|(?:parameter|layer|module|key|token)\s+names?|` +
    String.raw`lr_scale|layer[_ ]decay|dtypes?|float(?:16|32|64)|bfloat16|int(?:8|16|32|64)|shapes?|dimensions?|` +
    String.raw`missing|unexpected|out_indices|feature_info|num_features|channels)\b`,
  'i',
);
/** A printed parameter name (`'norm.weight'`, `'reg_token'`): a line listing them shows structure, not values. */
const PARAMETER_NAME = /['"][\w.]*(?:\.weight|\.bias|_token|_embed(?:\.\w+)?|running_mean|running_var)['"]/;
/** Evidence about values a model's weights or the data decide: never structural, whatever words it also has. */
const VALUE_WORDS =
  /\b(?:loss|accuracy|acc|nan|inf|predictions?|logits|probabilit(?:y|ies)|converge[sd]?|mAP|f1|auc|score|precision|recall)\b/i;

/**
 * Whether the report's symptoms hold with any weights and any data of the same shapes: every expected symptom is a
 * crash (an exception, a quoted message, a "should work" call failing), or states a structural check (`assert len(y)
 * == 6`, a shape, parameter groups or names, a dtype). Values (wrong outputs, accuracy, NaN) may depend on them: never.
 */
export function weightsIrrelevant(expected: readonly Pick<Symptom, 'kind' | 'category' | 'evidence'>[]): boolean {
  return (
    expected.length > 0 &&
    expected.every(
      (x) =>
        x.category === 'crash' ||
        (x.kind === 'wrong_values' &&
          (STRUCTURE.test(x.evidence) ||
            ((STRUCTURE_WORDS.test(x.evidence) || PARAMETER_NAME.test(x.evidence)) && !VALUE_WORDS.test(x.evidence)))),
    )
  );
}

/** Keras applications' `weights="imagenet"`. */
const KERAS_WEIGHTS = /\bweights\s*=\s*(['"])imagenet\1/g;

/**
 * `pretrained=True` → `pretrained=False`, torchvision `weights=…` and Keras `weights="imagenet"` → `weights=None`;
 * null when the code loads none.
 */
export function randomWeights(code: string): string | null {
  const out = code.replace(PRETRAINED, 'pretrained=False').replace(WEIGHTS, 'weights=None').replace(KERAS_WEIGHTS, 'weights=None');
  return out === code ? null : out;
}

/** The downloadable datasets of Keras and torchvision, with the shapes of what they return. */
const DATASETS: Record<string, { train: number; test: number; image: [number, number, number]; classes: number }> = {
  mnist: { train: 60000, test: 10000, image: [28, 28, 1], classes: 10 },
  fashion_mnist: { train: 60000, test: 10000, image: [28, 28, 1], classes: 10 },
  cifar10: { train: 50000, test: 10000, image: [32, 32, 3], classes: 10 },
  cifar100: { train: 50000, test: 10000, image: [32, 32, 3], classes: 100 },
};
const TORCHVISION_NAMES: Record<string, string> = {
  MNIST: 'mnist',
  FashionMNIST: 'fashion_mnist',
  CIFAR10: 'cifar10',
  CIFAR100: 'cifar100',
};

/** Keras `load_data()`: random uint8 arrays of the dataset's own shapes (MNIST images have no channel axis there). */
function kerasArrays(name: string): string {
  const d = DATASETS[name];
  if (!d) return '';
  const [h, w, c] = d.image;
  const img = (n: number) => (name.endsWith('mnist') ? `(${n}, ${h}, ${w})` : `(${n}, ${h}, ${w}, ${c})`);
  const lab = (n: number) => (name.startsWith('cifar') ? `(${n}, 1)` : `(${n},)`);
  const part = (n: number) => `(r.integers(0, 256, ${img(n)}, dtype=np.uint8), r.integers(0, ${d.classes}, ${lab(n)}, dtype=np.uint8))`;
  return `(lambda np: (lambda r: (${part(d.train)}, ${part(d.test)}))(np.random.default_rng(0)))(__import__('numpy'))`;
}

/** torchvision's dataset class: FakeData of the same size, image shape and classes, through the report's own transforms. */
function torchvisionFake(name: string): string {
  const d = DATASETS[name];
  if (!d) return '';
  const [h, w, c] = d.image;
  return (
    `(lambda *a, train=True, transform=None, target_transform=None, **k: __import__('torchvision').datasets.FakeData(` +
    `size=${d.train} if train else ${d.test}, image_size=(${c}, ${h}, ${w}), num_classes=${d.classes}, transform=transform, ` +
    `target_transform=target_transform))(`
  );
}

const KERAS_LOAD = /\b(?:(?:tf\.)?keras\.datasets\.)?(mnist|fashion_mnist|cifar10|cifar100)\.load_data\(\s*\)/g;
const TORCHVISION_LOAD = /\b(?:torchvision\.)?(?:datasets\.)?(MNIST|FashionMNIST|CIFAR10|CIFAR100)\s*\((?=[^)]*\bdownload\s*=\s*True)/g;

/**
 * Downloaded datasets (Keras `mnist.load_data()`, torchvision `MNIST(…, download=True)`) as synthetic data of the same
 * shapes; null when the code downloads none. Runs here have no network.
 */
export function syntheticDownloads(code: string): string | null {
  const out = code
    .replace(KERAS_LOAD, (m, name: string) => kerasArrays(name) || m)
    .replace(TORCHVISION_LOAD, (m, cls: string) => torchvisionFake(TORCHVISION_NAMES[cls] ?? '') || m);
  return out === code ? null : out;
}

export const SYNTHETIC_DATA_EDIT =
  'replaced the downloaded dataset with random data of the same shapes, dtype and classes (Keras `load_data()` → random uint8 ' +
  "arrays, torchvision → `FakeData`): runs here have no network, and what the report checks does not depend on the data's values";

export const RANDOM_WEIGHTS_EDIT =
  'loaded no pretrained weights (`pretrained=True` → `pretrained=False`, `weights=…` → `weights=None`): runs here have no network, ' +
  "and what the report checks (a crash, a shape, a count) does not depend on the weights' values";
