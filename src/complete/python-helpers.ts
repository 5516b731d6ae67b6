/**
 * Python that tier 0 adds to a script when a value can only be read off the reporter's own model once it
 * exists (the first layer that consumes the input decides its shape and dtype). Every line carries the mark.
 */

export const MARK = '# added by RepGen';

/** Appends the mark to every line of a block (blank lines stay blank). */
export function marked(block: string): string[] {
  return block.split('\n').map((l) => (l.trim() ? `${l}  ${MARK}` : l));
}

/**
 * `repgen_example_input(model, batch, size, length)`: an input for `model`, shaped by the first registered layer
 * that consumes one: Embedding → integer ids (batch, length); Linear(f) → (batch, f); Conv2d(c) → (batch, c,
 * size, size); Conv1d → (batch, c, length); Conv3d → (batch, c, length, size, size); RNN/LSTM/GRU → (batch,
 * length, input_size) or time-first; BatchNorm1d/2d, LayerNorm likewise. A torchvision backbone starts with
 * Conv2d(3, …), so it gets (batch, 3, size, size).
 */
export const EXAMPLE_INPUT_HELPER = `def repgen_example_input(model, batch=2, size=32, length=16):
    """An input shaped by the first layer of \`model\` that consumes one."""
    for m in model.modules():
        if isinstance(m, nn.Embedding):
            return torch.randint(0, m.num_embeddings, (batch, length))
        if isinstance(m, nn.Linear):
            return torch.randn(batch, m.in_features or 10)
        if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
            return torch.randn(batch, m.in_channels, size, size)
        if isinstance(m, (nn.Conv1d, nn.ConvTranspose1d)):
            return torch.randn(batch, m.in_channels, length)
        if isinstance(m, (nn.Conv3d, nn.ConvTranspose3d)):
            return torch.randn(batch, m.in_channels, length, size, size)
        if isinstance(m, (nn.RNN, nn.LSTM, nn.GRU)):
            return torch.randn(batch, length, m.input_size) if m.batch_first else torch.randn(length, batch, m.input_size)
        if isinstance(m, nn.BatchNorm2d):
            return torch.randn(batch, m.num_features, size, size)
        if isinstance(m, nn.BatchNorm1d):
            return torch.randn(batch, m.num_features)
        if isinstance(m, nn.LayerNorm):
            return torch.randn(batch, *m.normalized_shape)
    raise SystemExit('RepGen: cannot infer the model input (no layer that consumes one)')`;

/** Branches of the example-input helper for layers only some code uses, each with the code that calls for it. */
const EXTRA_INPUT_BRANCHES: { uses: RegExp; lines: string[] }[] = [
  {
    // MultiheadAttention(E) takes (length, batch, E), or (batch, length, E) batch-first; a Transformer layer starts with one.
    uses: /\b(?:MultiheadAttention|Transformer\w*)\b/,
    lines: [
      '        if isinstance(m, nn.MultiheadAttention):',
      '            return torch.randn(batch, length, m.embed_dim) if m.batch_first else torch.randn(length, batch, m.embed_dim)',
    ],
  },
  {
    uses: /\bEmbeddingBag\b/,
    lines: ['        if isinstance(m, nn.EmbeddingBag):', '            return torch.randint(0, m.num_embeddings, (batch, length))'],
  },
];

/**
 * The example-input helper for `code`: the layers every snippet may start with, plus the branches for the layers
 * `code` names (attention, EmbeddingBag), checked first (an attention layer contains Linear layers).
 */
export function exampleInputHelper(code: string): string {
  const extra = EXTRA_INPUT_BRANCHES.filter((b) => b.uses.test(code)).flatMap((b) => b.lines);
  if (!extra.length) return EXAMPLE_INPUT_HELPER;
  const loop = '    for m in model.modules():\n';
  return EXAMPLE_INPUT_HELPER.replace(loop, `${loop}${extra.join('\n')}\n`);
}

/** `repgen_output(model, x)`: the model's output on x (a tensor or numpy array), or a (rows, 1) stand-in when the model fails on it. */
export const OUTPUT_HELPER = `def repgen_output(model, x):
    """model(x) without gradients, to shape targets by; when the model fails on x, the report's own call shows it, not this."""
    x = torch.as_tensor(x)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            out = model(x.float() if x.is_floating_point() else x)
        out = out[0] if isinstance(out, (tuple, list)) else out
    except Exception:
        out = torch.zeros(x.shape[0], 1)
    model.train(was_training)
    return out`;

/** `repgen_targets_like(out, kind)`: targets for a loss on `out`: class ids over its dimension 1, 0/1 floats or floats of its shape. */
export const TARGETS_LIKE_HELPER = `def repgen_targets_like(out, kind):
    """Targets for a loss on out: class ids over dimension 1 (one per sample and position), 0/1 floats, or floats of its shape."""
    out = out.detach()
    if kind == 'class':
        classes = max(2, out.shape[1] if out.dim() > 1 else out.shape[-1])
        return torch.randint(0, classes, (out.shape[0],) + tuple(out.shape[2:]))
    if kind == 'binary':
        return torch.randint(0, 2, tuple(out.shape)).float()
    return torch.randn(out.shape)`;

/** `repgen_numpy(t, float64)`: a tensor as the numpy array a report's data would be: float64 (numpy's default) unless told otherwise. */
export const NUMPY_HELPER = `def repgen_numpy(t, float64=True):
    """A tensor as a numpy array; floating values as float64 (numpy's default) unless float64 is False."""
    t = t.detach()
    return (t.double() if float64 and t.is_floating_point() else t).numpy()`;

/**
 * `repgen_targets(model, x, kind)`: targets for `model(x)`: class ids in [0, C) with C the output's last
 * dimension (one per sample) for 'class', standard-normal values of the output's shape for 'float'.
 */
export const TARGETS_HELPER = `def repgen_targets(model, x, kind):
    """Targets for model(x): class ids over the output's last dimension, or floats of the output's shape."""
    was_training = model.training
    model.eval()
    with torch.no_grad():
        out = model(x)
    model.train(was_training)
    out = out[0] if isinstance(out, (tuple, list)) else out
    if kind == 'class':
        return torch.randint(0, out.shape[-1], (x.shape[0],))
    return torch.randn(out.shape)`;

/** Stand-in for `sklearn.model_selection.train_test_split` when scikit-learn is not installed. */
export const TRAIN_TEST_SPLIT_FALLBACK = `try:
    from sklearn.model_selection import train_test_split
except ImportError:
    def train_test_split(*arrays, test_size=0.25, train_size=None, random_state=None, shuffle=True, stratify=None):
        """A small stand-in for scikit-learn's train_test_split (same argument names, same output order)."""
        import random as _random
        n = len(arrays[0])
        n_test = int(test_size * n) if isinstance(test_size, float) else int(test_size)
        idx = list(range(n))
        if shuffle:
            _random.Random(random_state).shuffle(idx)
        test, train = idx[:n_test], idx[n_test:]
        out = []
        for a in arrays:
            pick = (lambda ii: a[ii]) if hasattr(a, 'shape') else (lambda ii: [a[i] for i in ii])
            out += [pick(train), pick(test)]
        return out`;

/** Stand-in for tqdm when it is not installed: iterate without a progress bar. */
export const TQDM_FALLBACK = `try:
    from tqdm import tqdm
except ImportError:
    def tqdm(iterable=None, *args, **kwargs):
        """tqdm is not installed here: iterate without a progress bar."""
        return iterable`;

/** `notebook.tqdm` / `tqdm.notebook` outside a notebook: the console progress bar, or none. */
export const TQDM_NOTEBOOK_FALLBACK = `${TQDM_FALLBACK}
import types
notebook = types.SimpleNamespace(tqdm=tqdm, trange=lambda *a, **k: tqdm(range(*a), **k))`;

/**
 * Images from a folder that exists only on the reporter's machine: torchvision's FakeData through the
 * report's own transforms, with the attributes ImageFolder has.
 */
export const FAKE_IMAGE_FOLDER = `class RepgenFakeImages(torchvision.datasets.FakeData):
    """Random images in place of a folder that exists only on the reporter's machine."""
    def __init__(self, root=None, transform=None, target_transform=None, *args, **kwargs):
        super().__init__(size=32, transform=transform, target_transform=target_transform)
        self.classes = [f'class_{i}' for i in range(self.num_classes)]
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}`;
